"""Window functions maintained per partition on an ordered index of the partition's rows.

The stage is keyed by the PARTITION BY values. Per partition it keeps the rows in window order (a
sortedcontainers ``SortedList``: O(log n) insert, delete, bisect and positional access) and, for
DENSE_RANK, the distinct ORDER BY values. A row's window values are functions of its position:
ROW_NUMBER is the position, RANK the position of its first peer, DENSE_RANK the position of its
ORDER BY value among the distinct ones, NTILE(n) a function of the position and the partition's size
(Spark's NTile: ``_bucket``), LAG/LEAD the row at position ∓ offset, an aggregate a fold over the
frame's positions.

A change at row e can only alter the values of a contiguous run of rows around e, which each
function states (``_reach``): ROW_NUMBER and the running frames the rows from e on, RANK, DENSE_RANK
and RANGE frames from e's first peer on, LAG (and ROWS n PRECEDING) e and the ``offset`` rows after
it, LEAD the ``offset`` rows before it, a whole-partition aggregate and NTILE (whose buckets move
when the partition's size does) every row. The stage takes the
union of those runs over the batch's changes, as bounds in the order (not positions, which shift),
computes the run's output rows after the change and before it (the changes taken out and put back:
O(changes · log n)), and emits the difference, so exactly the rows whose values changed are emitted.

The top-N pattern (``WHERE rn <= k`` above the window) passes ``rank_limit``: the run is cut at the
first row ranked above k (ranking values never decrease along the order), so a change far below the
top N costs O(log n) and one inside it O(log n + k) (plus ties, for RANK and DENSE_RANK).

Ties: rows equal on ORDER BY are ordered by the whole row, NULLs first, so ROW_NUMBER, LAG/LEAD and
ROWS frames are deterministic; Spark leaves the order of peers unspecified, so there the numbering
of peers may differ from one Spark run to the next and from this one (RANK, DENSE_RANK and RANGE
frames give peers one value and do not depend on it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import attrs
from sortedcontainers import SortedList

from operators.doubles import NAN, sum_value, summand
from operators.stages.average import average
from operators.stages.base import Change, KeyedStage, StageDescription, apply_then_read
from operators.structures.frame_aggregate import FramePayload
from operators.structures.ordered_multiset import inverted
from operators.structures.sorted_groups import SortedGroup
from operators.zset import Changelog, Row, consolidate

RANKING = ("row_number", "rank", "dense_rank")
#: An entry of a partition's index: (the order key, flat: ORDER BY terms then the whole row; the row).
Entry = tuple[tuple, Row]


@attrs.frozen
class WindowFunctionSpec:
    """One window function: ``kind`` (row_number, rank, dense_rank, ntile, lag, lead, sum, count, avg,
    min, max); ``argument`` its value of a row (None: COUNT(*) or a ranking function); ``offset`` LAG/LEAD's;
    ``default`` LAG/LEAD's value of the current row when there is no row at the offset;
    ``frame``: ``partition``, ``range`` or ``rows``, ``preceding`` None for UNBOUNDED PRECEDING."""

    kind: str
    argument: Callable[[Row], object] | None = attrs.field(default=None, eq=False)
    offset: int = 0
    default: Callable[[Row], object] | None = attrs.field(default=None, eq=False)
    frame: str = "rows"
    preceding: int | None = None
    #: a running frame read off a prefix-aggregate index (exact arguments only: frame_aggregate.py)
    indexed: bool = False
    #: NTILE's number of buckets
    buckets: int = 0


class PartitionIndex:
    """One partition: its rows in window order, the distinct ORDER BY keys when DENSE_RANK needs them,
    and a prefix-aggregate index (operators/structures/frame_aggregate.py) per indexed running frame."""

    __slots__ = ("entries", "peers", "peer_counts", "prefixes")

    def __init__(self, dense: bool, indexed: int) -> None:
        self.entries = SortedList()
        self.peers: SortedList | None = SortedList() if dense else None
        self.peer_counts: dict[tuple, int] = {}
        self.prefixes = tuple(SortedGroup() for _ in range(indexed))

    def apply(self, changes: list[tuple[Entry, int, tuple, tuple[FramePayload, ...]]], sign: int) -> None:
        """Add (``sign`` 1) or take out (-1) each entry ``weight`` times."""
        entries, peers, counts = self.entries, self.peers, self.peer_counts
        for entry, weight, prefix, payloads in changes:
            weight *= sign
            for index, payload in zip(self.prefixes, payloads, strict=True):
                index.add(entry, entry[1], payload.scaled(weight))
            for _ in range(abs(weight)):
                if weight > 0:
                    entries.add(entry)
                else:
                    entries.remove(entry)
            if peers is not None:
                before = counts.get(prefix, 0)
                after = before + weight
                if after:
                    counts[prefix] = after
                else:
                    del counts[prefix]
                if before <= 0 < after:
                    peers.add(prefix)
                elif after <= 0 < before:
                    peers.remove(prefix)


class _Fold:
    """An aggregate over the rows of a frame, added one at a time (frames are re-read, never shrunk)."""

    __slots__ = ("kind", "count", "total")

    def __init__(self, kind: str) -> None:
        self.kind, self.count, self.total = kind, 0, None

    @classmethod
    def of(cls, kind: str, payload: FramePayload | int) -> _Fold:
        """The fold of the rows a prefix-aggregate index summed into ``payload`` (0: none)."""
        fold = cls(kind)
        if payload:
            fold.count = payload.count
            fold.total = payload.low if kind == "min" else payload.high if kind == "max" else payload.total
            fold.total = None if fold.count == 0 else fold.total
        return fold

    def add(self, value: object) -> None:
        if value is None:
            return
        self.count += 1
        if self.kind == "count":
            return
        total = self.total
        if total is None:
            self.total = summand(value) if self.kind in ("sum", "avg") else value
        elif self.kind == "min":
            self.total = value if value < total else total
        elif self.kind == "max":
            self.total = value if total < value else total
        else:  # a double exactly (operators/doubles.py): one rounding when read, as the aggregate stage's SUM
            self.total = total + summand(value)

    def result(self) -> object:
        if self.kind == "count":
            return self.count
        if self.count == 0:
            return None
        total = sum_value(self.total)
        result = average(total, self.count) if self.kind == "avg" else total
        return NAN if result != result else result


class WindowStage(KeyedStage):
    """Keyed by the partition; emits the child's rows with the window values appended (module docstring)."""

    def __init__(self, partition_names: tuple[str, ...], partition_by: tuple[Callable[[Row], object], ...],
                 order_by: tuple[tuple[Callable[[Row], object], bool, bool], ...],
                 functions: tuple[WindowFunctionSpec, ...], output_columns: tuple[str, ...],
                 description: StageDescription, rank_limit: tuple[int, int] | None = None):
        self.name = f"window by {', '.join(partition_names) or '()'}"
        self.partition_by = partition_by
        self.order_by = order_by  # (value of row, ascending, nulls first)
        self.functions = functions
        self.output_columns = output_columns
        self.description = description
        self.rank_limit = rank_limit  # (index of the ranking function, its largest value emitted)
        self._prefix = 2 * len(order_by)
        self._dense = any(f.kind == "dense_rank" for f in functions)
        self._indexed = tuple(f for f in functions if f.indexed)

    def key_of(self, port: int, row: Row) -> tuple:
        return tuple(p(row) for p in self.partition_by)

    def describe(self) -> StageDescription:
        return self.description

    def entry(self, row: Row) -> Entry:
        """The row's place in window order: ORDER BY terms as (NULL flag, value) pairs, then the row."""
        parts: list = []
        for value_of, ascending, nulls_first in self.order_by:
            value = value_of(row)
            flag = (value is not None) if nulls_first else (value is None)
            parts += (flag, value if ascending or value is None else inverted(value))
        for value in row:
            parts += (value is not None, value)
        return tuple(parts), row

    def process(self, key: tuple, state: PartitionIndex | None, changes: list[Change]) -> tuple[PartitionIndex | None, Changelog]:
        state = state if state is not None else PartitionIndex(self._dense, len(self._indexed))
        prepared = []
        for row, weight in consolidate((c.row, c.weight) for c in changes):
            entry = self.entry(row)
            payloads = tuple(FramePayload.of(self._argument(f, row), f.kind in ("sum", "avg")) for f in self._indexed)
            prepared.append((entry, weight, entry[0][: self._prefix], payloads))
        start, end = self._reach(state, prepared)

        def read() -> Changelog:
            nonlocal start, end
            after_start, after_end = self._reach(state, prepared)
            start, end = _earlier(start, after_start), _later(end, after_end)
            after = self._rows(state, start, end)
            state.apply(prepared, -1)
            try:
                before = self._rows(state, start, end)
            finally:
                state.apply(prepared, 1)
            return consolidate([(row, -1) for row in before] + [(row, 1) for row in after])

        out = apply_then_read(lambda sign: state.apply(prepared, sign), read)
        return (state if state.entries else None), out

    def _reach(self, state: PartitionIndex, prepared: list) -> tuple[tuple | None, tuple | None]:
        """Bounds (in window order, None: unbounded) of the rows whose values the changes may alter."""
        entries = state.entries
        last = len(entries) - 1
        start = end = ...
        for entry, _, prefix, _ in prepared:
            position = entries.bisect_left(entry)
            for function in self.functions:
                kind = function.kind
                if kind in ("lag", "lead") or (kind not in RANKING and function.preceding is not None):
                    reach = function.offset if kind in ("lag", "lead") else function.preceding
                    if kind == "lead":
                        low, high = (entries[max(position - reach, 0)] if last >= 0 else entry), entry
                    else:
                        low, high = entry, (entries[min(position + reach, last)] if last >= 0 else entry)
                elif kind == "ntile":  # the partition's size may change: every row's bucket may move
                    low, high = None, None
                elif kind in RANKING or function.frame == "rows":
                    # a row before e keeps its number, rank, dense rank and ROWS prefix
                    low, high = entry, None
                elif function.frame == "partition":
                    low, high = None, None
                else:  # a RANGE frame: e's peers before it in the order read e too
                    low, high = (prefix,), None
                start = low if start is ... else _earlier(start, low)
                end = high if end is ... else _later(end, high)
        return (None if start is ... else start), (None if end is ... else end)

    def _rows(self, state: PartitionIndex, start: tuple | None, end: tuple | None) -> list[Row]:
        """The output rows of the partition's rows from ``start`` to ``end``, cut at the rank limit."""
        entries = state.entries
        low = 0 if start is None else entries.bisect_left(start)
        high = len(entries) if end is None else entries.bisect_right(end)
        if low >= high:
            return []
        columns = [self._values(function, state, low, high) for function in self.functions]
        out = []
        limit = self.rank_limit
        for (_, row), *values in zip(entries.islice(low, high), *columns, strict=False):
            if limit is not None and values[limit[0]] > limit[1]:
                break
            out.append(row + tuple(values))
        return out

    def _values(self, function: WindowFunctionSpec, state: PartitionIndex, low: int, high: int) -> Iterator:
        """The function's values at positions ``low`` .. ``high`` - 1, lazily (the top-N cut stops early)."""
        kind, entries, prefix = function.kind, state.entries, self._prefix
        if kind == "row_number":
            yield from range(low + 1, high + 1)
        elif kind in ("rank", "dense_rank"):
            previous, value = None, 0
            for position, (key, _) in enumerate(entries.islice(low, high), low):
                peers = key[:prefix]
                if peers != previous:
                    if previous is None:
                        value = (entries.bisect_left((peers,)) if kind == "rank" else state.peers.bisect_left(peers)) + 1
                    else:
                        value = position + 1 if kind == "rank" else value + 1
                    previous = peers
                yield value
        elif kind == "ntile":
            for position in range(low, high):
                yield _bucket(position, len(entries), function.buckets)
        elif kind in ("lag", "lead"):
            step = -function.offset if kind == "lag" else function.offset
            for position, (_, row) in enumerate(entries.islice(low, high), low):
                neighbour = position + step
                yield function.argument(entries[neighbour][1]) if 0 <= neighbour < len(entries) else function.default(row)
        elif function.frame == "partition":
            value = self._fold(function, entries.islice(0, len(entries))).result()
            for _ in range(low, high):
                yield value
        elif function.preceding is not None:
            for position in range(low, high):
                yield self._fold(function, entries.islice(max(position - function.preceding, 0), position + 1)).result()
        else:
            yield from self._running(function, state, low, high)

    def _running(self, function: WindowFunctionSpec, state: PartitionIndex, low: int, high: int) -> Iterator:
        """UNBOUNDED PRECEDING to the current row (ROWS) or to its last peer (RANGE): a prefix fold,
        its start re-read from the partition's first row."""
        entries, prefix = state.entries, self._prefix
        rows_frame = function.frame == "rows"
        first = low if rows_frame else entries.bisect_left((entries[low][0][:prefix],))
        if function.indexed:
            # by identity: specs compare by kind and frame only (two SUMs of different columns are equal)
            index = state.prefixes[next(i for i, f in enumerate(self._indexed) if f is function)]
            fold = _Fold.of(function.kind, index.below(entries[first], False) if first < len(entries) else index.total())
        else:
            fold = self._fold(function, entries.islice(0, first))
        position = first
        while position < high:
            if rows_frame:
                fold.add(self._argument(function, entries[position][1]))
                if position >= low:
                    yield fold.result()
                position += 1
                continue
            peers = entries[position][0][:prefix]
            group = []
            for key, row in entries.islice(position, len(entries)):
                if key[:prefix] != peers:
                    break
                group.append(row)
            for row in group:
                fold.add(self._argument(function, row))
            value = fold.result()
            for offset in range(len(group)):
                if position + offset >= low and position + offset < high:
                    yield value
            position += len(group)

    def _fold(self, function: WindowFunctionSpec, entries) -> _Fold:
        fold = _Fold(function.kind)
        for _, row in entries:
            fold.add(self._argument(function, row))
        return fold

    @staticmethod
    def _argument(function: WindowFunctionSpec, row: Row) -> object:
        """The value a row adds to an aggregate's frame (COUNT(*): every row counts, as a 1)."""
        return 1 if function.argument is None else function.argument(row)


def _bucket(position: int, size: int, buckets: int) -> int:
    """NTILE's bucket (from 1) of the row at 0-based ``position`` of a partition of ``size`` rows, as
    Spark's NTile assigns it: ``size mod buckets`` leading buckets of ``size div buckets + 1`` rows,
    then buckets of ``size div buckets`` rows."""
    rows, larger = divmod(size, buckets)
    padded = larger * (rows + 1)
    if position < padded:
        return position // (rows + 1) + 1
    return larger + (position - padded) // rows + 1


def _earlier(a: tuple | None, b: tuple | None) -> tuple | None:
    return None if a is None or b is None else (b if b < a else a)


def _later(a: tuple | None, b: tuple | None) -> tuple | None:
    return None if a is None or b is None else (b if a < b else a)
