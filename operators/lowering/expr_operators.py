"""Every operator of scalar expressions, defined once for the three expression compilers.

An expression stays a ``planner.ir.expressions`` tree (``Call(op, args)``) and is compiled three ways:
to closures (operators/lowering/expr_eval.py, the semantics: what the generic runner and Spark's
stages run), to inline Python source (expr_source.py, the compiled local runner's hot paths) and to
Arrow compute (expr_arrow.py, the stream reader's row masks, which may keep more rows, never fewer).
Each compiler walks the tree and asks this module's ``operator_of(call)`` what the call is, so no
compiler has its own list of operators: one it has no form for is computed by the closure (source)
or taken as possibly true (Arrow).

An operator is an entry of one *kind*; the kind says how NULL flows through it, and each compiler
implements each kind once:

- ``Strict``: NULL when any operand is NULL, else ``value(call)`` of the operand values (comparisons,
  arithmetic, NOT, LIKE, casts, most functions). The entry carries the operator's one evaluation and,
  where it has them, its Python source over non-NULL operands and its Arrow kernel (Arrow's kernels
  propagate NULL the same way);
- ``Aware``: ``value`` sees NULL as None (IS [NOT] NULL, functions declared ``aware``);
- ``Lazy``: ``value`` gets one thunk per argument (functions declared ``lazy``: coalesce);
- ``Kleene``: AND and OR, SQL's three-valued logic (``dominant`` decides: false for AND, true for OR);
- ``Membership``: [NOT] IN a list, true on a match, else NULL if the subject or a member is NULL;
- ``Expansion``: an operator defined as another expression (BETWEEN is two comparisons);
- ``Case`` and ``Tried`` (``try``: an operator's own run-time error is NULL; ``try_eval``: any error).

Registered scalar functions (planner/ir/functions) are entries too, made from their ``Function``
(its ``nulls`` is the kind). tests/operators/test_expr_compilers.py checks, for every entry, that the
three compilers agree on a grid of values with NULLs.
"""

from __future__ import annotations

import datetime
import decimal
import operator
import re
from collections.abc import Callable
from functools import cache, partial
from typing import Literal as Choice
from typing import Protocol

import attrs

from catalog.literals import sql_literal
from catalog.types import (
    BIGINT,
    BOOLEAN,
    DATE,
    DECIMAL_CONTEXT,
    DOUBLE,
    INT,
    INTEGRAL,
    STRING,
    TIMESTAMP,
    TIMESTAMP_NTZ,
    DataType,
    DecimalType,
    integral_range,
)
from operators.doubles import NAN
from planner.ir import functions, values
from planner.ir.dates import shift_date
from planner.ir.expressions import Call, Expr, Literal, cast_target, type_of
from planner.ir.timestamps import DEFAULT_TIME_ZONE, shift_timestamp


class ExpressionError(ValueError):
    """An expression cannot be compiled (unknown column, unsupported function)."""


class Names(Protocol):
    """What a source form asks of the Python source being written (expr_source.SourceWriter)."""

    def constant(self, value: object, hint: str) -> str:
        """A name bound to ``value`` in the generated program."""

    def temporary(self) -> str:
        """A fresh local name for a walrus temporary."""


#: a source form: the operands' source (non-NULL for a strict operator) -> the result's source
SourceForm = Callable[..., str]
Evaluation = Callable[[Call], Callable[..., object]]
Writer = Callable[[Call, Names], SourceForm | None]


def _all_args(call: Call) -> int:
    return len(call.args)


@attrs.frozen
class Strict:
    """NULL when an operand is NULL, else ``value(call)(*operand values)``.

    ``operands(call)``: how many leading args are computed per row (the rest are constants the
    evaluation reads from ``call``: a cast's time zone, LIKE's pattern). ``divisor_first``: the second
    operand is computed first, so a NULL there skips the first (Spark's DivModLike). ``source``: the
    result over the non-NULL operands' source, or None where only the closure is exact. ``predicate``:
    the result is a truth value (a source form of it is truthy exactly when true). ``arrow``: the
    ``pyarrow.compute`` kernel of a predicate, over ``arrow_operands``: ``values`` (columns and
    literals of one column type) or ``truths`` (predicates).
    """

    value: Evaluation
    source: Writer | None = None
    predicate: bool = False
    arrow: str | None = None
    arrow_operands: Choice["values", "truths"] = "values"
    divisor_first: bool = False
    operands: Callable[[Call], int] = _all_args


