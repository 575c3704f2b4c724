"""Spark SQL data types and Spark 4's type rules (ANSI mode, its default), as the analyzer applies them.

A maintained view must return what ``spark.sql(query)`` returns, so every expression gets the type
Spark's analyzer would give it, and the implicit casts Spark would insert:

- numbers widen ``int → bigint → decimal → double``; an integer meets a decimal as ``decimal(10,0)``
  (``bigint``: ``decimal(20,0)``; an integer *literal*: exactly its digits, ``3`` is ``decimal(1,0)``);
- a string meets an integer as ``bigint``, a decimal or double as ``double``, a date as ``date``, a
  timestamp as that timestamp;
- a date meets a timestamp as the timestamp; ``timestamp`` (``TIMESTAMP_LTZ``, an instant) meets
  ``timestamp_ntz`` (a local date-time) as ``timestamp``;
- ``+ - * /`` on decimals follow Spark's precision/scale formulas, capped at 38 digits with the
  ``allowPrecisionLoss`` adjustment (keep at least 6 fractional digits);
- ``/`` of two non-decimals is ``double``; SUM widens to ``bigint`` / ``decimal(p+10,s)`` / ``double``,
  AVG gives ``double`` or ``decimal(p+4,s+4)``.

Each rule below names the Spark source it follows (``DecimalPrecision``, ``AnsiTypeCoercion``).
``TINYINT``/``SMALLINT`` are read as ``int`` and ``FLOAT``/``REAL`` as ``double``: Spark's byte, short
and float types are not modelled (their values fit, but Spark would type their arithmetic narrower).
"""

from __future__ import annotations

import decimal
import re

import attrs

MAX_PRECISION = 38
#: The one context DECIMAL arithmetic runs in, in every layer: 100 digits hold any sum or product of
#: two DECIMAL(38) values exactly; results are then rounded HALF_UP to their type, as Spark rounds.
DECIMAL_CONTEXT = decimal.Context(prec=100, rounding=decimal.ROUND_HALF_UP, traps=[decimal.InvalidOperation])
#: Spark keeps at least this many fractional digits when a decimal result must lose precision.
MINIMUM_ADJUSTED_SCALE = 6


@attrs.frozen
class AtomicType:
    """A type without parameters; ``name`` is Spark's ``simpleString``."""

    name: str

    def __str__(self) -> str:
        return self.name


@attrs.frozen
class DecimalType:
    precision: int
    scale: int

    def __str__(self) -> str:
        return f"decimal({self.precision},{self.scale})"


@attrs.frozen
class IntervalType:
    """A year-month or day-time interval with one field (``interval day``, ``interval month``...)."""

    unit: str

    def __str__(self) -> str:
        return f"interval {self.unit}"


@attrs.frozen
class UnsupportedType:
    """A column type spark-ivm lacks (``BINARY``, ``ARRAY<INT>``, ``MAP<...>``...), kept as the user
    wrote it: its table stays usable, and only a view that reads the column is refused, naming it."""

    written: str

    def __str__(self) -> str:
        return self.written


DataType = AtomicType | DecimalType | IntervalType

BOOLEAN = AtomicType("boolean")
INT = AtomicType("int")
BIGINT = AtomicType("bigint")
DOUBLE = AtomicType("double")
STRING = AtomicType("string")
DATE = AtomicType("date")
#: Spark's ``TIMESTAMP`` (``TIMESTAMP_LTZ``): an instant, shown in the session time zone
TIMESTAMP = AtomicType("timestamp")
#: ``TIMESTAMP_NTZ``: a local date-time, no time zone
TIMESTAMP_NTZ = AtomicType("timestamp_ntz")
TIMESTAMPS = (TIMESTAMP, TIMESTAMP_NTZ)
NULL = AtomicType("void")

INTEGRAL = (INT, BIGINT)
_INTEGRAL_RANGES = {INT: (-(2**31), 2**31 - 1), BIGINT: (-(2**63), 2**63 - 1)}
_INTEGRAL_AS_DECIMAL = {INT: DecimalType(10, 0), BIGINT: DecimalType(20, 0)}

