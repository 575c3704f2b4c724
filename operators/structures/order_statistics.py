"""Exact percentiles (Spark's ``median``, ``percentile``, ``percentile_cont``, ``percentile_disc``) read
off an order-statistic index of a group's values.

A percentile needs the values at given ranks, which no ring payload gives: the group's values are
kept, one entry per copy, in a ``SortedList`` (sortedcontainers, already the sorted structure of
MIN/MAX). It is a list of sorted sublists of about a thousand values with a positional index over
their lengths (a complete binary tree of counts), so adding or removing one copy and reading the
value at rank i are each O(log n); a sublist split or merge rebuilds the index lazily on the next
rank read, O(n / 1000) once per about a thousand changes. A balanced tree with subtree counts or
a skip list would give the same bounds with a Python object per value; this keeps a million
values in a few thousand lists. The bench ``examples/benchmarks/median_scaling.py`` measures it.

The formulas are Spark's (``PercentileBase``), so results are bit for bit Spark's: of the n values
as doubles, ``percentile_cont`` (and ``percentile``, ``median``) interpolates linearly at position
``(n - 1)·p``: ``v[lo] + (pos - lo)·(v[hi] - v[lo])``, no interpolation when the two values are
equal (checked against Spark 4 bit for bit, descending order too, where the textbook
``(hi - pos)·v[lo] + (pos - lo)·v[hi]`` is one rounding off); ``percentile_disc`` takes the value at rank ``ceil(n·p) - 1`` (the smallest value whose
cumulative share reaches p). ``WITHIN GROUP (ORDER BY x DESC)`` reads the ranks from the other end.
"""

from __future__ import annotations

import math

from sortedcontainers import SortedList


def percentile(ordered: SortedList, fraction: float, discrete: bool, descending: bool) -> float | None:
    """The percentile ``fraction`` of the values in ``ordered`` (NULL when there are none).

    >>> values = SortedList([1, 2, 2, 5, 9])
    >>> percentile(values, 0.25, False, False), percentile(values, 0.1, False, True), percentile(values, 0.6, True, False)
    (2.0, 7.4, 2.0)
    """
    count = len(ordered)
    if count == 0:
        return None

    def at(rank: int) -> float:
        return float(ordered[count - 1 - rank if descending else rank])

    if discrete:
        return at(max(math.ceil(count * fraction) - 1, 0))
    position = (count - 1) * fraction
    lower, higher = math.floor(position), math.ceil(position)
    low = at(lower)
    if higher == lower:
        return low
    high = at(higher)
    if high == low:
        return low
    return low + (position - lower) * (high - low)
