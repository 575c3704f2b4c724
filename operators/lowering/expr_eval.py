"""Compile scalar expressions into Python closures over row tuples, with Spark's semantics.

Stages evaluate selections, projections and aggregate arguments once per row, so expressions are
compiled once at lowering time into nested closures (no tree walk per row). NULL is ``None``: it
propagates through arithmetic and comparisons, AND/OR/IN/BETWEEN use three-valued logic, and a
predicate keeps a row only when it is exactly true. The front end typed every expression and
inserted Spark's implicit casts (planner/sql/typing.py); what a type decides at run time (decimal
rounding, integer overflow, division by zero, casts) comes from planner/ir/values.py, the one
implementation of Spark's value semantics, which raises ``SqlRuntimeError`` where Spark raises.
"""

from __future__ import annotations

import datetime
import decimal
import operator
import re
from collections.abc import Callable, Mapping
from functools import cache, partial
from types import FunctionType

import attrs

from catalog.literals import sql_literal
from catalog.types import (
    BIGINT,
    BOOLEAN,
    DATE,
    DOUBLE,
    STRING,
    TIMESTAMP,
    TIMESTAMP_NTZ,
    DataType,
    DecimalType,
)
from operators.doubles import NAN, canonical
from operators.structures.aggregate_index import COMPARISONS
from operators.zset import Compiled, Row
from planner.ir import functions, values
from planner.ir.dates import shift_date
from planner.ir.expressions import Call, Column, Expr, Literal, Subquery, cast_target, type_of
from planner.ir.timestamps import DEFAULT_TIME_ZONE, shift_timestamp


class ExpressionError(ValueError):
    """An expression cannot be compiled (unknown column, unsupported function)."""


_COMPARE = {"<>": operator.ne, **COMPARISONS}
_EXTRACT = {
    "extract_year": lambda d: d.year,
    "extract_quarter": lambda d: (d.month - 1) // 3 + 1,
    "extract_month": lambda d: d.month,
    "extract_week": lambda d: d.isocalendar()[1],
    "extract_day": lambda d: d.day,
}


@cache
def _like_regex(pattern: str) -> re.Pattern:
    """Spark's LIKE: ``%`` any run, ``_`` one character, ``\\`` escapes ``_``, ``%`` or itself (any other
    escaped character, or a pattern ending in the escape, is Spark's INVALID_FORMAT error)."""
    parts = []
    characters = iter(pattern)
    for ch in characters:
        if ch == "\\":
            escaped = next(characters, None)
            if escaped is None:
                raise values.SqlRuntimeError("INVALID_FORMAT.ESC_AT_THE_END", f"the LIKE pattern {sql_literal(pattern)} ends with the escape character")
            if escaped not in "_%\\":
                raise values.SqlRuntimeError(
                    "INVALID_FORMAT.ESC_IN_THE_MIDDLE", f"the LIKE pattern {sql_literal(pattern)} escapes {sql_literal(escaped)}, which is not _, % or \\"
                )
            parts.append(re.escape(escaped))
        else:
            parts.append(".*" if ch == "%" else "." if ch == "_" else re.escape(ch))
    return re.compile("".join(parts), re.DOTALL)


def _value_type(value: object) -> DataType:
    """The type of a value met by an untyped cast (a plan written in the notation)."""
    match value:
        case bool():
            return BOOLEAN
        case int():
            return BIGINT
        case decimal.Decimal():
            return DecimalType(38, max(-value.as_tuple().exponent, 0))
        case float():
            return DOUBLE
        case datetime.datetime():
            return TIMESTAMP if value.tzinfo is not None else TIMESTAMP_NTZ
        case datetime.date():
            return DATE
    return STRING


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
    """A closure computing ``expr`` over rows whose columns sit at ``layout`` positions.

    The closure carries ``expr`` and ``layout`` (``source_of``), so the local runner's plan compiler
    (operators/lowering/codegen.py) can write the same expression as inline Python instead of calling it.
    """
    return _with_source(_compile(expr, layout), expr, layout, predicate=False)


@attrs.frozen
class ExpressionSource:
    """What a compiled closure computes: ``expr`` over rows laid out as ``layout``; ``predicate``: the
    closure is ``compile_predicate``'s, true exactly when ``expr`` is true."""

    expr: Expr
    layout: Mapping[Column, int] = attrs.field(eq=False)
    predicate: bool


def source_of(function: Callable) -> ExpressionSource | None:
    """The expression a closure made by ``compile_expr``/``compile_predicate`` computes, else None."""
    return getattr(function, "ivm_source", None)


def _with_source(function: Compiled, expr: Expr, layout: Mapping[Column, int], predicate: bool) -> Compiled:
    if isinstance(function, FunctionType):  # an itemgetter (a bare column) takes no attribute: it is not needed
        function.ivm_source = ExpressionSource(expr, dict(layout), predicate)
    return function


