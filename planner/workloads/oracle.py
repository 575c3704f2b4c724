"""Recompute a query from scratch over the tables *as the stream defines them*: the check of every
maintained result (tests, demo). DuckDB is imported only here; ``spark_reference.py`` does the same
with ``spark.sql``.

The reference must not share anything with the engine it checks, so it reads the base tables from
the stream itself (``StreamTables``: every update with its ``_seq`` and ``_op``), never from the
validator's state: the table as of ``_seq <= s`` is ``SELECT cols ... GROUP BY cols HAVING
sum(_op) > 0`` repeated ``sum(_op)`` times, recomputed by the reference engine after every batch.
DECIMAL columns are DECIMAL there (``reference_types``), so the reference is exact.

ORDER BY is checked, not sorted away: the reference keeps its own order and the sort-key values of
every row (``Reference.tie_groups``); the maintained rows must come in the same sequence of tie
groups, each group equal as a multiset (SQL does not order rows within a tie). LIMIT is applied
after that: rows of the tie group cut by the limit may be any of its members (Spark's choice and
the maintained top-k's may differ), so only that group is compared as a subset.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal
from pathlib import Path

import attrs
import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import sqlglot
from sqlglot import exp
from sqlglot.dialects.duckdb import DuckDB

from catalog.schema import Catalog, Table
from catalog.types import parse_type
from operators.doubles import canonical
from operators.runtime.column_types import arrow_type as column_arrow_type
from operators.runtime.stream import OP_COLUMN, SEQ_COLUMN, Update, arrow_from_rows
from planner.ir.timestamps import DEFAULT_TIME_ZONE

_ORDER_KEY_PREFIX = "__ivm_order_"
_COPIES = "__ivm_copies"

def reference_types(catalog: Catalog) -> dict[str, dict[str, str]]:
    """The Spark SQL type of each column (``decimal(15,2)``, ``int``, ``string``...): the catalog's."""
    return {name: {column.name: str(column.type) for column in table.columns} for name, table in catalog.tables.items()}


def arrow_type(spark_type: str) -> pa.DataType:
    """The Arrow type the reference holds a column of ``spark_type`` in (the stream format's)."""
    return column_arrow_type(parse_type(spark_type))


@attrs.frozen
class StreamTables:
    """The change stream as one Arrow table per base table: its columns with their exact reference
    types, then ``_seq`` and ``_op``. What both references read; nothing of the engine's state."""

    tables: Mapping[str, pa.Table]

    @classmethod
    def from_updates(cls, catalog: Catalog, updates: Iterable[Update]) -> StreamTables:
        """The stream of ``updates`` (tables without updates are empty)."""
        by_table: dict[str, list[Update]] = {name: [] for name in catalog.tables}
        for update in updates:
            by_table[catalog.table(update.table).name].append(update)
        types = reference_types(catalog)
        return cls({name: _stream_table(catalog.table(name), table_updates, types[name])
                    for name, table_updates in by_table.items()})

    @classmethod
    def from_directory(cls, stream_dir: Path | str, catalog: Catalog) -> StreamTables:
        """The stream files ``ivm run --stream`` reads, each cast to the reference types (a missing
        table is empty)."""
        stream_dir = Path(stream_dir)
        types = reference_types(catalog)
        tables = {}
        for name, table in catalog.tables.items():
            path = next((p for p in (stream_dir / f"{name}.parquet", stream_dir / name) if p.exists()), None)
            schema = _stream_schema(table, types[name])
            if path is None:
                tables[name] = schema.empty_table()
                continue
            data = pq.read_table(path)
            tables[name] = pa.Table.from_arrays(
                [data[field.name].cast(field.type) for field in schema], schema=schema)
        return cls(tables)

    def write(self, directory: Path | str) -> dict[str, Path]:
        """One Parquet file per table under ``directory`` (for Spark to read); their paths by table."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        paths = {name: directory / f"{name}.parquet" for name in self.tables}
        for name, data in self.tables.items():
            pq.write_table(data, paths[name])
        return paths


def _stream_schema(table: Table, types: Mapping[str, str]) -> pa.Schema:
    return pa.schema([*(pa.field(c.name, arrow_type(types[c.name])) for c in table.columns),
                      pa.field(SEQ_COLUMN, pa.int64()), pa.field(OP_COLUMN, pa.int64())])


def _stream_table(table: Table, updates: Sequence[Update], types: Mapping[str, str]) -> pa.Table:
    schema = _stream_schema(table, types)
    data = arrow_from_rows([u.row for u in updates], table, "the reference's stream")
    columns = [data[c.name].cast(schema.field(c.name).type) for c in table.columns]
    columns += [pa.array([u.seq for u in updates], pa.int64()), pa.array([u.op for u in updates], pa.int64())]
    return pa.Table.from_arrays(columns, schema=schema)


@attrs.frozen
class Reference:
    """A query's recomputed result in the reference's order, with what the comparison needs.

    ``rows`` are all rows (no LIMIT applied); ``tie_groups`` the sizes of the runs of equal sort-key
    values in that order (one group holding every row when there is no ORDER BY); ``limit`` the
    query's LIMIT, if any.
    """

    rows: tuple[tuple, ...]
    tie_groups: tuple[int, ...]
    limit: int | None

    @property
    def visible(self) -> list[tuple]:
        """The rows the query returns: LIMIT applied, ties at the limit broken the reference's way."""
        return list(self.rows if self.limit is None else self.rows[: self.limit])

    def is_informative(self) -> bool:
        """True when the result holds a non-NULL value: an empty result, or a global aggregate's
        row of NULLs over no input, would let a wrong engine pass the comparison."""
        return any(value is not None for row in self.visible for value in row)


