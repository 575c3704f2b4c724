"""Load a catalog from tables registered in a Spark session, with their keys kept in table properties.

Spark's default catalog rejects ``PRIMARY KEY`` and ``FOREIGN KEY`` constraints on file tables, but it
keeps ``TBLPROPERTIES``, so the keys live there, read by ``catalog/properties.py`` (which lists them:
``ivm.primary_key``, ``ivm.fk.<col>``, ``ivm.fd.<col>``, ``ivm.static``, ``ivm.insert_only``).

For example::

    CREATE TABLE lineitem (l_orderkey BIGINT, l_partkey INT, l_suppkey INT, l_linenumber INT, ...)
    USING parquet
    TBLPROPERTIES (
      'ivm.primary_key' = 'l_orderkey,l_linenumber',
      'ivm.fk.l_orderkey' = 'orders.o_orderkey',
      'ivm.fk.l_partkey,l_suppkey' = 'partsupp(ps_partkey, ps_suppkey)',
      'ivm.insert_only' = 'true')

Spark forgets ``NOT NULL`` on file tables, so only key columns are known to be non-null. Names are
lower-cased, as in the DDL loader.
"""

from __future__ import annotations

from collections.abc import Iterable

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
    TimestampNTZType,
    TimestampType,
    VarcharType,
)

from catalog import types
from catalog.properties import FOREIGN_KEY_PREFIX, table_properties
from catalog.schema import Catalog, CatalogError, Column, Table, UnknownTableError

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
    TimestampType: types.TIMESTAMP,
    TimestampNTZType: types.TIMESTAMP_NTZ,
    BooleanType: types.BOOLEAN,
}


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
    keys = table_properties(name, properties)
    columns = tuple(_column(name, field, keys.primary_key) for field in schema.fields)
    return Table(
        name, columns, keys.primary_key, keys.foreign_keys, keys.static, keys.insert_only, keys.functional_dependencies,
        keys.rows,
    )


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