def _compile(expr: Expr, layout: Mapping[Column, int]) -> Compiled:
    match expr:
        case Column():
            if expr not in layout:
                known = ", ".join(str(c) for c in layout)
                raise ExpressionError(f"column {expr} is not available here (available: {known})")
            return operator.itemgetter(layout[expr])
        case Literal(value=(amount, unit), type=type_) if str(type_).startswith("interval"):
            raise ExpressionError(f"interval {amount} {unit} is only supported added to or subtracted from a date")
        case Literal(value=value):
            value = canonical(value) if isinstance(value, float) else value
            return lambda row: value
        case Call(op=("and" | "or") as op, args=args):
            return _three_valued([_compile(a, layout) for a in args], dominant=op == "or")
        case Call(op="not", args=(arg,)):
            return _strict(operator.not_, _compile(arg, layout))
        case Call(op="timestamp_shift", args=(subject, Literal(value=(amount, unit)), *zone)):
            return _timestamp_shift(_compile(subject, layout), amount, unit, *(z.value for z in zone))
        case Call(op=("+" | "-") as op, args=(left, right)) if type_of(expr) == DATE or isinstance(right, Literal) and str(right.type).startswith("interval"):
            return _date_shift(op, left, right, layout)
        case Call(op=("+" | "-" | "*" | "/" | "%" | "div") as op, args=(left, right)):
            compute = _nan_made_one(values.arithmetic(op, expr.dtype), expr.dtype)
            if op in ("/", "%", "div"):  # Spark's DivModLike computes the divisor first: NULL there skips the dividend
                return _strict(lambda divisor, dividend: compute(dividend, divisor), _compile(right, layout),
                               _compile(left, layout))
            return _strict(compute, _compile(left, layout), _compile(right, layout))
        case Call(op=op, args=(left, right)) if op in _COMPARE:
            return _strict(_COMPARE[op], _compile(left, layout), _compile(right, layout))
        case Call(op="neg", args=(arg,)):
            return _strict(values.negate(expr.dtype), _compile(arg, layout))
        case Call(op="try", args=(Call() as inner,)):
            return _tried(inner, layout)
        case Call(op="try_eval", args=(inner,)):
            return _null_on_error(_compile(inner, layout))
        case Call():
            return _compile_function(expr, layout)
        case Subquery():
            raise ExpressionError("a subquery cannot be evaluated row by row; it must be decorrelated first")
    raise ExpressionError(f"unsupported expression {expr!r}")


def _tried(inner: Call, layout: Mapping[Column, int]) -> Compiled:
    """``try(op(args))`` (TRY_CAST, try_add...): op's own run-time error is NULL, as in Spark's TRY eval
    mode, while an error computing an argument still fails (``try_add(1 / 0, 1)`` raises in Spark too).
    So the arguments are computed outside the ``try``, and op over their values inside it: op is
    compiled over a row of placeholders, each typed as its argument (a constant stays in place)."""
    operands = [(i, arg) for i, arg in enumerate(inner.args) if not isinstance(arg, Literal)]
    slots = {i: Column(None, f"#{i}", dtype=type_of(arg)) for i, arg in operands}
    over_slots = attrs.evolve(inner, args=tuple(slots.get(i, arg) for i, arg in enumerate(inner.args)))
    compute = _compile(over_slots, {slot: n for n, slot in enumerate(slots.values())})
    arguments = [_compile(arg, layout) for _, arg in operands]

    on_error = _null_on_error(compute)
    return lambda row: on_error(tuple(argument(row) for argument in arguments))


def _null_on_error(compute: Compiled) -> Compiled:
    """``compute``, NULL where it raises Spark's run-time error (Spark's TryEval)."""
    def tried(row):
        try:
            return compute(row)
        except values.SqlRuntimeError:
            return None

    return tried


def _date_shift(op: str, date: Expr, amount: Expr, layout: Mapping[Column, int]) -> Compiled:
    """``date ± interval`` (months clamp to the month's end, as Spark does) and ``date ± n`` days."""
    sign = 1 if op == "+" else -1
    if isinstance(amount, Literal) and isinstance(amount.value, tuple):
        count, unit = amount.value
        return _strict(lambda d: shift_date(d, sign * count, unit), _compile(date, layout))
    return _strict(lambda d, n: _add_days(d, sign * n), _compile(date, layout), _compile(amount, layout))


def _timestamp_shift(subject: Compiled, amount: int, unit: str, zone: str | None = None) -> Compiled:
    """``timestamp ± interval`` (planner/ir/timestamps.py); a TIMESTAMP_NTZ has no zone."""
    def shift(value: datetime.datetime) -> datetime.datetime:
        try:
            return shift_timestamp(value, amount, unit, zone)
        except (ValueError, OverflowError):
            raise values.SqlRuntimeError("DATETIME_OVERFLOW", f"{value} + {amount} {unit} is outside years 1..9999") from None

    return _strict(shift, subject)


