"""TPC-H Q17's shape (AJU Theorem 15's join-select-aggregate): per correlation key an RPAI tree keyed
by the outer value v; the key's contribution is one range sum, O(log n) per update, and a second
stage adds the contributions per group.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from operators.stages.base import Change, KeyedStage, StageDescription, UnchangedOldState, apply_then_read
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
from operators.structures.rpai_tree import RPAITree
from operators.zset import Row


@attrs.define
class KeyIndexState:
    inner: list
    trees: dict  # group -> RPAI trees (one per required-sum component) keyed by v

    @staticmethod
    def new_trees(group: tuple, width: int) -> list:
        """A new group's trees (in memory; the Spark runner's paged state, ``nested/pages.py``, gives
        trees in pages named by the group)."""
        return [RPAITree() for _ in range(width)]


class PerKeyIndexStage(CorrelationKeyed, KeyedStage):
    """TPC-H Q17's shape: keyed by the correlation key (a constant for a global threshold, PSP and
    Q22), the outer rows of each group in RPAI trees keyed by v; emits each group's contribution
    (its required sums over rows with ``v op q``) as ``group + sums`` rows, ``-old, +new``.
    """

    def __init__(self, name: str, outer_key: Compiled, inner_key: Compiled, value: Compiled, op: str,
                 correlated: ScalarAggregate, sums: RequiredSums, group: Compiled, output_columns: tuple[str, ...],
                 description: StageDescription, *, constant_key: bool = False):
        self.name, self.outer_key, self.inner_key = name, outer_key, inner_key
        self.constant_key = constant_key  # no correlation key: one global threshold (the Spark runner pages it)
        self.value, self.op, self.correlated, self.sums, self.group = value, op, correlated, sums, group
        self.output_columns, self.description = output_columns, description

    def _contributions(self, state: KeyIndexState | None) -> list[Row]:
        if state is None:
            return []
        q = self.correlated.result(*state.inner)
        if q is None:
            return []
        # rows with v op q, i.e. keys k = v with k op q: the mirrored range of range_sum
        mirrored = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "=", "<>": "<>"}[self.op]
        out = []
        for group, trees in state.trees.items():
            vector = tuple(range_sum(tree, mirrored, q) for tree in trees)
            if vector[0]:
                out.append(group + vector)
        return out

    def process(self, key: tuple, state: KeyIndexState | None, changes: list[Change]):
        before = self._contributions(state)
        # every expression over the rows first, then the state, then the contributions; an error in
        # those takes the changes back, so the key is as before (base.py, atomic per key)
        steps = []
        for change in changes:
            if change.port != 0:
                steps.append((None, None, self.correlated.contribution(change.row, change.weight)))
                continue
            v = self.value(change.row)
            if v is not None:  # a NULL v satisfies no comparison
                steps.append((exact(v), self.group(change.row), self.sums.of(change.row, change.weight)))
        state = state or KeyIndexState([0, 0], {})
        after = apply_then_read(lambda sign: self._apply(state, steps, sign), lambda: self._contributions(state))
        empty = not state.trees and state.inner[1] == 0
        return (None if empty else state), diff_rows(before, after)

    def _apply(self, state: KeyIndexState, steps: list, sign: int) -> None:
        """Add (``sign`` 1) or take back (-1) prepared steps: (v, group, sums) of an outer row, or
        (None, None, (Σ, count)) of an inner row."""
        for v, group, vector in steps:
            if v is None:
                state.inner[0] += sign * vector[0]
                state.inner[1] += sign * vector[1]
                continue
            trees = state.trees.get(group)
            if trees is None:
                trees = state.trees[group] = state.new_trees(group, self.sums.width)
            for tree, part in zip(trees, vector, strict=True):
                if part:
                    tree.add(v, sign * part)
            if not len(trees[0]):
                del state.trees[group]

    def describe(self) -> StageDescription:
        return self.description


class SumVectorsStage(UnchangedOldState, GlobalResult, KeyedStage):
    """Adds the per-key contributions ``group + sums`` into each group's result row (keyed by the group,
    so it scales out by group; a constant for a global aggregate)."""

    def __init__(self, name: str, sums: RequiredSums, group_width: int, finish: Callable[[Row], Row | None],
                 output_columns: tuple[str, ...], description: StageDescription):
        self.name, self.sums, self.group_width, self.finish = name, sums, group_width, finish
        self.output_columns, self.description = output_columns, description

    def key_of(self, port: int, row: Row) -> tuple:
        return row[: self.group_width]

    @property
    def grouped(self) -> bool:
        return bool(self.group_width)

    def process(self, key: tuple, state: tuple | None, changes: list[Change]):
        total = state if state is not None else self.sums.zero()
        before = self.result_rows({key: total})
        for change in changes:
            total = add_vectors(total, change.row[self.group_width :], change.weight)
        empty = self.group_width and total[0] == 0
        return (None if empty else total), diff_rows(before, self.result_rows({key: total}))

    def describe(self) -> StageDescription:
        return self.description