@attrs.frozen
class Aware:
    """``value(call)(*operand values)``, NULL passed as None; ``source`` over the operands' source."""

    value: Evaluation
    source: Writer | None = None
    predicate: bool = False
    arrow: str | None = None
    arrow_operands: Choice["values", "truths"] = "values"


@attrs.frozen
class Lazy:
    """``value(call)(*thunks)``: one zero-argument callable per argument, called only if needed."""

    value: Evaluation


@attrs.frozen
class Kleene:
    """AND (``dominant`` False) / OR (True): the dominant value wins, else NULL if any part is NULL,
    else the other value. Written as Python's ``and``/``or`` in a condition, Arrow's ``*_kleene``."""

    dominant: bool

    @property
    def keyword(self) -> str:
        return "or" if self.dominant else "and"


@attrs.frozen
class Membership:
    """``x [NOT] IN (v1, ...)``: true on a match; else NULL if x or any member is NULL (members are
    computed in order until one matches)."""

    negated: bool


@attrs.frozen
class Expansion:
    """An operator that is another expression over its arguments (``expand(call)``)."""

    expand: Callable[[Call], Expr]


@attrs.frozen
class Case:
    """``CASE WHEN c1 THEN v1 ... [ELSE e] END``: the first branch whose condition is true."""


@attrs.frozen
class Tried:
    """``try(op(...))``: op's own run-time error is NULL while an argument's still fails (Spark's TRY
    eval mode; ``op`` is strict); ``whole`` (``try_eval``): any error inside is NULL (TryEval)."""

    whole: bool


Operator = Strict | Aware | Lazy | Kleene | Membership | Expansion | Case | Tried


def plain(function: Callable[..., object]) -> Evaluation:
    """The evaluation of an operator that does not depend on the call (its types or constants)."""
    return lambda call: function


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


# --- comparisons and logic ----------------------------------------------------------------------

_COMPARISONS = {"=": ("eq", "==", "equal"), "<>": ("ne", "!=", "not_equal"), "<": ("lt", "<", "less"),
                "<=": ("le", "<=", "less_equal"), ">": ("gt", ">", "greater"), ">=": ("ge", ">=", "greater_equal")}


def _comparison(op: str) -> Strict:
    method, python, kernel = _COMPARISONS[op]
    return Strict(plain(getattr(operator, method)), source=lambda call, names: lambda a, b: f"{a} {python} {b}",
                  predicate=True, arrow=kernel)


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


def _constant_pattern(call: Call) -> str | None:
    pattern = call.args[1]
    return pattern.value if isinstance(pattern, Literal) and isinstance(pattern.value, str) else None


def _like(negate: bool) -> Strict:
    def evaluation(call: Call) -> Callable[..., bool]:
        pattern = _constant_pattern(call)
        if pattern is None:
            return lambda s, p: (_like_regex(p).fullmatch(s) is None) == negate
        regex = _like_regex(pattern)
        return lambda s: (regex.fullmatch(s) is None) == negate

    def source(call: Call, names: Names) -> SourceForm | None:
        pattern = _constant_pattern(call)
        if pattern is None:
            return None
        regex, matched = names.constant(_like_regex(pattern), "re"), "is None" if negate else "is not None"
        return lambda s: f"{regex}.fullmatch({s}) {matched}"

    return Strict(evaluation, source=source, predicate=True, operands=lambda call: 1 if _constant_pattern(call) is not None else 2)


# --- arithmetic ---------------------------------------------------------------------------------

_DECIMAL_METHODS = {"+": "add", "-": "subtract", "*": "multiply"}