def _add_days(day: datetime.date, days: int) -> datetime.date:
    """``date_add``; a result outside years 1..9999 (Python's dates; Spark's reach further) is an error."""
    try:
        return day + datetime.timedelta(days=days)
    except OverflowError:
        raise values.SqlRuntimeError("DATETIME_OVERFLOW", f"{sql_literal(day)} + {days} days is outside years 1..9999") from None


def _compile_function(expr: Call, layout: Mapping[Column, int]) -> Compiled:
    """The calls that are not arithmetic or logic: predicates, CASE and scalar functions."""
    args = [_compile(a, layout) for a in expr.args]
    match expr:
        case Call(op=("like" | "not like") as op, args=(_, Literal(value=str(pattern)))):
            regex = _like_regex(pattern)
            negate = op == "not like"
            return _strict(lambda s: (regex.fullmatch(s) is None) == negate, args[0])
        case Call(op=("like" | "not like") as op):
            negate = op == "not like"
            return _strict(lambda s, p: (_like_regex(p).fullmatch(s) is None) == negate, *args)
        case Call(op=("in" | "not in") as op):
            return _in_list(args[0], args[1:], negate=op == "not in")
        case Call(op="between"):
            subject, low, high = args
            return _three_valued(
                [_strict(operator.ge, subject, low), _strict(operator.le, subject, high)], dominant=False
            )
        case Call(op="is null"):
            (inner,) = args
            return lambda row: inner(row) is None
        case Call(op="is not null"):
            (inner,) = args
            return lambda row: inner(row) is not None
        case Call(op="case"):
            return _compile_case(args)
        case Call(op=op) if op in _EXTRACT:
            return _strict(_EXTRACT[op], *args)
        case Call(op="date_diff"):
            return _strict(operator.sub, *args)
        case Call(op=op, args=(operand, *zone)) if op.startswith("cast as "):
            # a cast between a TIMESTAMP and a date, string or TIMESTAMP_NTZ carries the session time zone
            return _cast(cast_target(op), type_of(operand), args[0], *(z.value for z in zone))
        case Call(op=op) if (function := functions.registered(op)) is not None and function.evaluator is not None:
            return _registered(function, expr, args)
    raise ExpressionError(f"unsupported expression {expr!r}")


def _registered(function: functions.Function, expr: Call, args: list[Compiled]) -> Compiled:
    """A registered function's evaluator (planner/ir/functions) over the compiled arguments, given
    non-NULL values (``strict``), every value (``aware``) or one thunk per argument (``lazy``)."""
    evaluate = _nan_made_one(function.evaluator(functions.Bound(functions.arguments(expr.args), expr.dtype)), expr.dtype)
    if function.nulls == "strict":
        return _strict(evaluate, *args)
    if function.nulls == "aware":
        return lambda row: evaluate(*(arg(row) for arg in args))
    return lambda row: evaluate(*(partial(arg, row) for arg in args))


def _cast(target: DataType, source: DataType | None, operand: Compiled, zone: str = DEFAULT_TIME_ZONE) -> Compiled:
    if source is None:
        return _strict(_nan_made_one(lambda v: values.cast_value(v, _value_type(v), target, zone), target), operand)
    return _strict(_nan_made_one(lambda v: values.cast_value(v, source, target, zone), target), operand)


def _nan_made_one(function: Callable, dtype: DataType | None) -> Callable:
    """``function`` whose NaN results are the one NaN (``inf - inf``, ``'NaN'`` cast to double, NaN + 1
    make new ones), when its result is a DOUBLE: then comparisons, groups and joins follow Spark's
    NaN semantics (operators/doubles.py)."""
    if dtype != DOUBLE:
        return function

    def one_nan(*args):
        result = function(*args)
        return NAN if result != result else result

    return one_nan


def _in_list(subject: Compiled, members: list[Compiled], negate: bool) -> Compiled:
    """``x [NOT] IN (v1, ...)`` in three-valued logic: true on a match; else NULL if x or any member is NULL."""

    def member_of(row):
        x = subject(row)
        if x is None:
            return None
        unknown = False
        for member in members:
            v = member(row)
            if v is None:
                unknown = True
            elif v == x:
                return not negate
        return None if unknown else negate

    return member_of


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


def _compile_case(parts: list[Compiled]) -> Compiled:
    pairs = [(parts[i], parts[i + 1]) for i in range(0, len(parts) - 1, 2)]
    otherwise = parts[-1] if len(parts) % 2 else (lambda row: None)

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
    inner = _compile(expr, layout)
    return _with_source(lambda row: inner(row) is True, expr, layout, predicate=True)
