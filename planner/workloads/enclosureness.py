"""Enclosureness λ of an update stream (AJU §1): how hard the stream is for foreign-key join maintenance.

Each tuple lifetime is an interval, from its insert to its delete. λ(i) is the largest number of
pairwise-disjoint lifespans contained in i, and λ(I) the average of λ(i) over all lifespans. AJU
maintains any foreign-key acyclic join in O(λ) amortized time per update, so λ is what a stream
generator has to control and what a benchmark has to report beside its timings.

The paper writes a lifespan as the open interval (i_s, i_e) and we take that literally, with
endpoints in the extended reals: (a, b) ⊆ (c, d) iff c ≤ a and b ≤ d, and (a, b), (c, d) are disjoint
iff b ≤ c or d ≤ a. Consequences: intervals that only touch are disjoint; two lifespans still
open at the end, (s, +∞) and (s', +∞), always overlap, and the later one is contained in the
earlier. The paper's maximum ranges over all lifespans inside i, i itself included, so λ(i) ≥ 1 and
λ(I) = 1 for FIFO and for insert-only streams. In a stream every ``_seq`` is distinct, so open or closed makes no difference there; the
choice matters only for hand-written intervals.

Counting λ(i) for every i separately costs O(n²); ``interval_enclosureness`` does it for all
intervals in O(n log n) (proof in its docstring); ``stream_enclosureness`` takes 1-2 s on the
1.6M updates of the SF 0.1 window stream, most of it in the one Python pass that pairs inserts with deletes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from operator import itemgetter

import numpy as np

from catalog.literals import sql_literal
from catalog.schema import Catalog
from operators.runtime.stream import DELETE, INSERT, Update, gc_paused

OPEN_END = math.inf  # the end of a tuple still present when the stream ends


class StreamLifespanError(ValueError):
    """The stream breaks set semantics, so lifespans are undefined; the message names the update."""


def lifespans(updates: Iterable[Update], catalog: Catalog) -> list[tuple[float, float]]:
    """One ``(insert _seq, delete _seq)`` interval per tuple lifetime, in insertion order.

    A tuple is its table and primary key (the whole row for a table without a key); deleted and
    inserted again it has two lifespans, as in the paper. A tuple never deleted ends at +∞. The
    stream is taken to start from an empty database, so no lifespan starts at −∞. Updates must be
    in ``_seq`` order and keep set semantics (no insert of a present key, no delete of an absent or
    different row).
    """
    starts, ends = _lifespan_columns(updates, catalog)
    return list(zip(starts, ends, strict=True))


@gc_paused()
def _lifespan_columns(updates: Iterable[Update], catalog: Catalog) -> tuple[list[int], list[float]]:
    """``lifespans`` as a list of starts and a list of ends: one pass, the hot loop of ``stream_enclosureness``."""
    starts: list[int] = []
    ends: list[float] = []
    present: dict[tuple[str, object], tuple[int, tuple]] = {}  # tuple -> (its lifespan's index, its row)
    identities: dict[str, tuple[str, Callable[[tuple], object] | None]] = {}  # table spelling -> (name, key of a row)
    previous_seq = -math.inf
    for update in updates:
        seq, row = update.seq, update.row
        if seq <= previous_seq:
            raise StreamLifespanError(f"updates are not in _seq order: _seq {seq} ({update.table}) after {previous_seq}")
        previous_seq = seq
        identity = identities.get(update.table) or identities.setdefault(update.table, _identity(catalog, update.table))
        table, key_of = identity
        tuple_id = (table, key_of(row)) if key_of is not None else _copy_id(table, row, update.op, present)
        if update.op == INSERT:
            if tuple_id in present:
                raise StreamLifespanError(f"{_where(update)}: inserts key {sql_literal(tuple_id[1])} of table {table}, which is already present")
            present[tuple_id] = (len(starts), row)
            starts.append(seq)
            ends.append(OPEN_END)
        elif update.op == DELETE:
            opened = present.pop(tuple_id, None)
            if opened is None:
                raise StreamLifespanError(f"{_where(update)}: deletes key {sql_literal(tuple_id[1])} of table {table}, which is not present")
            if opened[1] != row:
                raise StreamLifespanError(f"{_where(update)}: deletes a row of table {table} that differs from the present {sql_literal(opened[1])}")
            ends[opened[0]] = seq
        else:
            raise StreamLifespanError(f"{_where(update)}: op is {update.op!r}, must be +1 or -1")
    return starts, ends


def _copy_id(table: str, row: tuple, op: int, present: dict) -> tuple:
    """A keyless table's tuples are copies of rows (bag semantics): an insert opens copy n of
    ``row`` (n copies present), a delete closes the latest, as the validator counts them."""
    copies = 0
    while (table, (row, copies)) in present:
        copies += 1
    return (table, (row, copies if op == INSERT or copies == 0 else copies - 1))


def _identity(catalog: Catalog, spelling: str) -> tuple[str, Callable[[tuple], object] | None]:
    """The table's canonical name and a function from a row to its primary key (``None``: no key, see _copy_id)."""
    table = catalog.table(spelling)
    positions = [table.column_names.index(column) for column in table.primary_key]
    return table.name, (itemgetter(*positions) if positions else None)


