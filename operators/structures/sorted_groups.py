"""Sorted groups with prefix sums: the IEDyn indexes S_n and P_n (IEDyn §5, after Definition 5.4).

A node's reduct ρ_n is grouped by the variables it shares with the node it joins (its sibling for
S_n, its parent for P_n) and, inside a group, ordered on the one variable that an inequality of the
join bounds. The two questions the join asks then take O(log n) (expected: a treap's depth) and
constant delay:

- "the summed weight of the group's rows with v < bound" (Algorithm 2, Line 10, when the parent's
  variables come from the changed side): a prefix sum over a balanced search tree whose nodes store
  their subtree's total weight, so one root-to-leaf walk answers it;
- "the group's rows with lo < v < hi, in order" (Algorithm 1 and Line 10 when the parent's
  variables come from the sibling): find the first entry in O(log n), then an in-order walk that
  stops at the first entry past ``hi`` costs amortized O(1) per row it yields (each tree edge is
  crossed twice per walk; between two rows at most O(log n), the climb out of a subtree).

The tree is a treap keyed by the sort value (any mutually comparable values: numbers, dates,
strings; the RPAI tree would not do, it stores keys as differences so needs numbers), one entry per
distinct value holding its row (or, for several, a bucket ``{row: weight}``). A group without a
sort variable uses the single key ``0``: one entry, the whole group's total in O(1).

Weights are the stage's multiplicities: ints, or ring payloads behind ``+``/``-`` with the int
``0`` as their zero (``ring_weight.RingWeight``).
"""

from __future__ import annotations

import random
from collections.abc import Iterator

from operators.zset import Row

_UNBOUNDED = object()  # compared by identity only, never pickled


class _Entry:
    """One distinct sort value: its rows, their summed weight, the subtree's summed weight.

    ``rows`` is the one row itself while the value has a single row (its weight is ``weight``),
    and a dict ``{row: weight}`` once it has more: sort values are mostly distinct, and a dict per
    entry would be the largest part of the index (about 180 bytes of the ~270 per row)."""

    __slots__ = ("key", "priority", "left", "right", "rows", "weight", "total")

    def __init__(self, key, row: Row, weight) -> None:
        self.key = key
        self.priority = random.random()
        self.left: _Entry | None = None
        self.right: _Entry | None = None
        self.rows: Row | dict[Row, object] = row
        self.weight = weight
        self.total = weight


def _total(entry: _Entry | None):
    return 0 if entry is None else entry.total


def _refresh(entry: _Entry) -> None:
    entry.total = entry.weight + _total(entry.left) + _total(entry.right)


def _lifted(lowered: _Entry, lifted: _Entry) -> _Entry:
    """The new subtree root after a rotation, both moved entries' totals brought up to date."""
    _refresh(lowered)
    _refresh(lifted)
    return lifted


def _rotate_right(h: _Entry) -> _Entry:
    x = h.left
    h.left, x.right = x.right, h
    return _lifted(h, x)


def _rotate_left(h: _Entry) -> _Entry:
    x = h.right
    h.right, x.left = x.left, h
    return _lifted(h, x)


def _merge(left: _Entry | None, right: _Entry | None) -> _Entry | None:
    """Join two treaps whose keys are all smaller in ``left``."""
    if left is None:
        return right
    if right is None:
        return left
    if left.priority > right.priority:
        left.right = _merge(left.right, right)
        _refresh(left)
        return left
    right.left = _merge(left, right.left)
    _refresh(right)
    return right


def _add(h: _Entry | None, key, row: Row, weight) -> _Entry | None:
    """``row`` with ``weight`` added under ``key``; an entry whose bucket empties is removed.

    Every comparison happens on the way down, before anything is changed, so a key that cannot be
    compared with the others raises with the tree untouched (the stage's atomicity relies on it)."""
    if h is None:
        return _Entry(key, row, weight)
    if key < h.key:
        h.left = _add(h.left, key, row, weight)
        if h.left is not None and h.left.priority > h.priority:
            return _rotate_right(h)
    elif h.key < key:
        h.right = _add(h.right, key, row, weight)
        if h.right is not None and h.right.priority > h.priority:
            return _rotate_left(h)
    else:
        rows = h.rows
        if type(rows) is not dict:
            if rows != row:
                h.rows = {rows: h.weight, row: weight}
            elif not h.weight + weight:
                return _merge(h.left, h.right)
        else:
            count = rows.pop(row, 0) + weight
            if count:
                rows[row] = count
            elif not rows:
                return _merge(h.left, h.right)
        h.weight += weight
    _refresh(h)
    return h


