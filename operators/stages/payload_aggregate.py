"""A ring aggregate whose input rows carry ``SumRing`` payloads: the last step of a GJT aggregate.

A ``GjtStage`` in ring mode emits ``root tuple + (payload,)`` rows, −old and +new per changed root
tuple, where the payload ``(count, slots)`` already summarizes every join tuple below that root
tuple. This stage is the ``RingAggregateStage`` (same state, same empty-group and AVG semantics
through ``aggregate_value``, same HAVING and select list) with one change: a row adds its payload's
numbers times its weight, not 1 and its argument. Per aggregate a ``read`` names the slot holding
its sum (None for COUNT) and the slot holding its non-NULL count (None: the payload's row count,
COUNT(*)). It also sums the root tuples of one group when the root's label is wider than the GROUP
BY, and keeps the global aggregate's row (COUNT 0, SUM NULL) when the join is empty.
"""

from __future__ import annotations

from collections.abc import Callable

from operators.stages.aggregate import AggregateSpec, GroupState, RingAggregateStage
from operators.stages.base import Change, StageDescription
from operators.zset import Row

#: Per aggregate: (slot of its sum or None, slot of its non-NULL count or None for the row count).
PayloadRead = tuple[int | None, int | None]


class PayloadAggregateStage(RingAggregateStage):
    operator = "RingAggregate over payloads"
    codegen_kind = "generic"  # its rows carry ring payloads, which the ring template does not sum

    def __init__(self, group_names: tuple[str, ...], group_by: tuple[Callable[[Row], object], ...],
                 aggregates: tuple[AggregateSpec, ...], reads: tuple[PayloadRead, ...],
                 finish: Callable[[Row], Row | None], output_columns: tuple[str, ...], why: str):
        super().__init__(group_names, group_by, aggregates, finish, output_columns)
        self.reads, self.why = reads, why

    def _accumulate(self, state: GroupState, changes: list[Change], kept_log: list | None) -> None:
        values, counts = state.values, state.counts
        for change in changes:
            count, slots = change.row[-1]
            weight = change.weight
            state.rows += count * weight
            for i, (total, counted) in enumerate(self.reads):
                counts[i] += (count if counted is None else slots[counted]) * weight
                if total is not None:
                    value = slots[total] * weight
                    values[i] = value if values[i] is None else values[i] + value

    def describe(self) -> StageDescription:
        labels = ", ".join(dict.fromkeys(spec.label for spec in self.aggregates))
        return StageDescription(
            operator=f"{self.operator} ({labels})", inputs="per-root-tuple payload changes of the GJT",
            state="per group: row count, sums, non-NULL counts",
            key=", ".join(self.group_names) or "constant (does not scale out)",
            update_cost="O(1) per changed root tuple", why=self.why)
