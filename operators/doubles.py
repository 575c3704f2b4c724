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

from decimal import Decimal
from typing import Any

_NUMBERS = (int, float, Decimal)


class SparkNaN(float):
    """The type of ``NAN`` (one instance): a NaN with Spark's equality and order."""

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