class IntervalSums:
    """``between`` from ``total`` and ``below``: shared by the treap and the paged B-tree of groups."""

    __slots__ = ()

    def between(self, low=_UNBOUNDED, low_inclusive: bool = False, high=_UNBOUNDED, high_inclusive: bool = False):
        """Summed weight of the rows with sort value inside the interval: two prefix sums (none for an
        empty interval, whose difference of prefix sums would count its overlap negatively)."""
        if low is not _UNBOUNDED and high is not _UNBOUNDED and (
                high < low or (high == low and not (low_inclusive and high_inclusive))):
            return 0
        acc = self.total() if high is _UNBOUNDED else self.below(high, high_inclusive)
        if low is not _UNBOUNDED:
            acc = acc - self.below(low, not low_inclusive)
        return acc


class SortedGroup(IntervalSums):
    """One group: a treap of sort values with bucketed rows and subtree sums (module docstring)."""

    __slots__ = ("root",)

    def __init__(self) -> None:
        self.root: _Entry | None = None

    def add(self, key, row: Row, weight) -> None:
        self.root = _add(self.root, key, row, weight)

    def total(self):
        return _total(self.root)

    def below(self, bound, inclusive: bool):
        """Summed weight of the rows with sort value < ``bound`` (<= if ``inclusive``): O(depth)."""
        h, acc = self.root, 0
        while h is not None:
            if h.key < bound or (inclusive and h.key == bound):
                acc = acc + _total(h.left) + h.weight
                h = h.right
            else:
                h = h.left
        return acc

    def rows(self, low=_UNBOUNDED, low_inclusive: bool = False, high=_UNBOUNDED,
             high_inclusive: bool = False) -> Iterator[tuple[Row, object]]:
        """The rows with sort value inside the interval, ascending: O(depth) to the first, then an
        in-order walk stopping at the first value past ``high`` (amortized O(1) per row)."""
        stack: list[_Entry] = []
        h = self.root
        while h is not None:
            if low is _UNBOUNDED or low < h.key or (low_inclusive and low == h.key):
                stack.append(h)
                h = h.left
            else:
                h = h.right
        while stack:
            h = stack.pop()
            if high is not _UNBOUNDED and not (h.key < high or (high_inclusive and h.key == high)):
                return
            rows = h.rows
            if type(rows) is dict:
                yield from rows.items()
            else:
                yield rows, h.weight
            h = h.right
            while h is not None:
                stack.append(h)
                h = h.left

    def __bool__(self) -> bool:
        return self.root is not None


class SortedGroups:
    """ρ_n grouped by the values of the shared (equality) variables, each group a ``SortedGroup``.

    The stage decides which rows enter (a row with a NULL grouping or sort value, or failing a
    predicate on the node's own variables, joins nothing through the index) and computes the group
    and sort value, so the index holds plain data and pickles. Groups that empty are dropped: the
    index stays proportional to ρ_n.
    """

    __slots__ = ("groups",)

    def __init__(self) -> None:
        self.groups: dict[tuple, SortedGroup] = {}

    def add(self, group: tuple, key, row: Row, weight) -> None:
        found = self.groups.get(group)
        if found is None:
            found = self.groups[group] = SortedGroup()
        found.add(key, row, weight)
        if not found:
            del self.groups[group]

    def get(self, group: tuple) -> SortedGroup | None:
        return self.groups.get(group)


#: The absent end of an interval in ``SortedGroup.between`` and ``SortedGroup.rows``.
UNBOUNDED = _UNBOUNDED
