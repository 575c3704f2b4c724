"""The PAI map (RPAI Example 2.1, §2.1.3): keyed by the correlation key, a group's q moves as one
point; the global index stage moves that group's sums from the old q to the new one, O(1) for ``=``,
O(log n) for a range.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from operators.stages.base import Change, KeyedStage, StageDescription, apply_then_read
from operators.stages.nested.sums import (
    Compiled,
    CorrelationKeyed,
    GlobalResult,
    RequiredSums,
    ScalarAggregate,
    add_vectors,
    diff_rows,
)
from operators.structures.aggregate_index import exact, range_sum
from operators.structures.pai_map import HashAggregateIndex
from operators.structures.rpai_tree import RPAITree
from operators.zset import Row


@attrs.define
class CorrelationKeyState:
    inner: list  # [Σ argument, count] of the correlated aggregate
    outer: dict  # GROUP BY group (``()`` without one) -> [required sums, row count] of the key's outer rows


class CorrelationGroupStage(CorrelationKeyed, KeyedStage):
    """Keyed by the correlation key: port 0 outer rows, port 1 inner rows; emits ``(q, *group, *sums)``
    entries, one per GROUP BY group among the key's outer rows (one entry without GROUP BY)."""

    def __init__(self, name: str, outer_key: Compiled, inner_key: Compiled, correlated: ScalarAggregate,
                 sums: RequiredSums, group: Compiled, output_columns: tuple[str, ...], description: StageDescription):
        self.name, self.outer_key, self.inner_key = name, outer_key, inner_key
        self.correlated, self.sums, self.group = correlated, sums, group
        self.output_columns, self.description = output_columns, description

    def _entries(self, state: CorrelationKeyState | None) -> list[Row]:
        if state is None or not state.outer:
            return []
        q = self.correlated.result(*state.inner)
        return [(q, *group, *vector) for group, (vector, _) in state.outer.items()]

    def process(self, key: tuple, state: CorrelationKeyState | None, changes: list[Change]):
        before = self._entries(state)
        # every expression over the rows first, then the state, then the entries; an error in those
        # takes the changes back, so the key is as before (base.py, atomic per key)
        steps = [(self.group(c.row), self.sums.of(c.row, c.weight), c.weight) if c.port == 0
                 else (None, self.correlated.contribution(c.row, c.weight), 0) for c in changes]
        state = state or CorrelationKeyState([0, 0], {})
        after = apply_then_read(lambda sign: self._apply(state, steps, sign), lambda: self._entries(state))
        empty = not state.outer and state.inner[1] == 0
        return (None if empty else state), diff_rows(before, after)

    def _apply(self, state: CorrelationKeyState, steps: list, sign: int) -> None:
        """Add (``sign`` 1) or take back (-1) prepared steps: (group, sums, rows) of an outer row, or
        (None, (Σ, count), 0) of an inner row."""
        for group, vector, rows in steps:
            if group is None:
                state.inner[0] += sign * vector[0]
                state.inner[1] += sign * vector[1]
                continue
            entry = state.outer.setdefault(group, [self.sums.zero(), 0])
            entry[0] = add_vectors(entry[0], vector, sign)
            entry[1] += sign * rows
            if entry[1] == 0:
                del state.outer[group]

    def describe(self) -> StageDescription:
        return self.description


@attrs.define
class IndexState:
    indexes: dict  # GROUP BY group (``()`` without one) -> aggregate indexes, one per required-sum component
    uncorrelated: list[list]


class AggregateIndexStage(GlobalResult, KeyedStage):
    """The PAI map (§2.1.3): port 0 group entries ``(q, *group, *sums)``, port 1+i uncorrelated aggregate i.

    With GROUP BY (``group_width`` > 0) each group has its own index; a group shows when any of its
    rows satisfies ``v op q`` (SQL: a group exists when a row passes WHERE).
    """

    def __init__(self, name: str, sums: RequiredSums, value: Compiled, op: str,
                 uncorrelated: tuple[ScalarAggregate, ...], finish: Callable[[Row], Row | None],
                 output_columns: tuple[str, ...], description: StageDescription, group_width: int = 0):
        self.name, self.sums, self.value, self.op = name, sums, value, op
        self.uncorrelated, self.finish, self.group_width = uncorrelated, finish, group_width
        self.output_columns, self.description = output_columns, description

    def _output(self, state: IndexState | None) -> list[Row]:
        vectors = {}
        if state is not None:
            v = self.value(tuple(agg.result(*acc) for agg, acc in zip(self.uncorrelated, state.uncorrelated, strict=True)))
            vectors = {group: tuple(range_sum(index, self.op, v) for index in indexes)
                       for group, indexes in state.indexes.items()}
        return self.result_rows(vectors)

    @property
    def grouped(self) -> bool:
        return bool(self.group_width)

    def process(self, key: tuple, state: IndexState | None, changes: list[Change]):
        before = self._output(state)
        # the uncorrelated aggregates' expressions first; an error in the output takes the changes
        # back, so the state is as before (base.py, atomic per key)
        contributions = [None if c.port == 0 else self.uncorrelated[c.port - 1].contribution(c.row, c.weight)
                         for c in changes]
        if state is None:
            state = IndexState({}, [[0, 0] for _ in self.uncorrelated])
        after = apply_then_read(lambda sign: self._apply(state, changes, contributions, sign), lambda: self._output(state))
        return state, diff_rows(before, after)

    def _apply(self, state: IndexState, changes: list[Change], contributions: list, sign: int) -> None:
        make = HashAggregateIndex if self.op == "=" else RPAITree
        for change, contribution in zip(changes, contributions, strict=True):
            if contribution is not None:
                accumulated = state.uncorrelated[change.port - 1]
                accumulated[0] += sign * contribution[0]
                accumulated[1] += sign * contribution[1]
                continue
            q, group, parts = change.row[0], change.row[1 : 1 + self.group_width], change.row[1 + self.group_width :]
            if q is None:
                continue  # a NULL aggregate satisfies no comparison
            indexes = state.indexes.get(group)
            if indexes is None:
                indexes = state.indexes[group] = [make() for _ in range(self.sums.width)]
            for index, part in zip(indexes, parts, strict=True):
                if part:
                    index.add(exact(q), sign * change.weight * part)
            if self.group_width and not len(indexes[0]):
                del state.indexes[group]  # the group's last row left

    def describe(self) -> StageDescription:
        return self.description
