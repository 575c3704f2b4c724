"""Load a catalog from DDL text: ``CREATE TABLE`` statements with their keys, parsed by sqlglot.

Table-level ``PRIMARY KEY (...)`` / ``FOREIGN KEY (...) REFERENCES t (...)`` and the column-level
forms (``a INT PRIMARY KEY``, ``b INT REFERENCES t(x)``) are understood. A foreign key without a
column list references the target's primary key.

``TBLPROPERTIES`` carry the facts SQL has no constraint for, in the same ``ivm.*`` form as a Spark
table's properties (``catalog/properties.py``): declared functional dependencies, static and
insert-only tables (keys may be given there too, but not both ways)::

    CREATE TABLE location (locn INT, zip INT, PRIMARY KEY (locn))
    TBLPROPERTIES ('ivm.fd.zip' = 'locn', 'ivm.static' = 'true');
"""

from __future__ import annotations

import attrs
import sqlglot
from sqlglot import exp

from catalog.properties import table_properties
from catalog.schema import Catalog, CatalogError, Column, ForeignKey, Table
from catalog.types import DataType, IntervalType, TypeParseError, UnsupportedType, parse_type


def column_type(data_type: exp.DataType) -> DataType | None:
    """The catalog type of a sqlglot column type (``DECIMAL(15,2)``, ``VARCHAR(25)``...), None when unsupported.

    >>> from sqlglot import exp
    >>> [str(column_type(exp.DataType.build(t, dialect="spark"))) for t in ("DECIMAL(15,2)", "VARCHAR(25)", "TIMESTAMP")]
    ['decimal(15,2)', 'string', 'timestamp']
    >>> column_type(exp.DataType.build("BINARY")) is None
    True
    """
    if data_type.expressions and data_type.is_type(*exp.DataType.TEMPORAL_TYPES):
        return None  # TIMESTAMP(3): Spark has no timestamp precision
    try:
        return parse_type(data_type.sql(dialect="spark"))
    except TypeParseError:
        return None


def _column_type(data_type: exp.DataType) -> DataType | UnsupportedType:
    """The column's catalog type; a type spark-ivm lacks is kept as written (Spark's spelling), so the
    table stays usable and only the views that read the column are refused (catalog/schema.py)."""
    found = column_type(data_type)
    # an interval is a type of expressions here, not of stored columns
    return UnsupportedType(data_type.sql(dialect="spark")) if found is None or isinstance(found, IntervalType) else found


def _names(nodes) -> tuple[str, ...]:
    return tuple(n.name.lower() for n in nodes)


def _reference(table: str, fk_columns: tuple[str, ...], ref: exp.Reference) -> ForeignKey:
    target = ref.this
    if isinstance(target, exp.Schema):
        return ForeignKey(table, fk_columns, target.this.name.lower(), _names(target.expressions))
    return ForeignKey(table, fk_columns, target.name.lower(), ())


def _table_from_create(create: exp.Create) -> Table:
    schema = create.this
    if not isinstance(schema, exp.Schema):
        raise CatalogError(f"CREATE TABLE without a column list is not supported: {create.sql()[:80]}")
    name = schema.this.name.lower()
    columns: list[Column] = []
    unsupported: list[Column] = []
    primary_key: tuple[str, ...] = ()
    foreign_keys: list[ForeignKey] = []
    for item in schema.expressions:
        if isinstance(item, exp.ColumnDef):
            col = item.this.name.lower()
            not_null = False
            for constraint in item.args.get("constraints") or []:
                kind = constraint.args.get("kind")
                if isinstance(kind, exp.PrimaryKeyColumnConstraint):
                    if primary_key:
                        raise CatalogError(f"table {name} declares more than one primary key")
                    primary_key = (col,)
                    not_null = True
                elif isinstance(kind, exp.NotNullColumnConstraint):
                    not_null = True
                elif isinstance(kind, exp.Reference):
                    foreign_keys.append(_reference(name, (col,), kind))
            column = Column(col, _column_type(item.args["kind"]), nullable=not not_null)
            (unsupported if isinstance(column.type, UnsupportedType) else columns).append(column)
        elif isinstance(item, exp.PrimaryKey):
            if primary_key:
                raise CatalogError(f"table {name} declares more than one primary key")
            primary_key = _names(item.expressions)
        elif isinstance(item, exp.ForeignKey):
            foreign_keys.append(_reference(name, _names(item.expressions), item.args["reference"]))
        else:
            raise CatalogError(f"table {name}: unsupported table element {item.sql()!r}")
    declared = table_properties(name, _properties(create))
    if primary_key and declared.primary_key:
        raise CatalogError(f"table {name} declares its primary key both as a constraint and as ivm.primary_key")
    primary_key = primary_key or declared.primary_key
    key_set = set(primary_key)
    columns = [Column(c.name, c.type, nullable=c.nullable and c.name not in key_set) for c in columns]
    return Table(
        name, tuple(columns), primary_key, tuple(foreign_keys) + declared.foreign_keys,
        declared.static, declared.insert_only, declared.functional_dependencies, declared.rows, tuple(unsupported),
    )


def _properties(create: exp.Create) -> dict[str, str]:
    """The ``TBLPROPERTIES ('key' = 'value', ...)`` of a ``CREATE TABLE``, keys lower-cased."""
    found = create.args.get("properties")
    return {
        prop.name.lower(): prop.args["value"].name
        for prop in (found.expressions if found else ())
        if isinstance(prop, exp.Property) and isinstance(prop.this, exp.Literal)
    }


def _resolve_default_references(tables: list[Table]) -> list[Table]:
    """A ``REFERENCES t`` without columns means t's primary key."""
    by_name = {t.name: t for t in tables}
    resolved = []
    for table in tables:
        fks = []
        for fk in table.foreign_keys:
            if not fk.ref_columns:
                if fk.ref_table not in by_name:
                    raise CatalogError(f"foreign key {fk}: unknown table {fk.ref_table!r}")
                if not by_name[fk.ref_table].primary_key:
                    raise CatalogError(f"foreign key {fk}: table {fk.ref_table} has no primary key to reference")
                fk = ForeignKey(fk.table, fk.columns, fk.ref_table, by_name[fk.ref_table].primary_key)
            fks.append(fk)
        resolved.append(attrs.evolve(table, foreign_keys=tuple(fks)))
    return resolved


def catalog_from_ddl(text: str) -> Catalog:
    """Parse every ``CREATE TABLE`` in ``text`` into a validated catalog."""
    try:
        statements = sqlglot.parse(text, read="spark")
    except sqlglot.errors.ParseError as err:
        raise CatalogError(f"cannot parse DDL: {err}") from err
    tables = []
    for statement in statements:
        # A comment after the last statement parses as a bare Semicolon carrying the comment.
        if statement is None or isinstance(statement, exp.Semicolon):
            continue
        if not (isinstance(statement, exp.Create) and statement.kind == "TABLE"):
            raise CatalogError(f"only CREATE TABLE statements are allowed in a catalog file, got: {statement.sql()[:80]}")
        tables.append(_table_from_create(statement))
    if not tables:
        raise CatalogError("the DDL defines no table")
    return Catalog.of(_resolve_default_references(tables))
