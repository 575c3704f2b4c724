"""Numeric functions with Spark 4's types and ANSI semantics.

Rounding follows Spark's ``RoundBase``: a decimal is rounded exactly and typed
``decimal(p - s + 1 + min(s, scale), min(s, scale))`` (``decimal(max(p - s + 1, 1 - scale), 0)`` for a
negative scale), an integer stays an integer (ARITHMETIC_OVERFLOW if rounding leaves its range),
and a double is rounded as the decimal of its shortest text (Scala's ``BigDecimal(d)``:
``round(2.675, 2)`` is 2.68, where Python's ``round`` gives 2.67). The functions of doubles
(``sqrt``, ``ln``, ``exp``, ``power``...) follow ``java.lang.StrictMath``'s special cases: a logarithm
of a number <= 0 is NULL, ``sqrt(-1)`` is NaN and an overflow is infinity, never an error. Their
finite results are the platform's C library's, which may differ from Java's fdlibm in the last bit.
"""

from __future__ import annotations

import decimal
import math
from collections.abc import Callable

from catalog import types
from catalog.types import BIGINT, DOUBLE, INT, NULL, STRING, DecimalType
from planner.ir import values
from planner.ir.functions.registry import (
    Arg,
    ArgumentTypeError,
    Bound,
    Evaluator,
    Function,
    Signature,
    numeric_type,
    plain,
)

_DOUBLE_AS_DECIMAL = DecimalType(30, 15)
_DEFAULT_DECIMAL = DecimalType(38, 18)  # a string or NULL where a decimal is expected
_ROUNDING = {"round": decimal.ROUND_HALF_UP, "bround": decimal.ROUND_HALF_EVEN,
             "ceil": decimal.ROUND_CEILING, "floor": decimal.ROUND_FLOOR}


# --- round, bround, ceil, floor -------------------------------------------------------------------


def _scale_of(args: tuple[Arg, ...], name: str) -> int:
    """The constant INT scale of a rounding function (0 when omitted; round's NULL scale types as 0,
    ceil's and floor's is refused)."""
    if len(args) < 2:
        return 0
    scale = args[1]
    if scale.type == NULL and scale.constant and name in ("round", "bround"):
        return 0
    if not (scale.constant and scale.type in types.INTEGRAL and -(2**31) <= scale.value < 2**31):
        raise ArgumentTypeError(f"{name}'s scale (an integer constant)")
    return scale.value


def _rounded_decimal(source: DecimalType, scale: int) -> DecimalType:
    """``RoundBase.dataType`` of a decimal rounded to ``scale`` digits."""
    integral = source.precision - source.scale + 1  # rounding may carry into one more digit
    if scale < 0:
        return DecimalType(min(max(integral, 1 - scale), types.MAX_PRECISION), 0)
    kept = min(source.scale, scale)
    return DecimalType(min(integral + kept, types.MAX_PRECISION), kept)


def _round_typing(name: str) -> Callable[[tuple[Arg, ...]], Signature]:
    def typing(args: tuple[Arg, ...]) -> Signature:
        source = numeric_type(args[0], f"{name}'s argument (a number)")
        scale = _scale_of(args, name)
        result = _rounded_decimal(source, scale) if isinstance(source, DecimalType) else source
        return Signature((source, *(None for _ in args[1:])), result)

    return typing


def _ceil_floor_typing(name: str) -> Callable[[tuple[Arg, ...]], Signature]:
    """``ceil(x)``/``floor(x)``: bigint, or decimal(p - s + 1, 0); with a scale, ``x`` is read as a
    decimal (an int as decimal(10,0), a double as decimal(30,15)) and rounded like ``round``."""

    def typing(args: tuple[Arg, ...]) -> Signature:
        source = numeric_type(args[0], f"{name}'s argument (a number)")
        if len(args) == 1:
            if isinstance(source, DecimalType):
                return Signature((source,), types.bounded_decimal(source.precision - source.scale + 1, 0))
            return Signature((source,), BIGINT)
        scale = _scale_of(args, name)
        as_decimal = (_DOUBLE_AS_DECIMAL if args[0].type == DOUBLE else _DEFAULT_DECIMAL if args[0].type in (STRING, NULL)
                      else types.as_decimal(source))
        return Signature((as_decimal, None), _rounded_decimal(as_decimal, scale))

    return typing


def _quantized(value: decimal.Decimal, scale: int, rounding: str) -> decimal.Decimal:
    """``value`` rounded to ``scale`` fractional digits (a negative scale rounds to tens, hundreds...)."""
    if value.as_tuple().exponent >= -scale:
        return value  # already has no more digits than the scale keeps
    # beyond 400 tens every double and decimal rounds to 0 (or to one digit for ceil/floor)
    return value.quantize(decimal.Decimal(1).scaleb(-max(scale, -400)), rounding=rounding, context=values.CONTEXT)