@attrs.frozen
class OrderedQuery:
    """A query rewritten for a reference: no LIMIT, and every ORDER BY key that is not an output
    column selected after the output columns, so tie groups can be read off the rows."""

    tree: exp.Expression
    width: int | None  # the output columns before the hidden sort keys; None: no hidden key, all of them
    key_positions: tuple[int, ...]
    limit: int | None

    @classmethod
    def parse(cls, sql: str) -> OrderedQuery:
        tree = sqlglot.parse_one(sql, read="spark")
        names = [select.alias_or_name for select in tree.selects]
        order, limit = tree.args.get("order"), tree.args.get("limit")
        tree.set("limit", None)
        positions: list[int] = []
        hidden = 0
        for key in order.expressions if order is not None else ():
            target = key.this
            if isinstance(target, exp.Literal) and target.is_int:
                positions.append(int(target.name) - 1)
            elif isinstance(target, exp.Column) and target.name in names and names.count(target.name) == 1:
                positions.append(names.index(target.name))
            elif isinstance(tree, exp.Select):
                tree.select(exp.alias_(target.copy(), f"{_ORDER_KEY_PREFIX}{hidden}"), copy=False)
                positions.append(len(names) + hidden)
                hidden += 1
            else:
                raise ValueError(f"ORDER BY {target.sql()} of a set operation must name an output column")
        limit_rows = int(limit.expression.name) if limit is not None else None
        # a SELECT * is one select expression but many columns: count them only when keys were appended
        return cls(tree, len(names) if hidden else None, tuple(positions), limit_rows)

    def sql(self, dialect: str | type) -> str:
        return self.tree.sql(dialect=dialect)

    def tables(self) -> set[str]:
        """The names of the tables the query reads (CTE names included; callers skip unknown ones)."""
        return {table.name.lower() for table in self.tree.find_all(exp.Table)}

    def reference(self, rows: Iterable[tuple]) -> Reference:
        """The reference's rows (in its ORDER BY order) cut into tie groups by the sort-key values."""
        # every NaN the one NaN (Spark's NaN = NaN), so tie groups and the multiset comparison see one value
        rows = [tuple(canonical(value) if isinstance(value, float) else value for value in row) for row in rows]
        groups: list[int] = []
        previous = object()
        for row in rows:
            key = tuple(row[p] for p in self.key_positions)
            if groups and key == previous:
                groups[-1] += 1
            else:
                groups.append(1)
            previous = key
        if not self.key_positions:
            groups = [len(rows)] if rows else []
        return Reference(tuple(row[: self.width] for row in rows), tuple(groups), self.limit)