def _natural_decimal(op: str, left: DataType | None, right: DataType | None) -> DecimalType | None:
    """Spark's result type of ``left op right`` before it is capped at 38 digits (None if not decimals)."""
    operands = []
    for t in (left, right):
        if isinstance(t, DecimalType):
            operands.append((t.precision, t.scale))
        elif t in INTEGRAL:
            operands.append((10 if t == INT else 20, 0))
        else:
            return None
    (p1, s1), (p2, s2) = operands
    if op == "*":
        return DecimalType(p1 + p2 + 1, s1 + s2)
    scale = max(s1, s2)
    return DecimalType(scale + max(p1 - s1, p2 - s2) + 1, scale)


def _arithmetic_source(call: Call, names: Names) -> SourceForm | None:
    """``a op b`` over two non-NULL operands where it is exactly ``values.arithmetic``: DECIMAL ``+ - *``
    at their natural result type (no precision cap at 38, so the exact result fits and needs no
    rounding; the 100-digit context as ``values``), integers with the range check, doubles (a NaN
    result made the one NaN)."""
    op, (left, right) = call.op, call.args
    result, left_type, right_type = type_of(call), type_of(left), type_of(right)
    if isinstance(result, DecimalType) and _natural_decimal(op, left_type, right_type) == result:
        method = names.constant(getattr(DECIMAL_CONTEXT, _DECIMAL_METHODS[op]), "dec")
        return lambda a, b: f"{method}({a}, {b})"
    v = names.temporary()
    if result in INTEGRAL and left_type in INTEGRAL and right_type in INTEGRAL:
        (low, high), check, kind = integral_range(result), names.constant(values.check_integral, "check"), names.constant(result, "type")
        return lambda a, b: f"({v} if {low} <= ({v} := {a} {op} {b}) <= {high} else {check}({v}, {kind}))"
    if result == DOUBLE and left_type == DOUBLE and right_type == DOUBLE:
        nan = names.constant(NAN, "nan")
        return lambda a, b: f"({v} if ({v} := {a} {op} {b}) == {v} else {nan})"
    return None


def _arithmetic(op: str) -> Strict:
    return Strict(lambda call: _nan_made_one(values.arithmetic(op, call.dtype), call.dtype),
                  source=_arithmetic_source if op in _DECIMAL_METHODS else None, divisor_first=op in ("/", "%", "div"))


# --- dates, times and casts ---------------------------------------------------------------------


def _interval(expr: Expr) -> bool:
    return isinstance(expr, Literal) and str(expr.type).startswith("interval")


def _add_days(day: datetime.date, days: int) -> datetime.date:
    """``date_add``; a result outside years 1..9999 (Python's dates; Spark's reach further) is an error."""
    try:
        return day + datetime.timedelta(days=days)
    except OverflowError:
        raise values.SqlRuntimeError("DATETIME_OVERFLOW", f"{sql_literal(day)} + {days} days is outside years 1..9999") from None


def _date_shift(call: Call) -> Callable[..., datetime.date]:
    """``date ± interval`` (months clamp to the month's end, as Spark does) and ``date ± n`` days."""
    sign = 1 if call.op == "+" else -1
    amount = call.args[1]
    if isinstance(amount, Literal) and isinstance(amount.value, tuple):
        count, unit = amount.value
        return lambda d: shift_date(d, sign * count, unit)
    return lambda d, n: _add_days(d, sign * n)


_DATE_SHIFT = Strict(_date_shift, operands=lambda call: 1 if isinstance(call.args[1], Literal) and isinstance(call.args[1].value, tuple) else 2)


def _timestamp_shift(call: Call) -> Callable[[datetime.datetime], datetime.datetime]:
    """``timestamp ± interval`` (planner/ir/timestamps.py); a TIMESTAMP_NTZ has no zone."""
    match call.args:
        case (_, Literal(value=(amount, unit)), *zone):
            zone_name = zone[0].value if zone else None
        case _:
            raise ExpressionError(f"unsupported expression {call!r}")

    def shift(value: datetime.datetime) -> datetime.datetime:
        try:
            return shift_timestamp(value, amount, unit, zone_name)
        except (ValueError, OverflowError):
            raise values.SqlRuntimeError("DATETIME_OVERFLOW", f"{value} + {amount} {unit} is outside years 1..9999") from None

    return shift


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


