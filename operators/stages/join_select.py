"""Join-select (AJU Theorem 15, query (3)): ``σ_{x3 θ x2}(Q(x1, x2) ⋈ Q'(x1, x3, ...))`` as one stage.

Keyed by x1, the primary key of Q. Per key the stage keeps the rows of Q' in a sorted list by x3
and Q's one row, whose x2 is a pointer into that list: the rows passing ``x3 θ x2`` form a prefix,
a suffix, (for ``=``) a run of it or (for ``<>``) all but a run. A change of Q' costs O(log n) and emits at most that row; a
change of x2 moves the pointer and emits exactly the rows between the old and the new position,
O(log n + rows that flip), instead of re-testing (and re-emitting) every row of the key.

A passing row leaves extended by its key x1 only, never by x2: a column that moves with the pointer
would change every joined row of the key whenever x2 moved, and the delta would lose its bound.

With x1 = () this is a filter against one maintained value, keyed by a constant (TPC-H Q11's
HAVING threshold, Q22's average balance): rows leave unextended.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import attrs
from sortedcontainers import SortedKeyList

from operators.held_errors import is_error
from operators.stages.base import Change, KeyedStage, StageDescription, key_getter
from operators.structures.aggregate_index import COMPARISONS
from operators.zset import Changelog, Row, apply_changes, consolidate


@attrs.define
class JoinSelectState:
    rows: SortedKeyList  # (x3, row) for the key's Q' rows with a non-NULL x3, ordered by x3
    threshold: Counter  # Q's row(s) of the key: at most one present, x1 being Q's key
    nulls: int = 0  # how many of the key's Q' rows have a NULL x3 (kept nowhere: they never pass)

    @property
    def has_rows(self) -> bool:
        return bool(self.rows) or self.nulls > 0


def _value_of(entry: tuple) -> object:
    """The sort key of a ``rows`` entry; module level so that the state pickles (Spark runner)."""
    return entry[0]


def _difference(spans: tuple[tuple[int, int], ...], others: tuple[tuple[int, int], ...]) -> list[tuple[int, int]]:
    """The index ranges of ``spans`` outside every range of ``others`` (all half-open)."""
    result = list(spans)
    for other_lo, other_hi in others:
        if other_lo >= other_hi:
            continue
        result = [part for lo, hi in result for part in ((lo, min(hi, other_lo)), (max(lo, other_hi), hi))
                  if part[0] < part[1]]
    return result


class JoinSelectStage(KeyedStage):
    """Q' rows on port ``ROWS``, Q's rows on port ``THRESHOLD``; emits the Q' rows with ``value θ x2``.

    ``value`` reads x3 from a Q' row, ``threshold_value`` is x2's position in Q's row, ``row_key``
    and ``threshold_key`` the positions of x1 in each (empty: one constant key).
    """

    ROWS, THRESHOLD = 0, 1
    #: Q's value may be a held error (0/0 over no rows: operators/held_errors.py). It is the view's only
    #: while the key has rows to compare with it, as Spark evaluates the comparison only for rows:
    #: the stage emits that ``ErrorRow`` while both hold, and lets no row pass.
    error_ports = (THRESHOLD,)

    def __init__(self, name: str, value: Callable[[Row], object], op: str, output_columns: tuple[str, ...],
                 description: StageDescription, *, row_key: tuple[int, ...] = (), threshold_key: tuple[int, ...] = (),
                 threshold_value: int = 0):
        if op not in COMPARISONS:
            raise ValueError(f"unsupported comparison {op!r} in a join-select")
        if len(row_key) != len(threshold_key):
            raise ValueError(f"{name}: the key has {len(row_key)} columns in the rows, {len(threshold_key)} in Q")
        self.name, self.value, self.op = name, value, op
        self.row_key, self.threshold_key, self.threshold_value = row_key, threshold_key, threshold_value
        self.output_columns, self.description = output_columns, description

    def key_function(self, port: int) -> Callable[[Row], tuple]:
        return key_getter(self.row_key if port == self.ROWS else self.threshold_key)

    def key_of(self, port: int, row: Row) -> tuple:
        return tuple(self.key_function(port)(row))

    def _pointer(self, state: JoinSelectState):
        """x2 of the key's Q row; None when there is no row or x2 is NULL (then no row passes); Q's
        ``ErrorRow`` when its value is a held error."""
        present = [row for row, count in state.threshold.items() if count > 0]
        if len(present) > 1 or any(count > 1 for count in state.threshold.values()):
            raise RuntimeError(f"{self.name}: Q has {sum(state.threshold.values())} rows for one key, expected one")
        if not present:
            return None
        return present[0] if is_error(present[0]) else present[0][self.threshold_value]

    def _passing(self, state: JoinSelectState, q) -> tuple[tuple[int, int], ...]:
        """Index ranges of the sorted rows that satisfy ``value op q``: a prefix, a suffix, for ``=`` a
        run, for ``<>`` all but that run."""
        if q is None or is_error(q):
            return ()
        below, at_most, n = state.rows.bisect_key_left(q), state.rows.bisect_key_right(q), len(state.rows)
        return {"<": ((0, below),), "<=": ((0, at_most),), ">": ((at_most, n),), ">=": ((below, n),),
                "=": ((below, at_most),), "<>": ((0, below), (at_most, n))}[self.op]

    def _extended(self, row: Row) -> Row:
        """The output row: ``row`` and its key x1 (Q's key columns of the join; nothing when keyed by a constant)."""
        return row + tuple(row[i] for i in self.row_key)

    def process(self, key: tuple, state: JoinSelectState | None, changes: list[Change]) -> tuple[JoinSelectState | None, Changelog]:
        # x3 of every changed row first: an error there leaves the state as it was (base.py, atomic)
        rows = [(row, weight, self.value(row))
                for row, weight in consolidate((c.row, c.weight) for c in changes if c.port == self.ROWS)]
        state = state or JoinSelectState(SortedKeyList(key=_value_of), Counter())
        q_before = self._pointer(state)
        threshold = [(c.row, c.weight) for c in changes if c.port == self.THRESHOLD]
        apply_changes(state.threshold, threshold)
        try:
            q_after = self._pointer(state)
        except BaseException:  # Q's rows of the key do not fit (internal error): the key stays as it was
            apply_changes(state.threshold, [(row, -weight) for row, weight in threshold])
            raise
        out: Changelog = []
        if is_error(q_before) and state.has_rows:  # the key's held error, before the batch
            out.append((q_before, -1))
        if q_after != q_before:
            # the pointer moved: only the old rows between its two positions change sides
            before, after = self._passing(state, q_before), self._passing(state, q_after)
            for weight, spans, others in ((-1, before, after), (1, after, before)):
                for lo, hi in _difference(spans, others):
                    out.extend((self._extended(entry[1]), weight) for entry in state.rows.islice(lo, hi))
        compare = COMPARISONS[self.op]
        for row, weight, value in rows:
            if value is None:
                state.nulls += weight  # a comparison with NULL is never true: the row can never pass
                continue
            for _ in range(abs(weight)):
                (state.rows.add if weight > 0 else state.rows.remove)((value, row))
            if q_after is not None and not is_error(q_after) and compare(value, q_after):
                out.append((self._extended(row), weight))
        if is_error(q_after) and state.has_rows:
            out.append((q_after, 1))
        empty = not state.has_rows and not state.threshold
        return (None if empty else state), consolidate(out)

    def describe(self) -> StageDescription:
        return self.description