def _where(update: Update) -> str:
    return f"update at _seq {update.seq} (table {update.table}, row {sql_literal(update.row)})"


def stream_enclosureness(updates: Iterable[Update], catalog: Catalog) -> float:
    """λ of the stream: ``enclosureness(lifespans(updates, catalog))``."""
    starts, ends = _lifespan_columns(updates, catalog)
    return enclosureness(np.column_stack([np.array(starts, dtype=float), np.array(ends)]))


def enclosureness(intervals: Sequence[tuple[float, float]] | np.ndarray) -> float:
    """λ(I), the average over ``intervals`` (pairs ``(start, end)``) of λ(i), exactly.

    >>> enclosureness([(1, 4), (2, 5), (3, 6)])  # FIFO: nothing contains anything else
    1.0
    >>> enclosureness([(1, 10), (2, 3), (4, 5), (6, 7)])  # the outer one holds three disjoint ones
    1.5
    """
    pairs = np.asarray(intervals, dtype=float)
    if pairs.size == 0:
        raise ValueError("enclosureness of no intervals is undefined (it is an average over intervals)")
    if pairs.ndim != 2 or pairs.shape[1] != 2:
        raise ValueError(f"intervals must be (start, end) pairs, got an array of shape {pairs.shape}")
    return float(interval_enclosureness(pairs[:, 0], pairs[:, 1]).mean())


def interval_enclosureness(starts: np.ndarray | Sequence[float], ends: np.ndarray | Sequence[float]) -> np.ndarray:
    """λ(i) for every interval i = (starts[i], ends[i]) of the family, in O(n log n).

    Why it is right:

    1. Greedy is optimal. Among intervals contained in i, repeatedly taking the one with the
       earliest end among those starting at or after the last end taken yields a largest disjoint
       set (interval scheduling: by induction the greedy's k-th end is no later than the k-th end of
       any disjoint set ordered by end, so it never runs out first).
    2. The greedy needs no containment filter. Let next(p) = min{e_j : s_j ≥ p}. Starting from
       p_0 = s_i, every candidate starts at or after s_i, so the one with the earliest end is
       contained in i exactly when next(p) ≤ e_i; if not, no interval starting at or after p fits
       in i and the greedy stops. Hence λ(i) = #{k ≥ 1 : p_k ≤ e_i} with p_{k+1} = next(p_k).
       p_1 ≤ e_i always holds (i itself qualifies), so λ(i) ≥ 1.
    3. The chain is a path in a forest. next(p) > p (an interval ends after it starts), so on the
       sorted distinct end values the step p_k → p_{k+1} strictly increases the index. Tabulating
       next once per end value and doubling it (binary lifting) counts the steps with index ≤ that
       of e_i in O(log n) per interval; all intervals move together as numpy arrays.

    next(p) is a binary search in the starts plus a suffix minimum of ends in start order.
    """
    starts = np.asarray(starts, dtype=float)
    ends = np.asarray(ends, dtype=float)
    _check_intervals(starts, ends)
    by_start = np.argsort(starts, kind="stable")
    sorted_starts = starts[by_start]
    end_values = np.unique(ends)
    none = len(end_values)  # the index meaning "no interval starts at or after p"
    earliest_end_from = np.minimum.accumulate(ends[by_start][::-1])[::-1]  # over sorted_starts[k:]
    # next(p) for p in (sorted_starts[k-1], sorted_starts[k]], as an index in end_values; k = n: none.
    next_from = np.append(np.searchsorted(end_values, earliest_end_from), none)

    def next_end(points: np.ndarray) -> np.ndarray:
        """Index in ``end_values`` of next(p) for each point p, or ``none``."""
        return next_from[np.searchsorted(sorted_starts, points, side="left")]

    jumps = [np.append(next_end(end_values), none)]  # jumps[k][a]: 2**k greedy steps from end_values[a]
    while not np.all(jumps[-1][:-1] == none):
        jumps.append(jumps[-1][jumps[-1]])
    jumps.pop()  # every step in it leaves i, so it never counts

    position = next_end(starts)  # p_1: one step taken, inside i by (2)
    limit = np.searchsorted(end_values, ends)  # index of e_i itself
    counts = np.ones(len(starts), dtype=np.int64)
    for level in reversed(range(len(jumps))):
        candidate = jumps[level][position]
        inside = candidate <= limit
        position = np.where(inside, candidate, position)
        counts += inside.astype(np.int64) << level
    return counts


def _check_intervals(starts: np.ndarray, ends: np.ndarray) -> None:
    if starts.ndim != 1 or starts.shape != ends.shape:
        raise ValueError(f"starts and ends must be two 1-d arrays of one length, got shapes {starts.shape} and {ends.shape}")
    empty = np.flatnonzero(~(starts < ends))  # also catches NaN
    if len(empty):
        at = int(empty[0])
        raise ValueError(f"interval {at} ({starts[at]}, {ends[at]}) is empty or has NaN: a lifespan needs start < end")