def _cast(call: Call) -> Callable[[object], object]:
    """``CAST(operand AS target)``; between a TIMESTAMP and a date, string or TIMESTAMP_NTZ it carries
    the session time zone (a second, constant argument)."""
    target, source = cast_target(call.op), type_of(call.args[0])
    zone = call.args[1].value if len(call.args) > 1 else DEFAULT_TIME_ZONE
    if source is None:
        return _nan_made_one(lambda v: values.cast_value(v, _value_type(v), target, zone), target)
    return _nan_made_one(lambda v: values.cast_value(v, source, target, zone), target)


_CAST = Strict(_cast, operands=lambda call: 1)

_EXTRACT = {
    "extract_year": lambda d: d.year,
    "extract_quarter": lambda d: (d.month - 1) // 3 + 1,
    "extract_month": lambda d: d.month,
    "extract_week": lambda d: d.isocalendar()[1],
    "extract_day": lambda d: d.day,
}


# --- the table ----------------------------------------------------------------------------------


def _between(call: Call) -> Expr:
    """``x BETWEEN lo AND hi`` is ``x >= lo AND x <= hi`` (Spark's rewrite)."""
    subject, low, high = call.args
    return Call("and", (Call(">=", (subject, low), BOOLEAN), Call("<=", (subject, high), BOOLEAN)), BOOLEAN)


def _is_null(negate: bool) -> Aware:
    test = "is not None" if negate else "is None"
    return Aware(plain(partial(operator.is_not if negate else operator.is_, None)), predicate=True,
                 source=lambda call, names: lambda a: f"{a} {test}", arrow="is_valid" if negate else "is_null")


#: every operator by its ``Call.op`` (registered functions, ``+``/``-`` of dates and casts: ``operator_of``)
OPERATORS: dict[str, Operator] = {
    **{op: _comparison(op) for op in _COMPARISONS},
    "and": Kleene(dominant=False),
    "or": Kleene(dominant=True),
    "not": Strict(plain(operator.not_), source=lambda call, names: lambda a: f"not {a}", predicate=True,
                  arrow="invert", arrow_operands="truths"),
    "between": Expansion(_between),
    "in": Membership(negated=False),
    "not in": Membership(negated=True),
    "is null": _is_null(negate=False),
    "is not null": _is_null(negate=True),
    "like": _like(negate=False),
    "not like": _like(negate=True),
    **{op: _arithmetic(op) for op in ("+", "-", "*", "/", "%", "div")},
    "neg": Strict(lambda call: values.negate(call.dtype)),
    "date_diff": Strict(plain(operator.sub)),
    "timestamp_shift": Strict(_timestamp_shift, operands=lambda call: 1),
    **{op: Strict(plain(extract)) for op, extract in _EXTRACT.items()},
    "case": Case(),
    "try": Tried(whole=False),
    "try_eval": Tried(whole=True),
}


def operator_of(call: Call) -> Operator | None:
    """What ``call`` is, for every compiler; None when no compiler can compute it."""
    if call.op in ("+", "-") and len(call.args) == 2 and (type_of(call) == DATE or _interval(call.args[1])):
        return _DATE_SHIFT
    if call.op.startswith("cast as "):
        return _CAST
    entry = OPERATORS.get(call.op)
    if entry is None and (function := functions.registered(call.op)) is not None and function.evaluator is not None:
        return _function_operator(function)
    return entry


@cache
def _function_operator(function: functions.Function) -> Operator:
    """A registered function as an entry of the kind its ``nulls`` declares."""
    def evaluation(call: Call) -> Callable[..., object]:
        evaluate = function.evaluator(functions.Bound(functions.arguments(call.args), call.dtype))
        return _nan_made_one(evaluate, call.dtype)

    return {"strict": Strict, "aware": Aware, "lazy": Lazy}[function.nulls](evaluation)
