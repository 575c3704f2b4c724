"""Group-by with ring aggregates (SUM, COUNT, AVG) as a keyed stage, keyed by the group.

Per group the state is the row count and, per aggregate, the sum and the count of non-NULL
arguments: a delete subtracts what its insert added (the ring's inverse), so each change costs O(1).
The stage also applies what sits above the aggregate in SQL (HAVING, the select list), so it emits
the final result rows of its group: the old row retracted, the new one inserted.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from operators.stage import Change, KeyedStage
from operators.zset import Changelog, Row, consolidate


@attrs.frozen
class AggregateSpec:
    """One aggregate: ``func`` in sum/count/avg; ``argument`` None for COUNT(*)."""

    func: str
    argument: Callable[[Row], object] | None = attrs.field(eq=False)


@attrs.define
class GroupState:
    rows: int
    group: Row
    sums: list
    counts: list[int]


class RingAggregateStage(KeyedStage):
    """Keyed by the group-by values; emits finished result rows (after HAVING and the select list)."""

    def __init__(self, name: str, group_by: tuple[Callable[[Row], object], ...], aggregates: tuple[AggregateSpec, ...],
                 finish: Callable[[Row], Row | None], output_columns: tuple[str, ...], description: dict[str, str],
                 where: Callable[[Row], bool] | None = None):
        self.name = name
        self.where = where  # the join's residual (non-equality) predicate: failing rows count nowhere
        self.group_by = group_by
        self.aggregates = aggregates
        self.finish = finish  # aggregate row (groups + values) → result row, or None if HAVING fails
        self.output_columns = output_columns
        self.description = description

    def key_of(self, port: int, row: Row) -> tuple:
        return tuple(g(row) for g in self.group_by)

    def empty_result(self) -> Row | None:
        """The row a global aggregate (no GROUP BY) shows over empty input: COUNT 0, SUM NULL."""
        if self.group_by:
            return None
        return self.finish(tuple(self._values(GroupState(0, (), [None] * len(self.aggregates), [0] * len(self.aggregates)))))

    def _values(self, state: GroupState) -> list:
        values = []
        for spec, total, count in zip(self.aggregates, state.sums, state.counts, strict=True):
            if spec.func == "count":
                values.append(count)
            elif count == 0:
                values.append(None)
            elif spec.func == "avg":
                values.append(total / count)
            else:
                values.append(total)
        return values

    def _result(self, state: GroupState | None) -> Row | None:
        if state is None or state.rows == 0:
            return self.empty_result()
        return self.finish(state.group + tuple(self._values(state)))

    def process(self, key: tuple, state: GroupState | None, changes: list[Change]) -> tuple[GroupState | None, Changelog]:
        before = self._result(state)
        if state is None:
            state = GroupState(0, key, [None] * len(self.aggregates), [0] * len(self.aggregates))
        for change in changes:
            row, weight = change.row, change.weight
            if self.where is not None and not self.where(row):
                continue
            state.rows += weight
            for i, spec in enumerate(self.aggregates):
                if spec.argument is None:
                    state.counts[i] += weight
                    continue
                value = spec.argument(row)
                if value is None:
                    continue
                state.counts[i] += weight
                if spec.func != "count":
                    state.sums[i] = value * weight if state.sums[i] is None else state.sums[i] + value * weight
        if state.rows < 0:
            raise RuntimeError(f"{self.name}: group {key} has a negative row count (a delete without its insert)")
        for i, count in enumerate(state.counts):
            if count == 0:
                state.sums[i] = None  # forget float residue once no value is left
        after = self._result(state)
        out = ([(before, -1)] if before is not None else []) + ([(after, 1)] if after is not None else [])
        return (state if state.rows else None), consolidate(out)

    def describe(self) -> dict[str, str]:
        return self.description
