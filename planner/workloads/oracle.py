"""Recompute a query from scratch in DuckDB over the current table contents: the check of every
maintained result (tests, demo). DuckDB is imported only here.

ORDER BY ... LIMIT is evaluated here in Python with the same tie-break the maintained top-k uses
(the whole row), since SQL leaves ties at the limit unspecified.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import duckdb
import pyarrow as pa
import sqlglot
from sqlglot import exp

from catalog.schema import Catalog
from operators.runtime.stream_format import arrow_from_rows


def _nulls_first(value):
    return (value is not None, value)


class DuckDBOracle:
    """One in-memory DuckDB database holding the catalog's tables; close it (or use ``with``) when done.

    A connection still open when the interpreter exits makes DuckDB's bindings print a page of
    "nanobind: leaked" warnings, so every user closes it explicitly.
    """

    def __init__(self, catalog: Catalog):
        self.catalog = catalog
        self.connection = duckdb.connect()

    def close(self) -> None:
        self.connection.close()

    def __enter__(self) -> DuckDBOracle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def load(self, tables: Mapping[str, list[tuple]]) -> None:
        """Replace the contents of every catalog table (absent tables become empty)."""
        for name, table in self.catalog.tables.items():
            data: pa.Table = arrow_from_rows(list(tables.get(name, ())), table, "oracle")
            self.connection.register(f"_{name}_arrow", data)
            self.connection.execute(f"CREATE OR REPLACE TABLE {name} AS SELECT * FROM _{name}_arrow")
            self.connection.unregister(f"_{name}_arrow")

    def query(self, sql: str) -> list[tuple]:
        """The query's rows; ORDER BY/LIMIT applied in Python with the top-k's deterministic tie-break."""
        tree = sqlglot.parse_one(sql, read="spark")
        order = tree.args.get("order")
        limit = tree.args.get("limit")
        names = [s.alias_or_name for s in tree.expressions]
        if order is not None:
            tree.set("order", None)
        if limit is not None:
            tree.set("limit", None)
        rows = [tuple(float(v) if _is_decimal(v) else v for v in row) for row in self.connection.execute(tree.sql(dialect="duckdb")).fetchall()]
        rows.sort(key=lambda r: tuple(_nulls_first(v) for v in r))
        if order is not None:
            for key in reversed(order.expressions):
                name = key.this.alias_or_name if isinstance(key.this, exp.Column) else key.this.sql()
                position = names.index(name)
                rows.sort(key=lambda r, p=position: _nulls_first(r[p]), reverse=bool(key.args.get("desc")))
        if limit is not None:
            rows = rows[: int(limit.expression.this)]
        return rows


def _is_decimal(value) -> bool:
    return type(value).__name__ == "Decimal"


def rows_close(actual: list[tuple], expected: list[tuple], rel: float = 1e-9, abs_tol: float = 1e-6) -> bool:
    if len(actual) != len(expected):
        return False
    for a, e in zip(actual, expected, strict=True):
        if len(a) != len(e):
            return False
        for x, y in zip(a, e, strict=True):
            if isinstance(x, float) or isinstance(y, float):
                if x is None or y is None or not math.isclose(x, y, rel_tol=rel, abs_tol=abs_tol):
                    return False
            elif x != y:
                return False
    return True


def assert_rows_match(actual: list[tuple], expected: list[tuple], context: str) -> None:
    if rows_close(sorted_rows(actual), sorted_rows(expected)):
        return
    missing = [r for r in expected if r not in actual][:5]
    extra = [r for r in actual if r not in expected][:5]
    raise AssertionError(f"{context}: {len(actual)} rows maintained vs {len(expected)} recomputed; "
                         f"first missing {missing}; first extra {extra}")


def sorted_rows(rows: list[tuple]) -> list[tuple]:
    return sorted(rows, key=lambda r: tuple(_nulls_first(round(v, 4) if isinstance(v, float) else v) for v in r))