# DDL and Spark spellings of each type (sqlglot's names included): what `parse_type` accepts.
_NAMES = {
    BOOLEAN: ("boolean", "bool"),
    INT: ("int", "integer", "tinyint", "smallint", "mediumint", "byte", "short"),
    BIGINT: ("bigint", "long"),
    DOUBLE: ("double", "float", "real", "double precision"),
    STRING: ("string", "varchar", "char", "text", "nchar", "nvarchar", "name", "character varying", "character"),
    DATE: ("date",),
    # sqlglot writes Spark's TIMESTAMP back as TIMESTAMP, and reads TIMESTAMPTZ / WITH TIME ZONE as it
    TIMESTAMP: ("timestamp", "timestamp_ltz", "timestamptz", "timestamp with time zone",
                "timestamp with local time zone"),
    TIMESTAMP_NTZ: ("timestamp_ntz", "timestamp without time zone"),
    NULL: ("void", "null"),
}
_BY_NAME = {name: t for t, names in _NAMES.items() for name in names}
_DECIMAL = re.compile(r"(?:decimal|dec|numeric)\s*(?:\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\))?")
_SIZED = re.compile(r"(\w+(?: \w+)?)\s*\(\s*\d+\s*\)")


class TypeParseError(ValueError):
    pass


def parse_type(text: str) -> DataType:
    """The type a DDL or Spark type name denotes (``DECIMAL(15,2)``, ``VARCHAR(25)``, ``bigint``...).

    >>> parse_type("DECIMAL(15,2)"), parse_type("varchar(25)"), parse_type("decimal")
    (DecimalType(precision=15, scale=2), AtomicType(name='string'), DecimalType(precision=10, scale=0))
    """
    name = " ".join(text.strip().lower().split())
    if match := _DECIMAL.fullmatch(name):
        precision, scale = match.group(1), match.group(2)
        return decimal(int(precision or 10), int(scale or 0))
    if name.startswith("interval "):
        return IntervalType(name.removeprefix("interval ").strip())
    if match := _SIZED.fullmatch(name):
        name = match.group(1)
    try:
        return _BY_NAME[name]
    except KeyError:
        raise TypeParseError(f"unsupported type {text!r}") from None


def to_type(value: DataType | str) -> DataType:
    """attrs converter: a type, or its name."""
    return parse_type(value) if isinstance(value, str) else value


def decimal(precision: int, scale: int) -> DecimalType:
    if not 0 < precision <= MAX_PRECISION or not 0 <= scale <= precision:
        raise TypeParseError(f"decimal({precision},{scale}) is not a valid decimal type (precision 1..38, 0 <= scale <= precision)")
    return DecimalType(precision, scale)


def is_numeric(t: DataType) -> bool:
    return t in INTEGRAL or t == DOUBLE or isinstance(t, DecimalType)


def integral_range(t: DataType) -> tuple[int, int]:
    return _INTEGRAL_RANGES[t]


def bounded_decimal(precision: int, scale: int) -> DecimalType:
    """``DecimalType.bounded``: cap both at 38 without keeping more fractional digits."""
    return DecimalType(min(precision, MAX_PRECISION), min(scale, MAX_PRECISION))


def adjusted_decimal(precision: int, scale: int) -> DecimalType:
    """``DecimalType.adjustPrecisionScale`` (allowPrecisionLoss): a result wider than 38 digits keeps
    its integral digits and gives up fractional ones, down to at least 6."""
    if precision <= MAX_PRECISION:
        return DecimalType(precision, scale)
    integral_digits = precision - scale
    min_scale = min(scale, MINIMUM_ADJUSTED_SCALE)
    return DecimalType(MAX_PRECISION, max(MAX_PRECISION - integral_digits, min_scale))


def as_decimal(t: DataType, literal_value: object = None) -> DecimalType:
    """The decimal an integral (or decimal) operand is read as; an integer literal needs only its digits."""
    if isinstance(t, DecimalType):
        return t
    if literal_value is not None and isinstance(literal_value, int):
        return DecimalType(max(len(str(abs(literal_value))), 1), 0)
    return _INTEGRAL_AS_DECIMAL[t]