class DuckDBOracle:
    """One in-memory DuckDB database holding the catalog's tables; close it (or use ``with``) when done.

    Either ``load`` the tables' rows directly, or ``load_stream`` once and set the tables to the
    stream's state with ``as_of(seq)`` after every batch. A connection still open when the
    interpreter exits makes DuckDB's bindings print a page of "nanobind: leaked" warnings, so every
    user closes it explicitly.
    """

    def __init__(self, catalog: Catalog, time_zone: str = DEFAULT_TIME_ZONE):
        self.catalog = catalog
        self.connection = duckdb.connect()
        self.schemas: dict[str, pa.Schema] = {}
        # the session time zone, as the maintained view's (a TIMESTAMP column is DuckDB's TIMESTAMPTZ)
        self.connection.execute("SET TimeZone = ?", [time_zone])
        # Spark's NULL order (first ascending, last descending); DuckDB's default puts them last.
        self.connection.execute("SET default_null_order = 'nulls_first_on_asc_last_on_desc'")

    def close(self) -> None:
        self.connection.close()

    def __enter__(self) -> DuckDBOracle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def load(self, tables: Mapping[str, list[tuple]]) -> None:
        """Replace the contents of every catalog table (absent tables become empty)."""
        types = reference_types(self.catalog)
        for name, table in self.catalog.tables.items():
            data: pa.Table = arrow_from_rows(list(tables.get(name, ())), table, "oracle")
            schema = pa.schema([pa.field(c.name, arrow_type(types[name][c.name])) for c in table.columns])
            data = pa.Table.from_arrays([data[f.name].cast(f.type) for f in schema], schema=schema)
            self._create_table(name, data)

    def load_stream(self, stream: StreamTables) -> None:
        """Hold the stream; ``as_of`` then sets the tables from it."""
        self.schemas = {name: data.schema for name, data in stream.tables.items()}
        for name, data in stream.tables.items():
            self._create_table(f"{name}__stream", data)

    def table(self, name: str) -> pa.Table:
        """The current rows of table ``name`` (after ``as_of``) as Arrow, typed as in the stream."""
        schema = self.schemas[name]
        data = self.connection.sql(f"SELECT * FROM {name}").to_arrow_table()
        return data.cast(pa.schema(schema.field(column) for column in data.column_names))

    def as_of(self, seq: int) -> None:
        """Every table as the loaded stream defines it after the update numbered ``seq``."""
        for name, table in self.catalog.tables.items():
            self.connection.execute(f"CREATE OR REPLACE TABLE {name} AS {state_sql(table, seq, 'duckdb')}")

    def _create_table(self, name: str, data: pa.Table) -> None:
        self.connection.register(f"_{name}_arrow", data)
        self.connection.execute(f"CREATE OR REPLACE TABLE {name} AS SELECT * FROM _{name}_arrow")
        self.connection.unregister(f"_{name}_arrow")

    def reference(self, sql: str) -> Reference:
        """The query's result as DuckDB computes it, in its ORDER BY order (Spark's NULL order)."""
        query = OrderedQuery.parse(sql)
        return query.reference(self.connection.execute(query.sql(_DuckDBWithSparkNullOrder)).fetchall())

    def query(self, sql: str) -> list[tuple]:
        """The query's rows: ORDER BY as DuckDB orders, LIMIT applied (ties at the limit: DuckDB's pick)."""
        return self.reference(sql).visible


