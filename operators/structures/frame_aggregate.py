"""The payload of a prefix-aggregate index over a window partition's rows: what a running frame reads.

A running window aggregate (``SUM(x) OVER (PARTITION BY p ORDER BY o)``) at a row is the aggregate
over the rows before it in window order. Kept as the weight of each row in a treap with subtree sums
(``sorted_groups.SortedGroup``, IEDyn's prefix-sum index, the RPAI tree's subtree sums of §3.1 over
keys that need no arithmetic), the aggregate up to any row is one root-to-leaf walk, O(log n), so
a change re-reads only the rows whose running value it changes.

``FramePayload`` is the weight: row multiplicity, non-NULL count, sum, least and greatest value.
Subtree totals only ever add payloads (``+``); a delete adds the negated payload of the same row to
its own bucket, where min and max are that row's value anyway. Sums must be exact (ints, DECIMAL):
subtree sums of floats depend on the tree's shape, so a DOUBLE sum would not be the same value
when read again, and its retraction would miss the row once emitted (the stage re-reads those).
"""

from __future__ import annotations


class FramePayload:
    """One row's (or a subtree's) contribution to a frame aggregate; falsy when it holds no row."""

    __slots__ = ("rows", "count", "total", "low", "high")

    def __init__(self, rows: int, count: int, total, low, high) -> None:
        self.rows, self.count, self.total, self.low, self.high = rows, count, total, low, high

    @classmethod
    def of(cls, value: object, summed: bool) -> FramePayload:
        """One row whose argument is ``value`` (None: NULL); ``summed`` keeps the sum of values."""
        if value is None:
            return cls(1, 0, 0, None, None)
        return cls(1, 1, value if summed else 0, value, value)

    def scaled(self, weight: int) -> FramePayload:
        """``weight`` copies of this row (negative: taken out)."""
        return FramePayload(self.rows * weight, self.count * weight, self.total * weight, self.low, self.high)

    def __add__(self, other: object) -> FramePayload:
        if other == 0 and not isinstance(other, FramePayload):
            return self
        if not isinstance(other, FramePayload):
            return NotImplemented
        return FramePayload(self.rows + other.rows, self.count + other.count, self.total + other.total,
                            _least(self.low, other.low), _greatest(self.high, other.high))

    __radd__ = __add__

    def __bool__(self) -> bool:
        return self.rows != 0


def _least(a, b):
    return b if a is None else a if b is None or not b < a else b


def _greatest(a, b):
    return b if a is None else a if b is None or not a < b else b
