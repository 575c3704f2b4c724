"""Spark 4's value semantics (ANSI mode): casts, exact DECIMAL arithmetic, overflow and division by zero.

One implementation serves the planner (casts of constants, folded at plan time) and the operators
(expressions evaluated per row, operators/lowering/expr_eval.py). Where Spark raises at run time,
these functions raise ``SqlRuntimeError`` with Spark's error class, so a batch that would fail in
Spark fails here too instead of being computed differently.

DECIMAL values are ``decimal.Decimal``: exact, and a sum kept under inserts and deletes returns to
exactly its old value. Arithmetic runs in a 100-digit context (two 38-digit operands multiply
exactly) and each result is rounded HALF_UP to its Spark result scale, as Spark does.
"""

from __future__ import annotations

import datetime
import decimal
import math
import operator
import re

from catalog import types
from catalog.literals import sql_literal
from catalog.types import (
    BIGINT,
    BOOLEAN,
    DATE,
    DOUBLE,
    INT,
    NULL,
    STRING,
    TIMESTAMP_NTZ,
    TIMESTAMPS,
    DataType,
    DecimalType,
)
from planner.ir import timestamps

CONTEXT = types.DECIMAL_CONTEXT


class SqlRuntimeError(ValueError):
    """What Spark raises while evaluating (``[DIVIDE_BY_ZERO]``, ``[ARITHMETIC_OVERFLOW]``...)."""

    def __init__(self, error_class: str, message: str):
        super().__init__(f"[{error_class}] {message}")
        self.error_class = error_class


class CastError(SqlRuntimeError):
    pass


def divide_by_zero() -> SqlRuntimeError:
    return SqlRuntimeError("DIVIDE_BY_ZERO", "Division by zero (Spark raises this in ANSI mode; try_divide would give NULL)")


def check_integral(value: int, dtype: DataType, what: str = "integer arithmetic") -> int:
    """``value`` if it fits ``dtype`` (int or bigint), else Spark's ARITHMETIC_OVERFLOW."""
    low, high = types.integral_range(dtype)
    if low <= value <= high:
        return value
    raise SqlRuntimeError("ARITHMETIC_OVERFLOW", f"{what} overflows {dtype}: {value}")


def to_decimal(value: object, dtype: DecimalType) -> decimal.Decimal:
    """``value`` rounded HALF_UP to ``dtype``'s scale; NUMERIC_VALUE_OUT_OF_RANGE if it needs more digits."""
    exact = value if isinstance(value, decimal.Decimal) else decimal.Decimal(value)
    rounded = exact.quantize(decimal.Decimal(1).scaleb(-dtype.scale), context=CONTEXT)
    if rounded.adjusted() >= dtype.precision - dtype.scale and rounded != 0:
        raise SqlRuntimeError(
            "NUMERIC_VALUE_OUT_OF_RANGE", f"{exact} cannot be represented as {dtype} (more than {dtype.precision - dtype.scale} integral digits)"
        )
    return rounded


def decimal_divide(a: object, b: object, dtype: DecimalType) -> decimal.Decimal:
    if b == 0:
        raise divide_by_zero()
    return to_decimal(CONTEXT.divide(decimal.Decimal(a), decimal.Decimal(b)), dtype)


def arithmetic(op: str, dtype: DataType | None):
    """The function computing ``a op b`` (both non-NULL) for a result of Spark type ``dtype``.

    Integers are checked against their type's range; decimals are exact, rounded HALF_UP to the
    result scale and checked against its precision; doubles are IEEE (``/`` by zero still raises,
    as Spark's ANSI mode does for every ``/``). ``dtype`` None (an untyped plan): Python's operators.
    """
    if op == "/":
        if isinstance(dtype, DecimalType):
            return lambda a, b: decimal_divide(a, b, dtype)
        return _checked_division if dtype == DOUBLE else _plain_division
    if op == "div":
        return lambda a, b: check_integral(_integral_division(a, b), BIGINT, "DIV")
    if op == "%":
        return lambda a, b: _remainder(a, b, dtype)
    plain = _PLAIN[op]
    if dtype in types.INTEGRAL:
        return lambda a, b: check_integral(plain(a, b), dtype)
    if isinstance(dtype, DecimalType):
        exact = _EXACT[op]
        return lambda a, b: to_decimal(exact(decimal.Decimal(a), decimal.Decimal(b)), dtype)
    if dtype == DOUBLE:
        return lambda a, b: plain(float(a), float(b))
    return plain


