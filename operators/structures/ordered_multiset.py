"""A multiset of result rows kept in the query's ORDER BY, so reading the result sorts nothing.

The view's result changes by a few rows per batch; sorting the whole result on every read costs
O(n log n) however small the change. ``OrderedMultiset`` keeps the distinct rows in a
sortedcontainers ``SortedKeyList`` (a well-kept library: O(log n) insert and delete) next to their
counts, so a batch costs O(|Δ| log n) and enumeration walks the list with constant delay.

The order is the one ``spark.sql`` gives an ORDER BY: the ORDER BY positions in their directions,
NULLs first ascending and last descending (Spark's default), NaN above every number (the one
NaN of operators/doubles.py compares so), and, for a deterministic result, ties
broken by the whole row ascending with NULLs first.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from decimal import Decimal
from functools import total_ordering
from itertools import repeat

from sortedcontainers import SortedKeyList

from operators.doubles import BELOW_ALL, NAN
from operators.zset import Row

#: ORDER BY as (column position, ascending) pairs, most significant first.
Order = tuple[tuple[int, bool], ...]


@total_ordering
class Descending:
    """Inverts the order of a value that cannot be negated (a string, a date)."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __eq__(self, other):
        return isinstance(other, Descending) and self.value == other.value

    def __lt__(self, other):
        if not isinstance(other, Descending):
            return NotImplemented
        return other.value < self.value

    def __hash__(self):
        return hash(self.value)


#: Values whose negation inverts their order: compared in C, where ``Descending`` calls Python code.
_NEGATABLE = (int, float, Decimal)


def inverted(value):
    """NaN sorts above every number (operators/doubles.py), so descending it goes first: not -NaN (NaN)."""
    if isinstance(value, _NEGATABLE):
        return BELOW_ALL if value is NAN else -value
    return Descending(value)


def order_key(order: Order) -> Callable[[Row], tuple]:
    """The sort key of a row under ``order``, ties broken by the whole row (see the module docstring).

    One flat tuple, a (flag, value) pair per term: ascending ``(v is not None, v)`` puts NULL first,
    descending ``(v is None, inverted v)`` puts it last; equal flags mean both NULL or both not, so a
    NULL is never compared with a value."""

    def key(row: Row) -> tuple:
        parts: list = []
        for position, ascending in order:
            value = row[position]
            if ascending:
                parts += (value is not None, value)
            else:
                parts += (value is None, None if value is None else inverted(value))
        for value in row:
            parts += (value is not None, value)
        return tuple(parts)

    return key


class NegativeCountError(RuntimeError):
    """A change would leave a row with a negative multiplicity (a delete of a row not in the result)."""


class OrderedMultiset:
    """Rows with positive counts (``counts``, a Counter) and, once enumerated, the same rows in order.

    The sorted list is built on the first enumeration and kept up to date by every ``apply`` after
    it: a view nobody reads in order pays nothing for it.
    """

    def __init__(self, order: Order, rows: Iterable[Row] = ()):
        self.key = order_key(order)
        self.counts: Counter = Counter(rows)
        self._sorted: SortedKeyList | None = None

    def apply(self, changes: Iterable[tuple[Row, int]]) -> None:
        """Add weighted rows. Atomic: a change that would make a count negative, or a row the order
        cannot compare with the others (a TypeError), raises and leaves the multiset as it was."""
        if not changes:  # most small batches change no result row
            return
        counts = self.counts
        totals: dict[Row, int] = {}
        for row, weight in changes:
            totals[row] = totals.get(row, counts.get(row, 0)) + weight
        negative = [row for row, count in totals.items() if count < 0]
        if negative:
            raise NegativeCountError(f"result rows with negative multiplicity {negative[:3]}")
        if self._sorted is not None:
            self._update_sorted(totals)
        for row, count in totals.items():
            if count:
                counts[row] = count
            else:
                counts.pop(row, None)

    def _update_sorted(self, totals: dict[Row, int]) -> None:
        """Insert rows that appear, remove rows that disappear; on an error, undo what was done."""
        ordered, counts = self._sorted, self.counts
        added: list[Row] = []
        removed: list[Row] = []
        try:
            for row, count in totals.items():
                present = row in counts
                if count and not present:
                    ordered.add(row)
                    added.append(row)
                elif not count and present:
                    ordered.remove(row)
                    removed.append(row)
        except BaseException:
            for row in added:
                ordered.remove(row)
            ordered.update(removed)
            raise

    def __len__(self) -> int:
        return self.counts.total()

    def rows(self) -> Iterator[Row]:
        """The rows in order, each as often as it is counted, without building a list (constant delay
        after the first call, which sorts once). An ``apply`` during the enumeration invalidates it."""
        if self._sorted is None:
            self._sorted = SortedKeyList(self.counts, key=self.key)
        counts = self.counts
        return (copy for row in self._sorted for copy in repeat(row, counts[row]))
