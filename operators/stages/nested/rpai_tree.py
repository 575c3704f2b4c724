"""VWAP-shaped queries (RPAI §2.2.3, Figure 2c): q is a prefix sum along one column, so an insert
shifts the q of every later group, ``shift_keys`` on an RPAI tree: O(log n). Keyed by a constant.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from operators.stages.base import Change, KeyedStage, StageDescription
from operators.stages.nested.sums import (
    Compiled,
    GlobalResult,
    RequiredSums,
    ScalarAggregate,
    diff_rows,
)
from operators.structures.aggregate_index import PrefixAggregateIndex, PrefixIndexState
from operators.zset import Row, consolidate


@attrs.define
class RpaiState:
    index: PrefixIndexState
    uncorrelated: list[list]


class RpaiTreeStage(GlobalResult, KeyedStage):
    """VWAP-shaped queries (RPAI Figure 2c): port 0 the relation's rows, port 1+i uncorrelated aggregate i.

    ``index`` keeps the rows by their q with their required sums; ``op`` compares v with q. With
    ``group`` (GROUP BY, MST's bids per broker) each group has its own trees in the index.
    """

    def __init__(self, name: str, index: PrefixAggregateIndex, sums: RequiredSums, value: Compiled, op: str,
                 uncorrelated: tuple[ScalarAggregate, ...], finish: Callable[[Row], Row | None],
                 output_columns: tuple[str, ...], description: StageDescription, group: Compiled | None = None):
        self.name, self.index, self.sums, self.group = name, index, sums, group
        self.value, self.op, self.uncorrelated, self.finish = value, op, uncorrelated, finish
        self.output_columns, self.description = output_columns, description

    def _v(self, state: RpaiState):
        values = tuple(agg.result(*acc) for agg, acc in zip(self.uncorrelated, state.uncorrelated, strict=True))
        return self.value(values)

    def _output(self, state: RpaiState | None) -> list[Row]:
        vectors = {} if state is None else self.index.range_vectors(state.index, self.op, self._v(state))
        return self.result_rows(vectors)

    @property
    def grouped(self) -> bool:
        return self.group is not None

    def process(self, key: tuple, state: RpaiState | None, changes: list[Change]):
        before = self._output(state)
        if state is None:
            state = RpaiState(self.index.new_state(), [[0, 0] for _ in self.uncorrelated])
        # Each index step evaluates its row's expressions before it changes the index; the steps done
        # are logged and taken back newest first if a later one or the output raises (base.py, atomic)
        indexed: list = []  # (row, sign, group) applied to the index
        accumulated: list = []  # (subquery, (Σ, count)) added to an uncorrelated aggregate
        try:
            rows = consolidate((c.row, c.weight) for c in changes if c.port == 0)
            for row, weight in rows:  # deletes first (consolidate orders them so): every state stays valid
                sign = 1 if weight > 0 else -1
                group = () if self.group is None else self.group(row)
                for _ in range(abs(weight)):
                    self.index.apply(state.index, row, sign, self.sums.of(row, sign), group)
                    indexed.append((row, sign, group))
            for change in changes:
                if change.port > 0:
                    i = change.port - 1
                    contribution = self.uncorrelated[i].contribution(change.row, change.weight)
                    _add(state.uncorrelated[i], contribution, 1)
                    accumulated.append((i, contribution))
            after = self._output(state)
        except BaseException:
            for i, contribution in accumulated:
                _add(state.uncorrelated[i], contribution, -1)
            for row, sign, group in reversed(indexed):
                self.index.apply(state.index, row, -sign, self.sums.of(row, -sign), group)
            raise
        return state, diff_rows(before, after)

    def describe(self) -> StageDescription:
        return self.description


def _add(accumulated: list, contribution: tuple, sign: int) -> None:
    """Add (or with ``sign`` -1 take back) one row's contribution to a subquery's ``[Σ, count]``."""
    accumulated[0] += sign * contribution[0]
    accumulated[1] += sign * contribution[1]