class _DuckDBWithSparkNullOrder(DuckDB):
    """DuckDB as the oracle's connection is set (``default_null_order``): NULLs first ascending, last
    descending, as in Spark. sqlglot must know it to spell out a NULL order that differs (an explicit
    ``ASC NULLS LAST`` would otherwise be dropped as DuckDB's usual default).

    And Spark's ANSI division: ``a / 0`` raises ``[DIVIDE_BY_ZERO]`` in Spark, where DuckDB (and
    sqlglot's ``a / NULLIF(b, 0)``) gives NULL; the divisor is written ``CASE WHEN b = 0 AND NOT a IS
    NULL THEN error(...) ELSE b END`` (DuckDB evaluates a CASE branch only for the rows taking it;
    Spark's NULL / 0 is NULL), so the reference raises where Spark does (a view's value that is an
    error: operators/held_errors.py)."""

    NULL_ORDERING = "nulls_are_small"

    class Generator(DuckDB.Generator):
        # sqlglot reads Spark's from_utc_timestamp(ts, tz) as ``ts AT TIME ZONE tz`` and
        # to_utc_timestamp as the reverse, which DuckDB reads the other way round (a naive local time
        # taken in tz); written with DuckDB's timezone(tz, instant) (the local time there) and
        # timezone(tz, local) (the instant of a local time there) instead
        def attimezone_sql(self, expression: exp.AtTimeZone) -> str:
            local = exp.func("timezone", expression.args["zone"], _instant(expression.this))
            return self.sql(exp.func("timezone", exp.Literal.string("UTC"), local))

        def fromtimezone_sql(self, expression: exp.FromTimeZone) -> str:
            utc_local = exp.func("timezone", exp.Literal.string("UTC"), _instant(expression.this))
            return self.sql(exp.func("timezone", expression.args["zone"], utc_local))

        def div_sql(self, expression: exp.Div) -> str:
            if expression.args.get("safe"):
                divisor = expression.right
                zero = exp.and_(exp.EQ(this=divisor.copy(), expression=exp.Literal.number(0)),
                                exp.Not(this=exp.Is(this=expression.left.copy(), expression=exp.Null())))
                divisor.replace(exp.Case(ifs=[exp.If(this=zero, true=exp.func("error", exp.Literal.string(DIVIDE_BY_ZERO)))],
                                         default=divisor.copy()))
                expression.set("safe", False)  # (the generator works on its own copy of the tree)
            return super().div_sql(expression)


def _instant(node: exp.Expression) -> exp.Expression:
    """The argument of from/to_utc_timestamp as a DuckDB TIMESTAMPTZ (sqlglot's cast to TIMESTAMP
    would make it a naive local time)."""
    inner = node.this if isinstance(node, exp.Cast) and node.to.is_type(exp.DataType.Type.TIMESTAMP) else node
    return exp.cast(inner, exp.DataType.build("TIMESTAMPTZ"))


#: Spark's message, as the reference raises it (``SqlRuntimeError``'s text starts the same)
DIVIDE_BY_ZERO = "[DIVIDE_BY_ZERO] Division by zero"


def state_sql(table: Table, seq: int, dialect: str) -> str:
    """``table`` after the update numbered ``seq``: each distinct row repeated ``sum(_op)`` times."""
    quote = "`" if dialect == "spark" else '"'
    columns = ", ".join(f"{quote}{c}{quote}" for c in table.column_names)
    counted = (f"SELECT {columns}, CAST(sum({OP_COLUMN}) AS BIGINT) AS {_COPIES} FROM {table.name}__stream "
               f"WHERE {SEQ_COLUMN} <= {seq} GROUP BY {columns} HAVING sum({OP_COLUMN}) > 0")
    if dialect == "spark":
        return f"SELECT {columns} FROM ({counted}) LATERAL VIEW explode(sequence(1, {_COPIES})) AS __ivm_copy"
    return f"SELECT {columns} FROM ({counted}) AS counted, range(counted.{_COPIES})"


# ---------------------------------------------------------------------------------------------
# Comparing a maintained result with a reference


def _decimal_near_double(value: Decimal, double: float) -> bool:
    """``value`` is ``double`` rounded to ``value``'s scale, up to the double's own error."""
    if not math.isfinite(double):
        return False
    half_unit = Decimal(1).scaleb(value.as_tuple().exponent) / 2 if value.is_finite() else Decimal(0)
    return abs(Decimal(double) - value) <= half_unit + Decimal(abs(double)) * Decimal("1e-9") + Decimal("1e-12")