_PLAIN = {"+": operator.add, "-": operator.sub, "*": operator.mul}
_EXACT = {"+": CONTEXT.add, "-": CONTEXT.subtract, "*": CONTEXT.multiply}


def _checked_division(a: object, b: object) -> float:
    if b == 0:
        raise divide_by_zero()
    return float(a) / float(b)


def _plain_division(a: object, b: object) -> object:
    """An untyped ``/`` (plans written in the notation): NULL on zero, as before types existed."""
    return None if b == 0 else a / b


def _integral_division(a: object, b: object) -> int:
    if b == 0:
        raise divide_by_zero()
    if isinstance(a, int) and isinstance(b, int):
        quotient = abs(a) // abs(b)  # truncates toward zero, as Java's division does
        return quotient if (a < 0) == (b < 0) else -quotient
    return int(CONTEXT.divide(decimal.Decimal(a), decimal.Decimal(b)))  # decimals: exact, then truncated


def _remainder(a: object, b: object, dtype: DataType | None) -> object:
    """Java's remainder: the sign of the dividend."""
    if b == 0:
        raise divide_by_zero()
    if isinstance(dtype, DecimalType):
        return to_decimal(CONTEXT.remainder(decimal.Decimal(a), decimal.Decimal(b)), dtype)
    if dtype == DOUBLE:
        return math.fmod(float(a), float(b))
    result = abs(a) % abs(b)
    return result if a >= 0 else -result


def negate(dtype: DataType | None):
    if dtype in types.INTEGRAL:
        return lambda a: check_integral(-a, dtype, "unary minus")
    return operator.neg


def average(total: object, count: int, dtype: DataType | None) -> object:
    """AVG from its running sum and count, as Spark computes it: decimal(p+4,s+4) rounded HALF_UP, else double."""
    if isinstance(dtype, DecimalType):
        return to_decimal(CONTEXT.divide(decimal.Decimal(total), decimal.Decimal(count)), dtype)
    return float(total) / count if dtype == DOUBLE else total / count


_TRUE = frozenset({"t", "true", "y", "yes", "1"})
_FALSE = frozenset({"f", "false", "n", "no", "0"})
_INTEGER_TEXT = re.compile(r"[+-]?\d+")
_DATE_TEXT = re.compile(r"(\d{4})(?:-(\d{1,2})(?:-(\d{1,2}))?)?(?:[ T].*)?")


def _invalid(value: object, source: DataType, target: DataType) -> CastError:
    return CastError(
        "CAST_INVALID_INPUT",
        f"the value {sql_literal(value, source)} of the type {str(source).upper()} cannot be cast to {str(target).upper()} because it is malformed",
    )


def cast_value(value: object, source: DataType, target: DataType, zone: str = timestamps.DEFAULT_TIME_ZONE) -> object:
    """``CAST(value AS target)`` for a ``value`` of type ``source``, with Spark's ANSI semantics;
    ``zone``: the session time zone, where a TIMESTAMP meets a date, a string or a TIMESTAMP_NTZ."""
    if value is None or source == target or target == NULL:
        return value
    if source in TIMESTAMPS or target in TIMESTAMPS:
        return _timestamp_cast(value, source, target, zone)
    if target == STRING:
        return to_string(value, source)
    if source == STRING:
        return _from_string(value, target)
    if target in types.INTEGRAL:
        if source == BOOLEAN:
            return int(value)
        integral = int(value) if not isinstance(value, float) else _float_to_int(value, target)
        return check_integral(integral, target, f"CAST({value} AS {target})")
    if isinstance(target, DecimalType):
        if isinstance(value, float):
            if not math.isfinite(value):
                raise _invalid(value, source, target)
            value = decimal.Decimal(repr(value))
        return to_decimal(int(value) if source == BOOLEAN else value, target)
    if target == DOUBLE:
        return float(value)
    if target == BOOLEAN and types.is_numeric(source):
        return value != 0
    raise _invalid(value, source, target)


