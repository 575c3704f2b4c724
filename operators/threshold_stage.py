"""Rows compared with one maintained value: ``value(row) op q`` (TPC-H Q11's HAVING threshold).

Keyed by a constant. The rows are kept in a sorted list by value; the rows passing ``op q`` form a
prefix or a suffix of it, so when q moves only the rows between the old and the new q change sides:
O(log n + rows that flip) per batch, instead of re-testing every row.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import attrs
from sortedcontainers import SortedKeyList

from operators.stage import Change, KeyedStage
from operators.zset import Changelog, Row, apply_changes, consolidate

_COMPARE = {
    "<": lambda v, q: v < q, "<=": lambda v, q: v <= q, ">": lambda v, q: v > q, ">=": lambda v, q: v >= q,
    "=": lambda v, q: v == q,
}


@attrs.define
class ThresholdState:
    rows: SortedKeyList  # (value, row) for rows with a non-NULL value, ordered by value
    threshold: Counter  # the threshold plan's current row(s)


def _value_of(entry: tuple) -> object:
    return entry[0]


class ThresholdFilterStage(KeyedStage):
    ROWS, THRESHOLD = 0, 1

    def __init__(self, name: str, value: Callable[[Row], object], op: str, initial_threshold: tuple[Row, ...],
                 output_columns: tuple[str, ...], description: dict[str, str]):
        if op not in _COMPARE:
            raise ValueError(f"unsupported comparison {op!r} with a threshold")
        self.name, self.value, self.op = name, value, op
        self.initial_threshold = initial_threshold
        self.output_columns, self.description = output_columns, description

    def key_of(self, port: int, row: Row) -> tuple:
        return ()

    def _q(self, state: ThresholdState):
        present = [row for row, count in state.threshold.items() if count > 0]
        if len(present) > 1:
            raise RuntimeError(f"{self.name}: the threshold subquery has {len(present)} rows, expected one")
        return present[0][0] if present else None

    def _passing(self, state: ThresholdState, q) -> tuple[int, int]:
        """Index range of the sorted rows that satisfy ``value op q`` (a prefix, a suffix or, for ``=``, a run)."""
        if q is None:
            return 0, 0
        below, at_most, n = state.rows.bisect_key_left(q), state.rows.bisect_key_right(q), len(state.rows)
        return {"<": (0, below), "<=": (0, at_most), ">": (at_most, n), ">=": (below, n), "=": (below, at_most)}[self.op]

    def process(self, key: tuple, state: ThresholdState | None, changes: list[Change]) -> tuple[ThresholdState, Changelog]:
        state = state or ThresholdState(SortedKeyList(key=_value_of), Counter(self.initial_threshold))
        q_before = self._q(state)
        apply_changes(state.threshold, [(c.row, c.weight) for c in changes if c.port == self.THRESHOLD])
        q_after = self._q(state)
        out: Changelog = []
        if q_after != q_before:
            b_lo, b_hi = self._passing(state, q_before)
            a_lo, a_hi = self._passing(state, q_after)
            for i in range(min(b_lo, a_lo), max(b_hi, a_hi)):
                was, now = b_lo <= i < b_hi, a_lo <= i < a_hi
                if was != now:
                    out.append((state.rows[i][1], 1 if now else -1))
        compare = _COMPARE[self.op]
        for row, weight in consolidate((c.row, c.weight) for c in changes if c.port == self.ROWS):
            value = self.value(row)
            if value is None:
                continue
            for _ in range(abs(weight)):
                (state.rows.add if weight > 0 else state.rows.remove)((value, row))
            if q_after is not None and compare(value, q_after):
                out.append((row, weight))
        return state, consolidate(out)

    def describe(self) -> dict[str, str]:
        return self.description
