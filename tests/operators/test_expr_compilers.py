"""The three compilers of one expression agree, for every operator of the shared definition
(operators/lowering/expr_operators.py), on a grid of values with NULLs: the closure (expr_eval.py,
the semantics), the inline Python source (expr_source.py: its value, and in predicate position its
truthiness, exec'd) and the Arrow row mask (expr_arrow.py: a superset of the rows the closure keeps,
exactly those rows where the operator has an Arrow form). A run-time error must be the same error.

The cases must reach every entry of ``OPERATORS`` (a new operator without a case fails here)."""

from __future__ import annotations

import datetime
import itertools
from decimal import Decimal

import pytest

from catalog.ddl import catalog_from_ddl
from operators.doubles import NAN
from operators.lowering.expr_arrow import possible_rows
from operators.lowering.expr_eval import compile_expr
from operators.lowering.expr_operators import OPERATORS, Aware, Lazy, Strict, operator_of
from operators.lowering.expr_source import SourceWriter
from operators.runtime.stream import arrow_from_rows
from planner.ir import functions
from planner.ir.expressions import BOOLEAN, Call, Column, columns, type_of, walk
from planner.ir.values import SqlRuntimeError
from planner.sql.statements import parse_sql

CATALOG = catalog_from_ddl("""
CREATE TABLE t (id INT NOT NULL, a INT, b INT, l BIGINT, d DECIMAL(15,2), e DECIMAL(15,2), f DOUBLE, g DOUBLE,
                s STRING, p STRING, dt DATE, du DATE, ts TIMESTAMP, PRIMARY KEY (id));
""")
TABLE = CATALOG.table("t")
LAYOUT = {Column("t", name): position for position, name in enumerate(TABLE.column_names)}
UTC = datetime.UTC

#: each column's values on the grid: NULL, the ordinary, the edges (overflow, NaN, an invalid escape)
GRID = {
    "a": [None, 0, 3, -2, 2147483647], "b": [None, 0, 3, -7],
    "l": [None, 5, -2**63],
    "d": [None, Decimal("1.50"), Decimal("0.00"), Decimal("-2.25")], "e": [None, Decimal("1.50"), Decimal("7.01")],
    "f": [None, 1.5, 0.0, NAN, float("inf")], "g": [None, 1.5, -0.0, float("-inf")],
    "s": [None, "ab", "", "a_%", "12"], "p": [None, "a%", "_b", "ab\\", "%"],
    "dt": [None, datetime.date(1995, 3, 15), datetime.date(1995, 3, 14), datetime.date(9999, 12, 31)],
    "du": [None, datetime.date(1995, 3, 15), datetime.date(2000, 2, 29)],
    "ts": [None, datetime.datetime(1995, 3, 15, 23, 30, tzinfo=UTC), datetime.datetime(9999, 12, 31, 23, tzinfo=UTC)],
}

CASES = [
    # comparisons (Arrow: columns of one type, literals of it)
    "a < b", "a = 3", "3 <= a", "a <> b", "a >= -2", "a > b", "l >= 0", "d > e", "d >= 1.5", "d = 0",
    "s <> p", "s > 'a'", "dt < du", "dt = date '1995-03-15'", "f > g", "f = g", "f <= 1.5",
    # logic
    "a > 0 and s = 'ab'", "a > 0 or d < 1", "not (a > 0)", "not (a > 0 and s like 'a%')",
    "a > 0 and (s like 'a%' or d is null)", "not (a in (0, null)) or dt < du", "(a > 0) = (b > 0)",
    # BETWEEN, IN, IS NULL, LIKE
    "a between 0 and b", "d between 0 and 2", "a between -2 and 3",
    "a in (0, 3)", "a in (0, null)", "a not in (3, null)", "a not in (0, 3)", "s in ('ab', '')", "a in (b, 3)",
    "f in (1.5, 0.0)", "a is null", "s is not null", "(a + b) is null", "not (d is not null)",
    "s like 'a%'", "s not like '%b'", "s like 'a\\\\_%'", "s like p", "s not like p",
    # arithmetic: exact, checked, NaN made one, divisor first
    "a + b", "a - b", "a * b", "a / b", "a % b", "a div b", "a + b > 3", "l * 2", "l - 1",
    "d + e", "d - e", "d * e", "d - a", "d * (1 - e) > 1", "d / e", "f + g", "f - g", "f * g", "-a", "-l", "-d",
    # dates, times, casts
    "dt + 1", "dt - 2", "dt - interval 1 month", "dt + interval 1 year", "du - dt", "year(dt)", "quarter(dt)",
    "month(dt)", "extract(week from dt)", "day(dt)", "ts + interval 2 hours", "cast(s as int)",
    "cast(d as double)", "cast(a as decimal(4,1))", "cast(ts as date)",
    # CASE, TRY, registered functions of each kind (strict, aware, lazy)
    "case when a > 0 then s else p end", "case when a > 0 then d when b > 0 then e end",
    "try_add(a, b)", "try_divide(a, b)", "try_cast(s as int)", "try_add(s, a)", "try_multiply(l, l)",
    "upper(s)", "concat(s, p)", "greatest(a, b)", "coalesce(a, b)", "coalesce(a, b) > 0",
]


