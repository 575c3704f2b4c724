"""MIN/MAX (and MAX_BY/MIN_BY) by group over input that only grows (Olteanu §4.6), keyed by the group.

When every row reaching the aggregate is an insert (rules/insert_only.py proves it of the plan, and
validation rejects the tables' deletes), a group's minimum only ever falls and its maximum only ever
rises: the current extreme is all a group needs to keep, O(1) state per group and O(1) per change,
where ``GroupAggregateStage`` keeps an ordered multiset of each group's values for the delete that
would need the next one (O(log n) per change, O(distinct values) state). SUM, COUNT and AVG beside
them stay ring aggregates, as there; HAVING and the select list are applied as there.
"""

from __future__ import annotations

from collections.abc import Callable

from operators.stages.aggregate import (
    LEAST_FUNCTIONS,
    ORDERED_FUNCTIONS,
    AggregateSpec,
    GroupAggregateStage,
    GroupState,
    aggregate_value,
    extreme_value,
)
from operators.stages.base import Change, StageDescription
from operators.stages.insert_only import insert_only_reason, net_inserts
from operators.zset import Changelog, Row


class InsertOnlyAggregateStage(GroupAggregateStage):
    """A ``GroupAggregateStage`` whose MIN/MAX keep only the current extreme: its input must only grow.

    The state is the group's few scalars (row count, sums, non-NULL counts, extremes), copied by
    ``process``, so the old state is never touched and ``revert`` returns it (exact, whatever the values).
    """

    codegen_kind = "generic"  # its extremes are kept by ``process``, not by the ring template

    operator = "InsertOnlyAggregate"

    def __init__(self, group_names: tuple[str, ...], group_by: tuple[Callable[[Row], object], ...],
                 aggregates: tuple[AggregateSpec, ...], finish: Callable[[Row], Row | None],
                 output_columns: tuple[str, ...], insert_only: tuple[str, ...],
                 where: Callable[[Row], bool] | None = None):
        counted = [spec.label for spec in aggregates if spec.keeps_values and spec.func not in ORDERED_FUNCTIONS]
        if counted:
            raise ValueError(f"{', '.join(counted)} needs each value's copies even over insert-only input; "
                             "use a GroupAggregateStage")
        super().__init__(group_names, group_by, aggregates, finish, output_columns, where)
        self.insert_only = insert_only
        self._keeps_values = False  # the extremes are scalars, copied with the group's state
        self._least = tuple(spec.func in LEAST_FUNCTIONS for spec in aggregates)

    def process(self, key: tuple, state: GroupState | None, changes: list[Change]) -> tuple[GroupState | None, Changelog]:
        return super().process(key, state, net_inserts(self.name, key, changes, self.insert_only))

    def _keep(self, values: list, i: int, value: object, weight: int, kept_log: list | None) -> None:
        """A new MIN/MAX candidate (``weight`` > 0: ``process`` admits inserts only) replaces a worse extreme."""
        current = values[i]
        if current is None or (value < current if self._least[i] else current < value):
            values[i] = value

    def _values(self, state: GroupState) -> list:
        return [(None if value is None else extreme_value(spec.func, value)) if spec.func in ORDERED_FUNCTIONS
                else aggregate_value(spec, value, count)
                for spec, value, count in zip(self.aggregates, state.values, state.counts, strict=True)]

    def describe(self) -> StageDescription:
        return self._description(
            "join result changes (inserts only)",
            "per group: row count, sums, non-NULL counts; per MIN/MAX its current value only", "O(1) per join change",
            insert_only_reason(self.insert_only, "a MIN/MAX only ever improves: each group keeps its current "
                                                 "extreme, not the ordered multiset a delete would need"))