def values_agree(actual: object, expected: object) -> bool:
    """One maintained value against the reference's: DECIMAL, integers, strings, dates exactly;
    DOUBLE within a relative 1e-9 (sums in another order round differently)."""
    if actual is None or expected is None:
        return actual is None and expected is None
    if isinstance(actual, bool) or isinstance(expected, bool):
        return type(actual) is type(expected) and actual == expected
    if isinstance(actual, Decimal) and isinstance(expected, float):
        # DuckDB types AVG and decimal division as DOUBLE where Spark gives a DECIMAL: Spark wins,
        # so the maintained DECIMAL must be DuckDB's double rounded to its scale.
        return _decimal_near_double(actual, expected)
    if isinstance(actual, float) or isinstance(expected, float):
        if not isinstance(actual, int | float) or not isinstance(expected, int | float):
            return False
        if math.isnan(actual) or math.isnan(expected):  # Spark's NaN = NaN; never close to a number
            return math.isnan(actual) and math.isnan(expected)
        return math.isclose(actual, expected, rel_tol=1e-9, abs_tol=1e-6)
    return actual == expected


def rows_agree(actual: tuple, expected: tuple) -> bool:
    return len(actual) == len(expected) and all(map(values_agree, actual, expected))


def _canonical(row: tuple) -> tuple:
    """A sort key under which agreeing rows land next to each other (numbers by float value)."""
    def key(value):
        if value is None:
            return (0, 0)
        if isinstance(value, int | float | Decimal) and not isinstance(value, bool):
            number = float(value)
            return (1, 1, 0.0) if math.isnan(number) else (1, 0, number)  # NaN above every number, as in Spark
        return (2, str(type(value)), value)
    return tuple(key(v) for v in row)


_MATCH_WINDOW = 4  # agreeing rows whose floats differ in the last bits may sort a few places apart


def unmatched_rows(actual: Sequence[tuple], expected: Sequence[tuple]) -> tuple[list[tuple], list[tuple]]:
    """Rows of ``actual`` that no row of ``expected`` agrees with, and the ``expected`` rows left over
    (each row used once: multisets)."""
    exact = Counter(expected)
    rest_actual = []
    for row in actual:
        if exact[row] > 0:
            exact[row] -= 1
        else:
            rest_actual.append(row)
    rest_expected = sorted(exact.elements(), key=_canonical)
    rest_actual.sort(key=_canonical)
    used = [False] * len(rest_expected)
    missing_partner: list[tuple] = []
    cursor = 0
    for row in rest_actual:
        while cursor < len(used) and used[cursor]:
            cursor += 1
        window = range(max(0, cursor - _MATCH_WINDOW), min(len(used), cursor + _MATCH_WINDOW + 1))
        partner = next((i for i in window if not used[i] and rows_agree(row, rest_expected[i])), None)
        if partner is None:
            missing_partner.append(row)
        else:
            used[partner] = True
    return missing_partner, [row for row, taken in zip(rest_expected, used, strict=True) if not taken]


def assert_matches_reference(actual: Sequence[tuple], reference: Reference, context: str) -> None:
    """The maintained rows (in the view's ORDER BY order) against the reference: the same tie groups
    in the same order, each an equal multiset; the group cut by LIMIT only needs to hold the
    maintained rows. Raises ``AssertionError`` naming the first difference."""
    expected_count = len(reference.rows) if reference.limit is None else min(reference.limit, len(reference.rows))
    if len(actual) != expected_count:
        extra, missing = unmatched_rows(actual, reference.visible)
        raise AssertionError(f"{context}: {len(actual)} rows maintained vs {expected_count} recomputed; "
                             f"first extra {extra[:5]}; first missing {missing[:5]}")
    start = 0
    for number, size in enumerate(reference.tie_groups):
        if start >= len(actual):
            break
        taken = min(size, len(actual) - start)
        maintained = actual[start: start + taken]
        group = reference.rows[start: start + size]
        extra, missing = unmatched_rows(maintained, group)
        if extra or (taken == size and missing):
            where = "" if len(reference.tie_groups) == 1 else (
                f" (ORDER BY position {start}..{start + size - 1}, tie group {number}: the order differs or the rows do)")
            raise AssertionError(f"{context}: rows differ{where}; maintained but not recomputed {extra[:5]}; "
                                 f"recomputed but not maintained {missing[:5]}")
        start += size