def _rounder(name: str) -> Evaluator:
    rounding = _ROUNDING[name]

    def bind(bound: Bound) -> Callable[..., object]:
        source, result = bound.args[0].type, bound.result
        scale = bound.args[1].value if len(bound.args) > 1 and bound.args[1].constant else 0
        if isinstance(result, DecimalType):
            return lambda x, *_: values.to_decimal(_quantized(decimal.Decimal(x), scale, rounding), result)
        if result in types.INTEGRAL and source in types.INTEGRAL:
            return lambda x, *_: values.check_integral(int(_quantized(decimal.Decimal(x), scale, rounding)), result, name)
        if result in types.INTEGRAL:  # ceil/floor of a double: a bigint, ARITHMETIC_OVERFLOW outside it
            return lambda x: _double_to_bigint(x, rounding, name)
        return lambda x, *_: _round_double(x, scale, rounding)

    return bind


def _round_double(x: float, scale: int, rounding: str) -> float:
    if not math.isfinite(x):
        return x
    exact = decimal.Decimal(values.to_string(x, DOUBLE))  # the decimal of Java's Double.toString
    return float(_quantized(exact, scale, rounding)) + 0.0  # Java's BigDecimal has no -0


def _double_to_bigint(x: float, rounding: str, name: str) -> int:
    if math.isnan(x):
        return 0  # Math.ceil(NaN).toLong, which Spark's range check lets through
    if math.isinf(x):
        raise values.SqlRuntimeError("ARITHMETIC_OVERFLOW", f"{name}({values.to_string(x, DOUBLE)}) overflows bigint")
    whole = math.ceil(x) if rounding == decimal.ROUND_CEILING else math.floor(x)
    return values.check_integral(whole, BIGINT, name)


# --- abs, sign, pmod --------------------------------------------------------------------------------


def _same_numeric(name: str) -> Callable[[tuple[Arg, ...]], Signature]:
    def typing(args: tuple[Arg, ...]) -> Signature:
        source = numeric_type(args[0], f"{name}'s argument (a number)")
        return Signature((source,), source)

    return typing


def _abs(bound: Bound) -> Callable[[object], object]:
    if bound.result in types.INTEGRAL:
        return lambda x: values.check_integral(abs(x), bound.result, "abs")
    return abs


def _sign(x: float) -> float:
    if math.isnan(x) or x == 0:
        return x  # NaN, 0.0 and -0.0 are their own sign (Math.signum)
    return 1.0 if x > 0 else -1.0


def _pmod_typing(args: tuple[Arg, ...]) -> Signature:
    """Spark's ``Pmod`` types as ``%``: integers widen, a double or a string makes both doubles, a
    decimal gives ``DecimalPrecision``'s remainder type (an integer literal counts its digits)."""
    kinds = [numeric_type(a, "pmod's arguments (numbers)") for a in args]
    known = [k for a, k in zip(args, kinds, strict=True) if a.type != NULL]
    strings = [a.type == STRING for a in args]
    if any(strings):  # a string is read as a bigint beside an integer, else as a double; never beside NULL
        if NULL in (a.type for a in args):
            raise ArgumentTypeError("pmod of a string and NULL (numbers)")
        others = [a.type for a in args if a.type != STRING]
        target = BIGINT if others and others[0] in types.INTEGRAL else DOUBLE
        return Signature((target, target), target)
    if not known or DOUBLE in known:
        return Signature((DOUBLE, DOUBLE), DOUBLE)
    if all(k in types.INTEGRAL for k in known):
        result = BIGINT if BIGINT in known else INT
        return Signature((None, None), result)
    dividend, divisor = (
        types.as_decimal(k if a.type != NULL else known[0], a.value if a.constant else None)
        for a, k in zip(args, kinds, strict=True)
    )
    return Signature((None, None), types.decimal_result("%", dividend, divisor))


def _pmod(bound: Bound) -> Callable[[object, object], object]:
    """``r = a % n; if r < 0 then (r + n) % n else r``, as Spark computes it (its int ``r + n`` wraps);
    the divisor first: when it is NULL the dividend is not computed."""
    remainder = values.arithmetic("%", bound.result)
    width = {INT: 32, BIGINT: 64}.get(bound.result)

    def pmod(dividend: Callable[[], object], divisor: Callable[[], object]) -> object:
        n = divisor()
        a = None if n is None else dividend()
        if a is None:
            return None
        r = remainder(a, n)
        if r >= 0:
            return r
        total = r + n
        if width is not None:
            total = (total + 2 ** (width - 1)) % 2**width - 2 ** (width - 1)
        return remainder(total, n)

    return pmod


# --- functions of doubles -----------------------------------------------------------------------------


def _doubles(args: tuple[Arg, ...]) -> Signature:
    """A function of doubles: every number (or numeric string) is read as a double."""
    for arg in args:
        numeric_type(arg, "its arguments (numbers)")
    return Signature((DOUBLE,) * len(args), DOUBLE)