#: the cases each of whose operators has an Arrow form over what it reads: their mask is exact
ARROW_EXACT = {
    "a < b", "a = 3", "3 <= a", "a <> b", "a >= -2", "a > b", "l >= 0", "d > e", "d >= 1.5", "d = 0", "s <> p",
    "s > 'a'", "dt < du", "dt = date '1995-03-15'", "a > 0 and s = 'ab'", "a > 0 or d < 1", "not (a > 0)",
    "not (a in (0, null)) or dt < du", "a between 0 and b", "d between 0 and 2", "a between -2 and 3", "a in (0, 3)",
    "a in (0, null)", "a not in (3, null)", "a not in (0, 3)", "s in ('ab', '')", "a is null", "s is not null",
    "not (d is not null)",
}


def typed(sql: str):
    return parse_sql(f"select {sql} as v from t", CATALOG).items[0].expr


def grid(expr) -> list[tuple]:
    """A row per combination of the values of the columns ``expr`` reads (the others NULL)."""
    read = sorted({c.name for c in columns(expr)})
    rows = []
    for i, values in enumerate(itertools.product(*(GRID[name] for name in read))):
        given = dict(zip(read, values, strict=True))
        rows.append(tuple(i if name == "id" else given.get(name) for name in TABLE.column_names))
    return rows


def outcome(function, row):
    """('value', repr) or the error: what computing ``function(row)`` gives (Spark's error class; any
    other exception by its type, which the compilers must raise alike too)."""
    try:
        return "value", repr(function(row))
    except SqlRuntimeError as error:
        return "error", error.error_class
    except Exception as error:  # noqa: BLE001 (compared, not swallowed)
        return "exception", type(error).__name__


def source_functions(expr):
    """The source compiler's value and condition of ``expr``, exec'd as functions of ``row``."""
    namespace: dict[str, object] = {}
    writer = SourceWriter(namespace)
    value = eval(f"lambda row: {writer.value(expr, LAYOUT, 'row')}", namespace)  # noqa: S307 (the compiled program's way)
    condition = eval(f"lambda row: {writer.condition(expr, LAYOUT, 'row')}", namespace)  # noqa: S307
    return value, condition


@pytest.mark.parametrize("sql", CASES)
def test_the_closure_the_source_and_the_arrow_mask_agree(sql):
    expr = typed(sql)
    rows, closure = grid(expr), compile_expr(expr, LAYOUT)
    value, condition = source_functions(expr)
    expected = [outcome(closure, row) for row in rows]
    assert [outcome(value, row) for row in rows] == expected
    if type_of(expr) != BOOLEAN:
        return
    kept = [result == ("value", "True") for result in expected]
    assert [outcome(lambda r: bool(condition(r)), row) for row in rows] == [
        ("value", repr(keep)) if kind == "value" else (kind, result) for keep, (kind, result) in zip(kept, expected, strict=True)]
    mask = possible_rows(expr, TABLE, LAYOUT)
    if sql in ARROW_EXACT:
        assert mask is not None, f"{sql} should translate to Arrow"
    if mask is None:
        return
    keep = mask(arrow_from_rows(rows, TABLE, "t").columns).tolist()
    assert all(keep[i] for i, k in enumerate(kept) if k), "the mask must keep every row the closure keeps"
    if sql in ARROW_EXACT:
        assert keep == kept


def test_the_cases_reach_every_operator_of_the_definition():
    calls = [node for sql in CASES for node in walk(typed(sql)) if isinstance(node, Call)]
    seen = {call.op for call in calls}
    assert set(OPERATORS) <= seen, f"operators without a case: {sorted(set(OPERATORS) - seen)}"
    assert any(call.op.startswith("cast as ") for call in calls)
    assert {"+", "-"} <= {call.op for call in calls if str(type_of(call)) == "date"}  # the date shifts
    kinds = {type(operator_of(call)) for call in calls if functions.registered(call.op) is not None}
    assert {Strict, Aware, Lazy} <= kinds


def test_an_operator_without_a_source_or_arrow_form_is_computed_by_its_closure_and_never_narrows_a_mask():
    expr = typed("a > 0 and coalesce(b, 0) > 3")  # coalesce: lazy, no source and no Arrow form
    namespace: dict[str, object] = {}
    assert "_f" in SourceWriter(namespace).condition(expr, LAYOUT, "row")  # the closure, called
    rows = grid(expr)
    keep = possible_rows(expr, TABLE, LAYOUT)(arrow_from_rows(rows, TABLE, "t").columns).tolist()
    assert keep == [row[1] is not None and row[1] > 0 for row in rows]  # the untranslated conjunct taken as true
