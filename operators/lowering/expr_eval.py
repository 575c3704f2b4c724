"""Compile scalar expressions into Python closures over row tuples, with SQL NULL semantics.

Stages evaluate selections, projections and aggregate arguments once per row, so expressions are
compiled once at lowering time into nested closures (no tree walk per row). NULL is ``None``: it
propagates through arithmetic and comparisons, AND/OR use three-valued logic, and a predicate keeps a
row only when it is exactly true.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Mapping
from functools import cache

from operators.structures.aggregate_index import COMPARISONS
from operators.zset import Compiled, Row
from planner.ir.dates import shift_date
from planner.ir.expressions import Call, Column, Expr, Literal, Subquery


class ExpressionError(ValueError):
    """An expression cannot be compiled (unknown column, unsupported function)."""


_BINARY = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "<>": operator.ne,
    **COMPARISONS,
}


def _divide(a, b):
    return None if b == 0 else a / b


@cache
def _like_regex(pattern: str) -> re.Pattern:
    parts = []
    for ch in pattern:
        parts.append(".*" if ch == "%" else "." if ch == "_" else re.escape(ch))
    return re.compile("".join(parts), re.DOTALL)


def _strict(fn: Callable, *args: Compiled) -> Compiled:
    """Apply ``fn`` to the evaluated args; NULL if any arg is NULL."""
    if len(args) == 1:
        (a,) = args

        def unary(row):
            x = a(row)
            return None if x is None else fn(x)

        return unary
    if len(args) == 2:
        a, b = args

        def binary(row):
            x = a(row)
            if x is None:
                return None
            y = b(row)
            return None if y is None else fn(x, y)

        return binary

    def nary(row):
        values = [arg(row) for arg in args]
        return None if any(v is None for v in values) else fn(*values)

    return nary


def compile_expr(expr: Expr, layout: Mapping[Column, int]) -> Compiled:
    """A closure computing ``expr`` over rows whose columns sit at ``layout`` positions."""
    match expr:
        case Column():
            if expr not in layout:
                known = ", ".join(str(c) for c in layout)
                raise ExpressionError(f"column {expr} is not available here (available: {known})")
            index = layout[expr]
            return operator.itemgetter(index)
        case Literal(value=value, type="interval"):
            raise ExpressionError(f"interval {value} is only supported added to or subtracted from a date")
        case Literal(value=value):
            return lambda row: value
        case Call(op=("and" | "or") as op, args=args):
            return _three_valued([compile_expr(a, layout) for a in args], dominant=op == "or")
        case Call(op="not", args=(arg,)):
            return _strict(operator.not_, compile_expr(arg, layout))
        case Call(op=("+" | "-") as op, args=(left, Literal(type="interval", value=(amount, unit)))):
            sign = 1 if op == "+" else -1
            return _strict(lambda d: shift_date(d, sign * amount, unit), compile_expr(left, layout))
        case Call(op="/", args=(left, right)):
            return _strict(_divide, compile_expr(left, layout), compile_expr(right, layout))
        case Call(op=op, args=(left, right)) if op in _BINARY:
            return _strict(_BINARY[op], compile_expr(left, layout), compile_expr(right, layout))
        case Call(op="neg", args=(arg,)):
            return _strict(operator.neg, compile_expr(arg, layout))
        case Call():
            return _compile_function(expr, layout)
        case Subquery():
            raise ExpressionError("a subquery cannot be evaluated row by row; it must be decorrelated first")
    raise ExpressionError(f"unsupported expression {expr!r}")


def _compile_function(expr: Call, layout: Mapping[Column, int]) -> Compiled:
    """The calls that are not arithmetic or logic: predicates, CASE and scalar functions."""
    match expr:
        case Call(op=("like" | "not like") as op, args=(subject, Literal(value=str(pattern)))):
            regex = _like_regex(pattern)
            negate = op == "not like"
            return _strict(lambda s: (regex.fullmatch(s) is None) == negate, compile_expr(subject, layout))
        case Call(op=("in" | "not in") as op, args=(subject, *values)) if all(isinstance(v, Literal) for v in values):
            members = frozenset(v.value for v in values)
            negate = op == "not in"
            return _strict(lambda x: (x in members) != negate, compile_expr(subject, layout))
        case Call(op="between", args=(subject, low, high)):
            return _strict(lambda x, lo, hi: lo <= x <= hi, *(compile_expr(a, layout) for a in (subject, low, high)))
        case Call(op="is null", args=(arg,)):
            inner = compile_expr(arg, layout)
            return lambda row: inner(row) is None
        case Call(op="is not null", args=(arg,)):
            inner = compile_expr(arg, layout)
            return lambda row: inner(row) is not None
        case Call(op="case", args=args):
            return _compile_case(args, layout)
        case Call(op="coalesce", args=args):
            parts = [compile_expr(a, layout) for a in args]
            return lambda row: next((v for v in (p(row) for p in parts) if v is not None), None)
        case Call(op=("greatest" | "least") as op, args=args):
            # Spark: NULL arguments are skipped; the result is NULL only when all are NULL.
            pick, parts = (max if op == "greatest" else min), [compile_expr(a, layout) for a in args]
            return lambda row: pick((v for v in (p(row) for p in parts) if v is not None), default=None)
        case Call(op="extract_year", args=(arg,)):
            return _strict(lambda d: d.year, compile_expr(arg, layout))
        case Call(op="extract_month", args=(arg,)):
            return _strict(lambda d: d.month, compile_expr(arg, layout))
        case Call(op="extract_day", args=(arg,)):
            return _strict(lambda d: d.day, compile_expr(arg, layout))
        case Call(op="substring", args=(subject, start, length)):
            return _strict(lambda s, b, n: s[max(b - 1, 0) : max(b - 1, 0) + n], *(compile_expr(a, layout) for a in (subject, start, length)))
        case Call(op="cast_float", args=(arg,)):
            return _strict(float, compile_expr(arg, layout))
        case Call(op="cast_int", args=(arg,)):
            return _strict(int, compile_expr(arg, layout))
    raise ExpressionError(f"unsupported expression {expr!r}")


def _three_valued(parts: list[Compiled], dominant: bool) -> Compiled:
    """AND (dominant False) / OR (dominant True) in SQL's three-valued logic: the dominant value wins,
    else NULL if any part is NULL, else the other value."""

    def evaluate(row):
        result = not dominant
        for part in parts:
            value = part(row)
            if value is dominant:
                return dominant
            if value is None:
                result = None
        return result

    return evaluate


def _compile_case(args: tuple[Expr, ...], layout: Mapping[Column, int]) -> Compiled:
    pairs = [(compile_expr(args[i], layout), compile_expr(args[i + 1], layout)) for i in range(0, len(args) - 1, 2)]
    otherwise = compile_expr(args[-1], layout) if len(args) % 2 else (lambda row: None)

    def case(row):
        for when, then in pairs:
            if when(row) is True:
                return then(row)
        return otherwise(row)

    return case


def compile_predicate(expr: Expr | None, layout: Mapping[Column, int]) -> Callable[[Row], bool] | None:
    """A row filter keeping rows where ``expr`` is exactly true; None when there is no predicate."""
    if expr is None:
        return None
    inner = compile_expr(expr, layout)
    return lambda row: inner(row) is True