def wider_decimal(a: DecimalType, b: DecimalType) -> DecimalType:
    """``DecimalPrecision.widerDecimalType``: room for both integral parts and both scales."""
    scale = max(a.scale, b.scale)
    integral = max(a.precision - a.scale, b.precision - b.scale)
    return bounded_decimal(integral + scale, scale)


def decimal_result(op: str, a: DecimalType, b: DecimalType) -> DecimalType:
    """``DecimalPrecision``'s result type of ``a op b`` (Spark 4, allowPrecisionLoss on)."""
    p1, s1, p2, s2 = a.precision, a.scale, b.precision, b.scale
    match op:
        case "+" | "-":
            scale = max(s1, s2)
            return adjusted_decimal(max(p1 - s1, p2 - s2) + scale + 1, scale)
        case "*":
            return adjusted_decimal(p1 + p2 + 1, s1 + s2)
        case "/":
            scale = max(MINIMUM_ADJUSTED_SCALE, s1 + p2 + 1)
            return adjusted_decimal(p1 - s1 + s2 + scale, scale)
        case "%":
            scale = max(s1, s2)
            return adjusted_decimal(min(p1 - s1, p2 - s2) + scale, scale)
    raise ValueError(f"no decimal result type for {op}")


def common_type(a: DataType, b: DataType, a_literal: object = None, b_literal: object = None) -> DataType | None:
    """The type both sides are cast to when compared or merged (CASE branches, IN lists, COALESCE):
    ``AnsiTypeCoercion.findWiderTypeForTwo`` plus its string promotion. None: Spark refuses.

    >>> str(common_type(INT, STRING)), str(common_type(DecimalType(15, 2), STRING)), str(common_type(DATE, STRING))
    ('bigint', 'double', 'date')
    >>> str(common_type(DATE, TIMESTAMP_NTZ)), str(common_type(TIMESTAMP_NTZ, TIMESTAMP))
    ('timestamp_ntz', 'timestamp')
    """
    if a == b:
        return a
    if a == NULL:
        return b
    if b == NULL:
        return a
    if STRING in (a, b):
        other = b if a == STRING else a
        if other in INTEGRAL:
            return BIGINT
        if other == DOUBLE or isinstance(other, DecimalType):
            return DOUBLE
        if other in (DATE, BOOLEAN) or other in TIMESTAMPS:  # a string meets these as that type (checked on Spark 4)
            return other
        return None
    if {a, b} <= {DATE, *TIMESTAMPS}:
        # a date widens to either timestamp; the two timestamps meet as TIMESTAMP (LTZ)
        return TIMESTAMP if TIMESTAMP in (a, b) else TIMESTAMP_NTZ
    if not (is_numeric(a) and is_numeric(b)):
        return None
    if DOUBLE in (a, b):
        return DOUBLE
    if a in INTEGRAL and b in INTEGRAL:
        return BIGINT
    return wider_decimal(as_decimal(a, a_literal), as_decimal(b, b_literal))


def sum_type(t: DataType) -> DataType | None:
    """``Sum.resultType``: integers sum as bigint, decimal(p,s) as decimal(p+10,s), doubles as double."""
    if t in INTEGRAL:
        return BIGINT
    if isinstance(t, DecimalType):
        return bounded_decimal(t.precision + 10, t.scale)
    if t in (DOUBLE, NULL):
        return DOUBLE
    return None


def avg_type(t: DataType) -> DataType | None:
    """``Average.resultType``: decimal(p,s) averages as decimal(p+4,s+4); other numbers as double."""
    if isinstance(t, DecimalType):
        return bounded_decimal(t.precision + 4, t.scale + 4)
    if t in INTEGRAL or t in (DOUBLE, NULL):
        return DOUBLE
    return None


def literal_decimal_type(digits: str) -> DecimalType:
    """The type Spark gives a decimal literal: ``0.06`` is decimal(2,2), ``1.5`` decimal(2,1), ``100.0`` decimal(4,1).

    >>> str(literal_decimal_type("0.06")), str(literal_decimal_type("100.0"))
    ('decimal(2,2)', 'decimal(4,1)')
    """
    whole, _, fraction = digits.lstrip("-").partition(".")
    whole = whole.lstrip("0")
    scale = len(fraction)
    return DecimalType(max(len(whole) + scale, scale, 1), scale)
