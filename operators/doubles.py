"""Spark's NaN in Python: one NaN object that is equal to itself and greater than every number.

Spark SQL's DOUBLE NaN semantics (the SQL reference's "NaN Semantics"): ``NaN = NaN`` is true, all
NaNs are one group in aggregations and one value in join keys, and NaN is larger than any other
number in comparisons and ORDER BY (so ``max`` of ``{1.0, NaN}`` is NaN and ``NaN > 1.0`` is true).
A Python float NaN is the opposite: ``nan != nan``, every comparison with it is false (a sorted list
holding one is silently out of order), and since Python 3.10 its hash is its identity, so two NaNs
are two dict keys.

Rather than teach every stage, structure and expression a NaN-aware comparison, every NaN is made
the one object ``NAN`` where values enter (the stream reader, the validator's conformed rows, the
Spark runner's input) and where arithmetic can create one (``canonical``, applied by the expression
layer to DOUBLE results and by the aggregates to sums). ``NAN`` is a float (arithmetic, Arrow,
Parquet and Spark take it as one) whose comparisons are Spark's: Python gives a subclass's reflected
comparison priority, so ``1.0 < NAN`` and ``NAN > 1.0`` both ask ``NAN``, and ``sorted``, ``bisect``,
``SortedList``, ``min``/``max``, tuples, dicts and ``in`` all follow Spark with no wrapper and no cost
for ordinary values. It pickles as a reference to this module's global, so the Spark runner's
pickled edges and state bring back the same object.

-0.0 and 0.0 need nothing: Python already has them equal, with one hash, and tied in any order, as
Spark compares them.
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

_NUMBERS = (int, float, Decimal)


class SparkNaN(float):
    """The type of ``NAN`` (one instance): a NaN with Spark's equality and order.

    >>> NAN == NAN, NAN > float("inf"), 1.0 < NAN, max([1.0, NAN, 2.0]), sorted([NAN, 2.0, -0.0])
    (True, True, True, nan, [-0.0, 2.0, nan])
    >>> canonical(float("-nan")) is NAN, {NAN: "one group"}[canonical(float("nan"))]
    (True, 'one group')
    """

    __slots__ = ()

    def __new__(cls) -> SparkNaN:
        return super().__new__(cls, "nan")

    def __eq__(self, other: object) -> bool:
        return other is self or (isinstance(other, float) and other != other)

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return 0x7FF8  # any constant: one NaN, one hash

    def __lt__(self, other: object) -> bool:
        return False if isinstance(other, _NUMBERS) else NotImplemented

    def __le__(self, other: object) -> bool:
        return self.__eq__(other) if isinstance(other, _NUMBERS) else NotImplemented

    def __gt__(self, other: object) -> bool:
        return not self.__eq__(other) if isinstance(other, _NUMBERS) else NotImplemented

    def __ge__(self, other: object) -> bool:
        return True if isinstance(other, _NUMBERS) else NotImplemented

    def __neg__(self) -> SparkNaN:  # SQL's -NaN is NaN
        return self

    def __pos__(self) -> SparkNaN:
        return self

    def __abs__(self) -> SparkNaN:
        return self

    def __repr__(self) -> str:
        return "nan"

    __str__ = __repr__

    def __reduce__(self) -> str:
        return "NAN"  # pickled as this module's global: unpickling gives the same object back

    def __copy__(self) -> SparkNaN:
        return self

    def __deepcopy__(self, memo: dict) -> SparkNaN:
        return self


#: The one NaN every DOUBLE value that is NaN is.
NAN = SparkNaN()


def canonical(value: Any) -> Any:
    """``value``, or ``NAN`` when it is a NaN (of any bits): what a DOUBLE result passes through."""
    return NAN if value != value else value


def canonical_values(values: list) -> list:
    """A column's values with every NaN made ``NAN`` (the list itself when it holds none)."""
    if all(value == value for value in values):
        return values
    return [NAN if value != value else value for value in values]


