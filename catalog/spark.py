"""Load a catalog from tables registered in a Spark session, with their keys kept in table properties.

Spark's default catalog rejects ``PRIMARY KEY`` and ``FOREIGN KEY`` constraints on file tables, but it
keeps ``TBLPROPERTIES``, so the keys live there (shared/notes/spark-facts.md, Q8). The columns and
their types come from the session; the keys come from these properties:

- ``ivm.primary_key`` = ``col`` or ``col1,col2`` (a composite key);
- ``ivm.fk.<col>`` = ``table.column``, a one-column foreign key;
- ``ivm.fk.<col1>,<col2>`` = ``table(c1, c2)``, a composite foreign key (the columns pair up in
  order; ``table(column)`` also works for one column);
- ``ivm.static`` = ``true``: the table never changes after it is loaded;
- ``ivm.insert_only`` = ``true``: the table only ever gains rows.

For example::

    CREATE TABLE lineitem (l_orderkey BIGINT, l_partkey INT, l_suppkey INT, l_linenumber INT, ...)
    USING parquet
    TBLPROPERTIES (
      'ivm.primary_key' = 'l_orderkey,l_linenumber',
      'ivm.fk.l_orderkey' = 'orders.o_orderkey',
      'ivm.fk.l_partkey,l_suppkey' = 'partsupp(ps_partkey, ps_suppkey)',
      'ivm.insert_only' = 'true')

Any other ``ivm.*`` property is an error, so a typo cannot silently drop a key. Spark forgets
``NOT NULL`` on file tables, so only key columns are known to be non-null. Names are lower-cased, as
in the DDL loader.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

import attrs
from pyspark.errors import AnalysisException
from pyspark.sql import SparkSession
from pyspark.sql.types import (
    BooleanType,
    ByteType,
    CharType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    ShortType,
    StringType,
    StructField,
    VarcharType,
)

from catalog import types
from catalog.schema import Catalog, CatalogError, Column, ForeignKey, Table, UnknownTableError

PROPERTY_PREFIX = "ivm."
PRIMARY_KEY_PROPERTY = "ivm.primary_key"
FOREIGN_KEY_PREFIX = "ivm.fk."
FLAG_PROPERTIES = ("ivm.static", "ivm.insert_only")

# Spark's byte and short read as int, float as double (catalog/types.py says why).
_SPARK_TYPES: dict[type[DataType], types.DataType] = {
    ByteType: types.INT,
    ShortType: types.INT,
    IntegerType: types.INT,
    LongType: types.BIGINT,
    FloatType: types.DOUBLE,
    DoubleType: types.DOUBLE,
    StringType: types.STRING,
    CharType: types.STRING,
    VarcharType: types.STRING,
    DateType: types.DATE,
    BooleanType: types.BOOLEAN,
}

_FK_TARGET = re.compile(r"^\s*(?P<table>\w+)\s*(?:\.\s*(?P<column>\w+)|\((?P<columns>[^()]*)\))\s*$")


def catalog_from_spark(
    spark: SparkSession, tables: Iterable[str] | None = None, database: str | None = None
) -> Catalog:
    """A validated catalog of ``tables`` (default: every table, not view, of ``database``).

    ``database`` defaults to the session's current database; a name in ``tables`` may also be
    qualified (``db.table``). Every table a foreign key references must be among those loaded.
    """
    names = list(tables) if tables is not None else _table_names(spark, database)
    loaded = [_table_from_spark(spark, _qualified(name, database)) for name in names]
    _check_references_are_loaded(loaded)
    return Catalog.of(loaded)


def _table_names(spark: SparkSession, database: str | None) -> list[str]:
    try:
        listed = spark.catalog.listTables(database)
    except AnalysisException as err:
        raise CatalogError(f"cannot list the tables of database {database!r}: {_first_line(err)}") from None
    return [t.name for t in listed if not t.isTemporary and t.tableType != "VIEW"]


def _qualified(name: str, database: str | None) -> tuple[str, ...]:
    parts = tuple(name.split("."))
    return (database, *parts) if database is not None and len(parts) == 1 else parts


def _table_from_spark(spark: SparkSession, qualified: tuple[str, ...]) -> Table:
    name = qualified[-1].lower()
    quoted = ".".join(f"`{part}`" for part in qualified)
    try:
        schema = spark.table(quoted).schema
        properties = {
            row.key.lower(): row.value for row in spark.sql(f"SHOW TBLPROPERTIES {quoted}").collect()
        }
    except AnalysisException as err:
        raise UnknownTableError(
            f"table {'.'.join(qualified)!r} is not in the Spark session: {_first_line(err)}"
        ) from None
    keys = _keys_from_properties(name, properties)
    columns = tuple(_column(name, field, keys.primary_key) for field in schema.fields)
    return Table(name, columns, keys.primary_key, keys.foreign_keys, keys.static, keys.insert_only)


def _column(table: str, field: StructField, primary_key: tuple[str, ...]) -> Column:
    name = field.name.lower()
    data_type = field.dataType
    if isinstance(data_type, DecimalType):
        column_type = types.decimal(data_type.precision, data_type.scale)
    else:
        column_type = _SPARK_TYPES.get(type(data_type))
    if column_type is None:
        supported = "integers, floats, decimals, strings, dates and booleans"
        raise CatalogError(
            f"table {table}, column {name}: unsupported type {field.dataType.simpleString()} (supported: {supported})"
        )
    return Column(name, column_type, nullable=field.nullable and name not in primary_key)


@attrs.frozen
class _Keys:
    primary_key: tuple[str, ...] = ()
    foreign_keys: tuple[ForeignKey, ...] = ()
    static: bool = False
    insert_only: bool = False


def _keys_from_properties(table: str, properties: Mapping[str, str]) -> _Keys:
    primary_key: tuple[str, ...] = ()
    foreign_keys: list[ForeignKey] = []
    flags = dict.fromkeys(FLAG_PROPERTIES, False)
    for key, value in sorted(properties.items()):
        if not key.startswith(PROPERTY_PREFIX):
            continue
        if key == PRIMARY_KEY_PROPERTY:
            primary_key = _column_list(table, key, value)
        elif key in flags:
            flags[key] = _flag(table, key, value)
        elif key.startswith(FOREIGN_KEY_PREFIX):
            columns = _column_list(table, key, key.removeprefix(FOREIGN_KEY_PREFIX))
            foreign_keys.append(_foreign_key(table, key, columns, value))
        else:
            raise CatalogError(
                f"table {table}: unknown property {key!r} (known: {PRIMARY_KEY_PROPERTY}, "
                f"{FOREIGN_KEY_PREFIX}<columns>, {', '.join(FLAG_PROPERTIES)})"
            )
    return _Keys(primary_key, tuple(foreign_keys), flags["ivm.static"], flags["ivm.insert_only"])


def _column_list(table: str, key: str, text: str) -> tuple[str, ...]:
    columns = tuple(part.strip().lower() for part in text.split(","))
    if not all(columns):
        raise CatalogError(
            f"table {table}, property {key!r}: {text!r} is not a comma-separated list of columns"
        )
    return columns


def _foreign_key(table: str, key: str, columns: tuple[str, ...], target: str) -> ForeignKey:
    match = _FK_TARGET.match(target)
    if match is None:
        raise CatalogError(
            f"table {table}, property {key!r}: {target!r} is neither 'table.column' nor 'table(column, ...)'"
        )
    ref_columns = (
        (match["column"].lower(),) if match["column"] else _column_list(table, key, match["columns"])
    )
    return ForeignKey(table, columns, match["table"].lower(), ref_columns)


def _flag(table: str, key: str, value: str) -> bool:
    if value.strip().lower() not in ("true", "false"):
        raise CatalogError(f"table {table}, property {key!r}: {value!r} is neither 'true' nor 'false'")
    return value.strip().lower() == "true"


def _check_references_are_loaded(tables: list[Table]) -> None:
    """Name the property at fault, which ``Catalog.of``'s unknown-table error could not."""
    loaded = {t.name for t in tables}
    for table in tables:
        for fk in table.foreign_keys:
            if fk.ref_table not in loaded:
                raise UnknownTableError(
                    f"table {table.name}, property '{FOREIGN_KEY_PREFIX}{','.join(fk.columns)}': foreign key {fk} "
                    f"references table {fk.ref_table!r}, which is not loaded (loaded: {', '.join(sorted(loaded))})"
                )


def _first_line(err: Exception) -> str:
    return str(err).splitlines()[0] if str(err) else type(err).__name__
