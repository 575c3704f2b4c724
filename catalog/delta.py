"""Load a catalog from Delta Lake tables, read with delta-rs (``deltalake``): no Spark, no JVM.

A Delta table's schema gives its columns; its table properties (Delta's ``configuration``) give its
keys, with the same ``ivm.*`` properties as a Spark table (``catalog/properties.py``)::

    DeltaTable("/data/orders").alter.set_table_properties(
        {"ivm.primary_key": "o_orderkey", "ivm.fk.o_custkey": "customer.c_custkey"}, raise_if_not_exists=False)

(Spark's Delta keeps such ``TBLPROPERTIES`` too.) Delta's type names are Spark's (``long``, ``integer``,
``short``, ``decimal(p,s)``, ``timestamp``, ``timestamp_ntz``...) and read as ``catalog/types.py``
reads Spark's; a column of a type spark-ivm lacks (``binary``, a struct, an array, a map) is kept
aside as an unsupported column, refused only by a view that reads it. Names are lower-cased, as in
the DDL loader.
"""

from __future__ import annotations

from collections.abc import Mapping

from deltalake import DeltaTable

from catalog.properties import table_properties
from catalog.schema import Catalog, CatalogError, Column, Table
from catalog.types import IntervalType, TypeParseError, UnsupportedType, parse_type


def catalog_from_delta(paths: Mapping[str, str], storage_options: Mapping[str, str] | None = None) -> Catalog:
    """A validated catalog of the Delta tables at ``paths`` (table name → table path or URI)."""
    return Catalog.of(delta_table(name, open_delta(path, storage_options)) for name, path in paths.items())


def open_delta(path: str, storage_options: Mapping[str, str] | None = None, version: int | None = None) -> DeltaTable:
    """The Delta table at ``path`` (its latest version, or ``version``); a path that holds none is a
    ``CatalogError`` naming it."""
    try:
        return DeltaTable(path, version=version, storage_options=dict(storage_options or {}))
    except Exception as err:  # deltalake raises TableNotFoundError and friends, all with a useful message
        raise CatalogError(f"no Delta table at {path}: {str(err).splitlines()[0]}") from None


def delta_table(name: str, table: DeltaTable) -> Table:
    """The catalog table ``name`` of the Delta table ``table``: its columns, keys and flags."""
    name = name.lower()
    properties = {key.lower(): value for key, value in table.metadata().configuration.items() if value is not None}
    keys = table_properties(name, properties)
    columns, unsupported = [], []
    for field in table.schema().fields:
        column_name = field.name.lower()
        column_type = _column_type(field.type)
        nullable = field.nullable and column_name not in keys.primary_key
        column = Column(column_name, column_type, nullable=nullable)
        (unsupported if isinstance(column_type, UnsupportedType) else columns).append(column)
    if not columns:
        raise CatalogError(f"Delta table {name} has no column of a type spark-ivm supports")
    return Table(name, tuple(columns), keys.primary_key, keys.foreign_keys, keys.static, keys.insert_only,
                 keys.functional_dependencies, keys.rows, tuple(unsupported))


def _column_type(delta_type) -> object:
    """A Delta field type as a catalog type: a primitive type by its (Spark) name, anything else unsupported."""
    text = getattr(delta_type, "type", None)
    if not isinstance(text, str):  # a struct, array or map type
        return UnsupportedType(str(delta_type))
    try:
        parsed = parse_type(text)
    except TypeParseError:
        return UnsupportedType(text)
    return UnsupportedType(text) if isinstance(parsed, IntervalType) else parsed
