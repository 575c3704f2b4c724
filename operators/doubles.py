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



class DoubleSum:
    """A running DOUBLE sum whose NaN and infinite terms are counted, not added: what a SUM kept under
    deletes needs, where ``NaN - NaN`` and ``inf - inf`` are NaN for ever after the row is gone.

    Immutable; ``+``, ``-`` and negation with a number or another ``DoubleSum`` and ``*`` by an integer
    weight (a delete multiplies by -1) are all a ring aggregate, a ``SumRing`` payload or a prefix sum
    does to a sum, so they need no other change: a term enters as ``non_finite(value)`` when it is NaN or infinite, and a sum whose counts
    all return to zero is a plain float again. ``total()`` is what IEEE addition of the present terms
    gives: NaN with a NaN or with both infinities, else the infinity, else the finite sum (its overflow
    to infinity is not modelled: a finite sum is kept as floats always are).

    >>> running = 1.5 + non_finite(NAN) + non_finite(float("inf"))
    >>> running.total(), (running + non_finite(NAN) * -1).total(), running - non_finite(NAN) - non_finite(float("inf"))
    (nan, inf, 1.5)
    """

    __slots__ = ("finite", "nan", "positive", "negative")

    def __init__(self, finite: float, nan: int, positive: int, negative: int):
        self.finite, self.nan, self.positive, self.negative = finite, nan, positive, negative

    def __add__(self, other: object) -> DoubleSum | float:
        if isinstance(other, DoubleSum):
            return _settled(self.finite + other.finite, self.nan + other.nan, self.positive + other.positive,
                            self.negative + other.negative)
        if isinstance(other, (int, float)):
            return DoubleSum(self.finite + other, self.nan, self.positive, self.negative)
        return NotImplemented

    __radd__ = __add__

    def __mul__(self, weight: object) -> DoubleSum | float:
        if not isinstance(weight, int):
            return NotImplemented
        return _settled(self.finite * weight, self.nan * weight, self.positive * weight, self.negative * weight)

    __rmul__ = __mul__

    def __neg__(self) -> DoubleSum:
        return DoubleSum(-self.finite, -self.nan, -self.positive, -self.negative)

    def __sub__(self, other: object) -> DoubleSum | float:
        return self + -other

    def __rsub__(self, other: object) -> DoubleSum | float:
        return -self + other

    def total(self) -> float:
        if self.nan or (self.positive and self.negative):
            return NAN
        if self.positive or self.negative:
            return float("inf") if self.positive else float("-inf")
        return self.finite

    def __repr__(self) -> str:
        return f"DoubleSum({self.finite!r}, nan={self.nan}, +inf={self.positive}, -inf={self.negative})"


def _settled(finite: float, nan: int, positive: int, negative: int) -> DoubleSum | float:
    return DoubleSum(finite, nan, positive, negative) if nan or positive or negative else finite


def non_finite(value: float) -> DoubleSum:
    """A NaN or infinite term of a sum, counted (``DoubleSum``)."""
    if math.isnan(value):  # not ``value != value``: NAN equals itself
        return DoubleSum(0.0, 1, 0, 0)
    return DoubleSum(0.0, 0, 1, 0) if value > 0 else DoubleSum(0.0, 0, 0, 1)


def summand(value: object) -> object:
    """``value`` as a term of a running sum: itself, or ``non_finite(value)`` when a NaN or infinite float."""
    return non_finite(value) if isinstance(value, float) and value - value != 0.0 else value
