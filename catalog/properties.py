"""The ``ivm.*`` table properties that carry keys, dependencies and flags, read the same way for Spark
tables (``SHOW TBLPROPERTIES``) and for DDL text (``TBLPROPERTIES (...)`` of a ``CREATE TABLE``).

Spark's default catalog rejects ``PRIMARY KEY`` and ``FOREIGN KEY`` constraints on file tables, but it
keeps ``TBLPROPERTIES`` (shared/notes/spark-facts.md, Q8), so the facts live there:

- ``ivm.primary_key`` = ``col`` or ``col1,col2`` (a composite key);
- ``ivm.fk.<col>`` = ``table.column``, a one-column foreign key;
- ``ivm.fk.<col1>,<col2>`` = ``table(c1, c2)``, a composite foreign key (the columns pair up in
  order; ``table(column)`` also works for one column);
- ``ivm.fd.<col>`` or ``ivm.fd.<col1>,<col2>`` = ``c3`` or ``c3,c4``: a declared functional
  dependency ``col1,col2 → c3,c4`` within the table (Olteanu §4.4). A primary key's dependency
  (key → every column) is implied and need not be declared;
- ``ivm.static`` = ``true``: the table never changes after it is loaded;
- ``ivm.insert_only`` = ``true``: the table only ever gains rows;
- ``ivm.rows`` = ``1000000``: an estimate of the row count, a statistic for cost models (the view
  tree's choice of variable order, ``planner/ir/variable_orders.py``); nothing relies on it for
  correctness.

Any other ``ivm.*`` property is an error, so a typo cannot silently drop a key. Names are
lower-cased, as in the DDL loader.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import attrs

from catalog.schema import CatalogError, ForeignKey, FunctionalDependency

PROPERTY_PREFIX = "ivm."
PRIMARY_KEY_PROPERTY = "ivm.primary_key"
FOREIGN_KEY_PREFIX = "ivm.fk."
DEPENDENCY_PREFIX = "ivm.fd."
FLAG_PROPERTIES = ("ivm.static", "ivm.insert_only")
ROWS_PROPERTY = "ivm.rows"

_FK_TARGET = re.compile(r"^\s*(?P<table>\w+)\s*(?:\.\s*(?P<column>\w+)|\((?P<columns>[^()]*)\))\s*$")


@attrs.frozen
class TableProperties:
    """What a table's ``ivm.*`` properties declare."""

    primary_key: tuple[str, ...] = ()
    foreign_keys: tuple[ForeignKey, ...] = ()
    functional_dependencies: tuple[FunctionalDependency, ...] = ()
    static: bool = False
    insert_only: bool = False
    rows: int | None = None


def table_properties(table: str, properties: Mapping[str, str]) -> TableProperties:
    """Read the ``ivm.*`` entries of ``properties`` (keys already lower-cased); others are ignored."""
    primary_key: tuple[str, ...] = ()
    foreign_keys: list[ForeignKey] = []
    dependencies: list[FunctionalDependency] = []
    flags = dict.fromkeys(FLAG_PROPERTIES, False)
    rows = None
    for key, value in sorted(properties.items()):
        if not key.startswith(PROPERTY_PREFIX):
            continue
        if key == PRIMARY_KEY_PROPERTY:
            primary_key = column_list(table, key, value)
        elif key in flags:
            flags[key] = _flag(table, key, value)
        elif key == ROWS_PROPERTY:
            rows = _count(table, key, value)
        elif key.startswith(FOREIGN_KEY_PREFIX):
            columns = column_list(table, key, key.removeprefix(FOREIGN_KEY_PREFIX))
            foreign_keys.append(_foreign_key(table, key, columns, value))
        elif key.startswith(DEPENDENCY_PREFIX):
            determinant = column_list(table, key, key.removeprefix(DEPENDENCY_PREFIX))
            dependencies.append(FunctionalDependency(table, determinant, column_list(table, key, value)))
        else:
            raise CatalogError(
                f"table {table}: unknown property {key!r} (known: {PRIMARY_KEY_PROPERTY}, "
                f"{FOREIGN_KEY_PREFIX}<columns>, {DEPENDENCY_PREFIX}<columns>, {', '.join(FLAG_PROPERTIES)}, {ROWS_PROPERTY})"
            )
    return TableProperties(
        primary_key, tuple(foreign_keys), tuple(dependencies), flags["ivm.static"], flags["ivm.insert_only"], rows
    )


def column_list(table: str, key: str, text: str) -> tuple[str, ...]:
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
        (match["column"].lower(),) if match["column"] else column_list(table, key, match["columns"])
    )
    return ForeignKey(table, columns, match["table"].lower(), ref_columns)


def _flag(table: str, key: str, value: str) -> bool:
    if value.strip().lower() not in ("true", "false"):
        raise CatalogError(f"table {table}, property {key!r}: {value!r} is neither 'true' nor 'false'")
    return value.strip().lower() == "true"


def _count(table: str, key: str, value: str) -> int:
    if not value.strip().isdigit():
        raise CatalogError(f"table {table}, property {key!r}: {value!r} is not a non-negative integer")
    return int(value)