def _timestamp_cast(value: object, source: DataType, target: DataType, zone: str) -> object:
    """Casts to and from the timestamps (planner/ir/timestamps.py): a TIMESTAMP is read and shown
    as its local date-time in the session time zone, a TIMESTAMP_NTZ as it is."""
    try:
        if source == STRING:
            local, named = timestamps.parse_timestamp(value)
            return local if target == TIMESTAMP_NTZ else timestamps.from_local(local, named or zone)
        local = value if source == TIMESTAMP_NTZ else timestamps.to_local(value, zone) if source in TIMESTAMPS else None
        if source == DATE:
            midnight = timestamps.date_to_local(value)
            return midnight if target == TIMESTAMP_NTZ else timestamps.from_local(midnight, zone)
        if local is not None and target == STRING:
            return timestamps.format_local(local)
        if local is not None and target == DATE:
            return local.date()
        if local is not None and target in TIMESTAMPS:
            return local if target == TIMESTAMP_NTZ else timestamps.from_local(local, zone)
    except (ValueError, OverflowError):
        raise _invalid(value, source, target) from None
    raise _invalid(value, source, target)


def _float_to_int(value: float, target: DataType) -> int:
    if not math.isfinite(value):
        raise SqlRuntimeError("CAST_OVERFLOW", f"the value {value} of the type DOUBLE cannot be cast to {str(target).upper()} due to an overflow")
    return int(value)  # truncates toward zero, as Spark does


def _from_string(text: str, target: DataType) -> object:
    trimmed = text.strip()
    if target in types.INTEGRAL:
        if not _INTEGER_TEXT.fullmatch(trimmed):
            raise _invalid(text, STRING, target)
        return check_integral(int(trimmed), target, f"CAST({sql_literal(text)} AS {target})")
    if isinstance(target, DecimalType) or target == DOUBLE:
        try:
            number = decimal.Decimal(trimmed) if isinstance(target, DecimalType) else float(trimmed)
        except (decimal.InvalidOperation, ValueError):
            raise _invalid(text, STRING, target) from None
        if isinstance(number, decimal.Decimal) and not number.is_finite():
            raise _invalid(text, STRING, target)
        return to_decimal(number, target) if isinstance(target, DecimalType) else number
    if target == DATE:
        return _date_from_string(text)
    if target == BOOLEAN:
        lowered = trimmed.lower()
        if lowered in _TRUE or lowered in _FALSE:
            return lowered in _TRUE
    raise _invalid(text, STRING, target)


def _date_from_string(text: str) -> datetime.date:
    """Spark's string → date: ``yyyy``, ``yyyy-[m]m``, ``yyyy-[m]m-[d]d``, optionally followed by a time."""
    match = _DATE_TEXT.fullmatch(text.strip())
    try:
        if match:
            year, month, day = (int(g) if g else 1 for g in match.groups())
            return datetime.date(year, month, day)
    except ValueError:
        pass
    raise _invalid(text, STRING, DATE)


def to_string(value: object, source: DataType) -> str:
    """Spark's text of a value: decimals keep their scale, booleans are ``true``/``false``."""
    if source == BOOLEAN or isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, decimal.Decimal):
        return format(value, "f")
    if isinstance(value, float):
        return _double_text(value)
    if isinstance(value, datetime.date):
        return value.isoformat()
    return str(value)


def _double_text(value: float) -> str:
    """Java's ``Double.toString``: plain between 1e-3 and 1e7, else ``d.dddE±n``; always a fraction digit."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0 or 1e-3 <= abs(value) < 1e7:
        text = repr(value)
        return text if "." in text or "e" in text else text + ".0"
    sign, digits, exponent = decimal.Decimal(repr(value)).normalize().as_tuple()
    shown = "".join(map(str, digits))
    power = len(digits) - 1 + exponent
    return f"{'-' if sign else ''}{shown[0]}.{shown[1:] or '0'}E{power}"


def integral_type_of(value: int) -> DataType:
    return INT if -(2**31) <= value < 2**31 else BIGINT
