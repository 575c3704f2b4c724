"""The indexes of IEDyn Definition 5.4 and the probes into them: how a node's rows are filed (S_n, P_n)
and how a tuple on the other side of a join finds its compatible rows (an interval on the sort
variable, checks on the rest), one probe at a time or a batch of probes swept together (§4)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

import attrs

from operators.stages.gjt.tree import Bound
from operators.structures.sorted_groups import UNBOUNDED, SortedGroup, SortedGroups
from operators.zset import Row

# A comparison compiled to positions: (position of left, strict, position of right, offset or None).
Check = tuple[int, bool, int, object]


def holds(left, strict: bool, right, offset) -> bool:
    """``left < right + offset`` (``<=`` unless strict), false when either side is NULL."""
    if left is None or right is None:
        return False
    if offset is not None:
        right = right + offset
    return left < right if strict else left <= right


def all_hold(checks: tuple[Check, ...], row: Row) -> bool:
    for left, strict, right, offset in checks:
        if not holds(row[left], strict, row[right], offset):
            return False
    return True


@attrs.frozen
class IndexSpec:
    """How one index (an S_n or a P_n) files the rows of node ``node``."""

    node: int
    group: tuple[int, ...]  # positions of the shared variables, in the probe's order
    sort: int | None  # position of the bounded variable
    checks: tuple[Check, ...]  # predicates over the node's own variables

    def file(self, index: SortedGroups, row: Row, weight) -> None:
        """Add ``row`` to ``index`` unless it can join nothing through it (a NULL grouping or sort
        value, a failed predicate over the node's own variables)."""
        group = tuple(row[p] for p in self.group)
        sort = 0 if self.sort is None else row[self.sort]
        if None not in group and sort is not None and all_hold(self.checks, row):
            index.add(group, sort, row, weight)


@attrs.frozen
class Probe:
    """How a tuple on the other side of a join (a delta row, a parent tuple) finds its rows in an index.

    ``bounds`` are (probe position, is a lower bound, inclusive, offset to subtract from/add to the
    probe value) on the index's sort variable; ``residual`` the predicates between the two sides
    on other variables of the index, each (probe position, indexed position, strict, offset,
    probe is left), checked per row.
    """

    index: int
    spec: IndexSpec
    group: tuple[int, ...]
    checks: tuple[Check, ...]  # predicates over the probe's own variables
    bounds: tuple[tuple[int, bool, bool, object], ...]
    residual: tuple[tuple[int, int, bool, object, bool], ...]

    def interval(self, probe: Row) -> tuple | None:
        """(low, low inclusive, high, high inclusive) on the sort variable; None if a bound is NULL."""
        low, low_inclusive, high, high_inclusive = UNBOUNDED, False, UNBOUNDED, False
        for position, lower, inclusive, offset in self.bounds:
            value = probe[position]
            if value is None:
                return None
            if lower:
                if offset is not None:
                    value = value - offset
                if low is UNBOUNDED or low < value or (low == value and not inclusive):
                    low, low_inclusive = value, inclusive
            else:
                if offset is not None:
                    value = value + offset
                if high is UNBOUNDED or value < high or (high == value and not inclusive):
                    high, high_inclusive = value, inclusive
        return low, low_inclusive, high, high_inclusive

    def rows(self, indexes: list[SortedGroups], probe: Row) -> Iterator[tuple[Row, object]]:
        """The indexed rows compatible with ``probe``, in sort order."""
        return self.rows_in(indexes[self.index], probe)

    def rows_in(self, index: SortedGroups, probe: Row) -> Iterator[tuple[Row, object]]:
        """``rows`` in an index filed by ``spec`` other than the state's (the batch's touched tuples)."""
        group = self.lookup(index, probe)
        if group is None:
            return
        interval = self.interval(probe)
        if interval is None:
            return
        if self.residual:
            for row, weight in group.rows(*interval):
                if cross_hold(self.residual, probe, row):
                    yield row, weight
        else:
            yield from group.rows(*interval)

    def joined(self, indexes: list[SortedGroups], probes: dict[Row, object]) -> Iterator[tuple[Row, object]]:
        """Every indexed row compatible with some probe row, once per group of probes, with its
        weight times the summed weight of those probes (which may be 0: the row is still reached).

        The probes of one group are swept together (IEDyn §4's hybrid of sort-merge and index
        nested loops): their intervals sorted by lower and by upper end, one in-order walk of the
        group keeps the sum of the intervals containing the current row, and jumps (O(log n)) over
        stretches no interval covers. A batch of m probes into a group then costs O(m log m + the
        rows in the union of their intervals) rather than the sum of the intervals' lengths.
        """
        if self.residual:
            for probe, weight in probes.items():
                for row, row_weight in self.rows(indexes, probe):
                    yield row, weight * row_weight
            return
        by_group: dict[tuple, list] = defaultdict(list)
        for probe, weight in probes.items():
            if self.checks and not all_hold(self.checks, probe):
                continue
            interval = self.interval(probe)
            if interval is not None:
                by_group[tuple(probe[p] for p in self.group)].append((interval, weight))
        index = indexes[self.index]
        for key, items in by_group.items():
            group = index.get(key)
            if group is None:
                continue
            if len(items) == 1:
                (interval, weight), = items
                for row, row_weight in group.rows(*interval):
                    yield row, weight * row_weight
            elif self.spec.sort is None:  # no inequality: every probe meets every row
                total = sum(weight for _, weight in items)
                for row, row_weight in group.rows():
                    yield row, total * row_weight
            else:
                yield from _sweep(group, self.spec.sort, items)

    def lookup(self, index: SortedGroups, probe: Row) -> SortedGroup | None:
        if self.checks and not all_hold(self.checks, probe):
            return None
        return index.get(tuple(probe[p] for p in self.group))

    def total(self, indexes: list[SortedGroups], probe: Row):
        """Summed weight of the compatible rows: O(log n) prefix sums unless residual checks remain."""
        group = self.lookup(indexes[self.index], probe)
        if group is None:
            return 0
        interval = self.interval(probe)
        if interval is None:
            return 0
        if self.residual:
            acc = 0
            for row, weight in group.rows(*interval):
                if cross_hold(self.residual, probe, row):
                    acc = acc + weight
            return acc
        return group.between(*interval)


def _sweep(group: SortedGroup, sort: int, items: list) -> Iterator[tuple[Row, object]]:
    """``Probe.joined`` for one group and several probe intervals ((low, low inclusive, high, high
    inclusive), weight). Ends are compared as pairs: a row's value v as (v, 1), a lower end as
    (value, 0) if inclusive else (value, 2), an upper end as (value, 2) if inclusive else (value, 0),
    so "v is above the lower end" is one tuple comparison whatever the inclusivity.

    A walk restarted at the next lower end admits that interval on its first row (``rows`` starts
    there with the same inclusivity), so every restart makes progress."""
    lows, highs = [], []
    for (low, low_inclusive, high, high_inclusive), weight in items:
        low_end = None if low is UNBOUNDED else (low, 0 if low_inclusive else 2)
        high_end = None if high is UNBOUNDED else (high, 2 if high_inclusive else 0)
        if low_end is not None and high_end is not None and not low_end < high_end:
            continue  # an empty interval
        lows.append((low_end, low, low_inclusive, weight))
        if high_end is not None:
            highs.append((high_end, weight))
    lows.sort(key=lambda item: (0,) if item[0] is None else (1, item[0]))
    highs.sort(key=lambda item: item[0])
    count, i, j, active, members = len(lows), 0, 0, 0, 0
    while i < count:
        _, low, low_inclusive, _ = lows[i]
        for row, row_weight in group.rows(low, low_inclusive):
            value = (row[sort], 1)
            while i < count and (lows[i][0] is None or lows[i][0] < value):
                active += lows[i][3]
                members += 1
                i += 1
            while j < len(highs) and not value < highs[j][0]:
                active -= highs[j][1]
                members -= 1
                j += 1
            if members:
                yield row, active * row_weight
            else:
                break  # nothing covers this row: jump to the next lower end (or stop)
        else:
            return


def cross_hold(checks, probe: Row, row: Row) -> bool:
    for probe_position, row_position, strict, offset, probe_is_left in checks:
        if probe_is_left:
            ok = holds(probe[probe_position], strict, row[row_position], offset)
        else:
            ok = holds(row[row_position], strict, probe[probe_position], offset)
        if not ok:
            return False
    return True


def offset_of(bound: Bound):
    return None if bound.offset == 0 else bound.offset


def compiled_check(bound: Bound, positions: dict[str, int]) -> Check:
    return positions[bound.left], bound.op == "<", positions[bound.right], offset_of(bound)

