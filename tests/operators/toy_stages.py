"""Two small keyed stages for runner tests: an equi-join on a key and a per-group SUM.

They take their key and projection logic as plain callables, the way lowered stages hold compiled
expressions, so the runners must ship lambdas and closures to wherever the stage runs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from operators.runtime.dataflow import Dataflow, SourceRoute, StageNode
from operators.stages.base import Change, KeyedStage
from operators.zset import Changelog, Row, apply_changes, consolidate


class JoinStage(KeyedStage):
    """``left ⋈ right`` on a key: port 0 holds left rows, port 1 right rows, both as multisets."""

    def __init__(
        self,
        name: str,
        left_key: Callable[[Row], Any],
        right_key: Callable[[Row], Any],
        combine: Callable[[Row, Row], Row],
    ):
        self.name = name
        self.key_functions = (left_key, right_key)
        self.combine = combine

    def key_of(self, port: int, row: Row) -> tuple:
        return (self.key_functions[port](row),)

    def process(self, key: tuple, state: Any | None, changes: list[Change]) -> tuple[Any | None, Changelog]:
        left, right = state if state is not None else (Counter(), Counter())
        before = self._joined(left, right)
        for port, side in enumerate((left, right)):
            apply_changes(side, ((c.row, c.weight) for c in changes if c.port == port))
        emitted = consolidate([*((row, -w) for row, w in before), *self._joined(left, right)])
        return ((left, right) if left or right else None), emitted

    def _joined(self, left: Counter, right: Counter) -> Changelog:
        return [(self.combine(lrow, rrow), lw * rw) for lrow, lw in left.items() for rrow, rw in right.items()]


class SumStage(KeyedStage):
    """``SELECT group, SUM(value), COUNT(*) GROUP BY group``, retracting the old row of a group."""

    def __init__(self, name: str, group_of: Callable[[Row], Any], value_of: Callable[[Row], int]):
        self.name = name
        self.group_of = group_of
        self.value_of = value_of
        self.output_columns = ("grp", "total", "n")

    def key_of(self, port: int, row: Row) -> tuple:
        return (self.group_of(row),)

    def process(self, key: tuple, state: Any | None, changes: list[Change]) -> tuple[Any | None, Changelog]:
        total, count = state if state is not None else (0, 0)
        new_total = total + sum(self.value_of(c.row) * c.weight for c in changes)
        new_count = count + sum(c.weight for c in changes)
        emitted: Changelog = []
        if count:
            emitted.append(((key[0], total, count), -1))
        if new_count:
            emitted.append(((key[0], new_total, new_count), 1))
        return ((new_total, new_count) if new_count else None), consolidate(emitted)


def column(position: int) -> Callable[[Row], Any]:
    """A closure reading one column, like a compiled column reference."""
    return lambda row: row[position]


def toy_dataflow() -> Dataflow:
    """Two joins on a foreign key feeding one SUM per region, which also reads a table directly.

    customers(c_id, region)  orders(o_id, c_id, amount, status)  suppliers(s_id, region)
    supplies(s_id, p_id, cost)  adjustments(region, amount)

    Stage 0: orders ⋈ customers on c_id → (region, amount), cancelled orders dropped at the source.
    Stage 1: supplies ⋈ suppliers on s_id → (region, −cost).
    Stage 2: SUM per region of stages 0 and 1 and of adjustments with a non-zero amount.
    """
    orders_customers = JoinStage("orders⋈customers", column(0), column(0), lambda o, c: (c[1], o[1]))
    supplies_suppliers = JoinStage("supplies⋈suppliers", column(0), column(0), lambda s, p: (p[1], -s[1]))
    per_region = SumStage("sum per region", column(0), column(1))
    nonzero_amount = "row[1] != 0"
    return Dataflow(
        stages=(
            StageNode(0, orders_customers, downstream=2),
            StageNode(1, supplies_suppliers, downstream=2),
            StageNode(2, per_region, downstream=None),
        ),
        sources=(
            SourceRoute("orders", 0, 0, (1, 2), lambda row: row[3] != "cancelled", "status <> 'cancelled'"),
            SourceRoute("customers", 0, 1, (0, 1)),
            SourceRoute("supplies", 1, 0, (0, 2)),
            SourceRoute("suppliers", 1, 1, (0, 1)),
            SourceRoute("adjustments", 2, 0, (0, 1), eval(f"lambda row: {nonzero_amount}"), nonzero_amount),
        ),
        output_columns=per_region.output_columns,
    )