def _ieee_divide(a: float, b: float) -> float:
    if b == 0:
        return math.nan if a == 0 or math.isnan(a) else math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


def _logarithm(x: float) -> float | None:
    """``StrictMath.log`` with Spark's asymptote: NULL at or below 0."""
    return None if x <= 0 else math.log(x)


def _log_base(base: float, x: float) -> float | None:
    if base <= 0 or x <= 0:
        return None
    return _ieee_divide(math.log(x), math.log(base))


def _sqrt(x: float) -> float:
    return math.nan if x < 0 else math.sqrt(x)


def _exp(x: float) -> float:
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf


def _power(x: float, y: float) -> float:
    """``StrictMath.pow``: NaN exponent gives NaN (C's pow gives 1 for 1^NaN), ±1^±inf is NaN, a
    negative base with a fractional exponent is NaN, 0 to a negative power is infinity."""
    if math.isnan(y) or (abs(x) == 1 and math.isinf(y)):
        return math.nan
    try:
        return math.pow(x, y)
    except OverflowError:
        negative = x < 0 and y == int(y) and int(y) % 2 == 1
        return -math.inf if negative else math.inf
    except ValueError:
        if x == 0:  # 0 ** negative: +inf, -0.0 ** odd negative integer: -inf
            odd = y == int(y) and int(y) % 2 == 1
            return -math.inf if odd and math.copysign(1.0, x) < 0 else math.inf
        return math.nan


def _unary_double(name: str, doc: str, fn: Callable[[float], object], aliases: tuple[str, ...] = ()) -> Function:
    return Function(name, "numeric", doc, (1, 1), "double", "double", typing=_doubles, evaluator=plain(fn),
                    aliases=aliases)


def _mod(call, dividend, divisor):
    return call("%", dividend, divisor)


def _rounding(name: str, doc: str) -> Function:
    return Function(
        name, "numeric", doc, (1, 2), "number[, int constant scale]", "the number's type; decimal(p-s+1+min(s,scale), min(s,scale))",
        typing=_round_typing(name), evaluator=_rounder(name),
    )


def _ceil_floor(name: str, doc: str, aliases: tuple[str, ...] = ()) -> Function:
    return Function(
        name, "numeric", doc, (1, 2), "number[, int constant scale]",
        "bigint, or decimal(p-s+1,0); with a scale a decimal", typing=_ceil_floor_typing(name),
        evaluator=_rounder(name), aliases=aliases,
    )


FUNCTIONS = (
    _rounding("round", "rounded to scale digits (negative: tens, hundreds...), halves away from zero (HALF_UP)"),
    _rounding("bround", "rounded to scale digits, halves to the even neighbour (HALF_EVEN, banker's rounding)"),
    _ceil_floor("ceil", "the smallest whole number (or number of scale digits) not below x", ("ceiling",)),
    _ceil_floor("floor", "the largest whole number (or number of scale digits) not above x"),
    Function("abs", "numeric", "the absolute value; ARITHMETIC_OVERFLOW on the smallest int or bigint", (1, 1),
             "number", "the number's type", typing=_same_numeric("abs"), evaluator=_abs),
    Function("sign", "numeric", "-1.0, 0.0 or 1.0 as x is negative, zero or positive", (1, 1), "double", "double",
             typing=_doubles, evaluator=plain(_sign), aliases=("signum",)),
    Function("mod", "numeric", "the remainder, with the dividend's sign (the same as a % b)", (2, 2),
             "two numbers", "as a % b", rewrite=_mod),
    Function("pmod", "numeric", "the remainder made non-negative for a positive divisor", (2, 2), "two numbers",
             "as a % b", typing=_pmod_typing, evaluator=_pmod, nulls="lazy"),
    Function("power", "numeric", "x raised to the power y (java.lang.StrictMath.pow)", (2, 2), "double, double",
             "double", typing=_doubles, evaluator=plain(_power), aliases=("pow",)),
    _unary_double("sqrt", "the square root; NaN for a negative number", _sqrt),
    _unary_double("ln", "the natural logarithm; NULL for a number <= 0", _logarithm),
    Function("log", "numeric", "log(x) is ln(x); log(base, x) the logarithm in base; NULL if either is <= 0",
             (1, 2), "double[, double]", "double", typing=_doubles,
             evaluator=lambda bound: _logarithm if len(bound.args) == 1 else _log_base),
    _unary_double("log10", "the base-10 logarithm; NULL for a number <= 0",
                  lambda x: None if x <= 0 else math.log10(x)),
    _unary_double("log2", "the base-2 logarithm; NULL for a number <= 0",
                  lambda x: None if x <= 0 else _ieee_divide(math.log(x), math.log(2))),
    _unary_double("exp", "e raised to the power x", _exp),
)