class _BelowAll:
    """What ``NAN`` becomes in a descending sort key, where numbers are negated: below every number
    (SQL's ``-NaN`` is NaN, which would still sort last)."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return other is self

    def __hash__(self) -> int:
        return -0x7FF8

    def __lt__(self, other: object) -> bool:
        return other is not self if isinstance(other, (*_NUMBERS, _BelowAll)) else NotImplemented

    def __le__(self, other: object) -> bool:
        return True if isinstance(other, (*_NUMBERS, _BelowAll)) else NotImplemented

    def __gt__(self, other: object) -> bool:
        return False if isinstance(other, (*_NUMBERS, _BelowAll)) else NotImplemented

    def __ge__(self, other: object) -> bool:
        return other is self if isinstance(other, (*_NUMBERS, _BelowAll)) else NotImplemented

    def __repr__(self) -> str:
        return "-NaN (sort key)"


BELOW_ALL = _BelowAll()



#: Every finite double is an integer multiple of 2**-1074 (the least subnormal): ``x · 2**1074`` is an int.
SCALE_BITS = 1074
_SCALE = 1 << SCALE_BITS


class DoubleSum:
    """A DOUBLE sum kept exactly: the finite terms' sum as the integer ``Σx · 2**1074`` and the NaN and
    infinite terms counted, not added. What a SUM kept under deletes needs: a float running sum drifts
    (insert 0.1, 0.3, 1.005, delete 0.1 leaves 1.3049999999999997, not 1.305, and ROUND(·, 2) lands
    on the other side of the half), and ``NaN - NaN`` and ``inf - inf`` are NaN for ever after the row
    is gone. Integers add and subtract back exactly, so after any stream of inserts and deletes the
    payload is what the present rows give, whatever the order.

    Immutable; ``+``, ``-`` and negation with another ``DoubleSum`` or an int and ``*`` by an integer
    weight (a delete multiplies by -1) are all a ring aggregate, a ``SumRing`` payload or a fold does
    to a sum, so they need no other change. An int operand is an already scaled finite part: ``0``,
    a ring's zero, or the aggregate stage's running ``exact`` sum (a DOUBLE column's terms are floats,
    never ints, so a sum never mixes the two). ``total()`` reads the sum once, correctly rounded
    (Python's int true division is): NaN with a NaN or with both infinities, else the infinity, else
    the exact finite sum rounded to the nearest double (±Infinity beyond DOUBLE's range, as Spark's
    float sum overflows). Spark's own SUM is a sequential float sum, whose value depends on the order
    of the rows; the correctly rounded sum is the one a deterministic engine can give.

    >>> running = summand(1.5) + summand(NAN) + summand(float("inf"))
    >>> running.total(), (running + summand(NAN) * -1).total(), (running - summand(NAN) - summand(float("inf"))).total()
    (nan, inf, 1.5)
    >>> (summand(0.1) + summand(0.3) + summand(1.005) - summand(0.1)).total(), 0.1 + 0.3 + 1.005 - 0.1
    (1.305, 1.3049999999999997)
    """

    __slots__ = ("finite", "nan", "positive", "negative")

    def __init__(self, finite: int, nan: int, positive: int, negative: int):
        self.finite, self.nan, self.positive, self.negative = finite, nan, positive, negative

    def __add__(self, other: object) -> DoubleSum:
        if other.__class__ is DoubleSum:
            return DoubleSum(self.finite + other.finite, self.nan + other.nan, self.positive + other.positive,
                             self.negative + other.negative)
        if isinstance(other, int):
            return DoubleSum(self.finite + other, self.nan, self.positive, self.negative)
        return NotImplemented

    __radd__ = __add__

    def __mul__(self, weight: object) -> DoubleSum:
        if not isinstance(weight, int):
            return NotImplemented
        return DoubleSum(self.finite * weight, self.nan * weight, self.positive * weight, self.negative * weight)

    __rmul__ = __mul__

    def __neg__(self) -> DoubleSum:
        return DoubleSum(-self.finite, -self.nan, -self.positive, -self.negative)

    def __sub__(self, other: object) -> DoubleSum:
        return self + -other

    def __rsub__(self, other: object) -> DoubleSum:
        return -self + other

    def __bool__(self) -> bool:
        """Whether any term is left: a ring payload of zero is dropped (``SumRing.is_zero``)."""
        return bool(self.finite or self.nan or self.positive or self.negative)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not DoubleSum:
            return NotImplemented
        return (self.finite, self.nan, self.positive, self.negative) == (other.finite, other.nan, other.positive,
                                                                         other.negative)

    def __hash__(self) -> int:
        return hash((self.finite, self.nan, self.positive, self.negative))

    def total(self) -> float:
        if self.nan or (self.positive and self.negative):
            return NAN
        if self.positive or self.negative:
            return float("inf") if self.positive else float("-inf")
        return scaled_total(self.finite)

    def __repr__(self) -> str:
        return f"DoubleSum({self.total()!r}, nan={self.nan}, +inf={self.positive}, -inf={self.negative})"


def scaled_total(finite: int) -> float:
    """The double nearest ``finite · 2**-1074`` (one correctly rounded division), ±Infinity beyond range."""
    try:
        return finite / _SCALE
    except OverflowError:
        return float("inf") if finite > 0 else float("-inf")


def non_finite(value: float) -> DoubleSum:
    """A NaN or infinite term of a sum, counted (``DoubleSum``)."""
    if math.isnan(value):  # not ``value != value``: NAN equals itself
        return DoubleSum(0, 1, 0, 0)
    return DoubleSum(0, 0, 1, 0) if value > 0 else DoubleSum(0, 0, 0, 1)


def exact(value: float | int) -> int | DoubleSum:
    """A DOUBLE term of a running sum as the exact int ``value · 2**1074``, or ``non_finite(value)`` when a NaN
    or infinite float: the cheap form of ``summand`` where the sum is known to be DOUBLE (read it with
    ``exact_total``). An int (a DOUBLE expression may compute one, a CASE's ``ELSE 0``) is taken exactly too.

    >>> exact_total(exact(0.1) + exact(0.3) + exact(1.005) - exact(0.1)), exact_total(exact(2) * 3 + exact(NAN))
    (1.305, nan)
    """
    try:
        numerator, denominator = value.as_integer_ratio()  # the denominator is a power of two
    except (OverflowError, ValueError):
        return non_finite(value)
    return numerator << (SCALE_BITS + 1 - denominator.bit_length())


def exact_total(total: int | DoubleSum) -> float:
    """The double a running sum of ``exact`` terms stands for, correctly rounded."""
    return total.total() if total.__class__ is DoubleSum else scaled_total(total)


def summand(value: object) -> object:
    """``value`` as a term of a running sum whose type the caller does not know: a float is made an exact
    ``DoubleSum`` (read it with ``sum_value``), any other value (int, DECIMAL: exact already) is itself."""
    if not isinstance(value, float):
        return value
    term = exact(value)
    return term if term.__class__ is DoubleSum else DoubleSum(term, 0, 0, 0)


def sum_value(total: object) -> object:
    """The value of a running sum of ``summand`` terms: a ``DoubleSum`` read once, anything else as it is."""
    return total.total() if total.__class__ is DoubleSum else total
