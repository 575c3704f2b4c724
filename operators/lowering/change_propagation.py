"""Lower a change-propagation join tree: one materializing ``BinaryJoinStage`` per inner node.

The general fallback for joins that are not along keys (and AJU Theorem 11's tree on request):
each inner node keeps both inputs as materialized views and emits ΔL ⋈ R + L' ⋈ ΔR (AJU §3.5),
filtered by the conditions placed on it. A join on no equality is keyed by a constant: one state
holds both whole inputs, which does not scale out (EXPLAIN says so).
"""

from __future__ import annotations

from operators.lowering.builder import Emitter, LoweringError, StageBuilder
from operators.lowering.expr_eval import compile_predicate
from operators.stages.base import StageDescription
from operators.stages.binary_join import BinaryJoinStage
from planner.ir.logical import LogicalPlan
from planner.ir.maintenance import BINARY_JOIN_COST, Atom, BinaryJoin, ViewAtom
from planner.ir.notation import print_expr


def lower_change_propagation(builder: StageBuilder, node: LogicalPlan) -> Emitter:
    """The stages of the join tree ``node``; a leaf needs none, a view lowers its own subplan."""
    match node:
        case Atom():
            return Emitter(node.output, leaf=node)
        case ViewAtom(anti=False):
            return Emitter(node.output, stage=builder.lower(node.child).last)
        case BinaryJoin(on=on, left=left, right=right, condition=condition):
            lhs, rhs = lower_change_propagation(builder, left), lower_change_propagation(builder, right)
            layout = lhs.layout + rhs.layout
            keys = ", ".join(f"{a} = {b}" for a, b in on)
            filtered = f" where {print_expr(condition)}" if condition is not None else ""
            stage = builder.add(BinaryJoinStage(
                f"join on {keys or 'a constant'}{filtered}", tuple(lhs.layout.index(a) for a, _ in on),
                tuple(rhs.layout.index(b) for _, b in on), tuple(map(str, layout)),
                StageDescription(
                    operator="BinaryJoin (change propagation)", inputs="two materialized views",
                    state="both inputs, grouped by the join key (a materialized view each)",
                    key=keys or "constant (does not scale out)",
                    update_cost=BINARY_JOIN_COST,
                    why="ΔL ⋈ R + L' ⋈ ΔR over materialized views (AJU §3.5)"
                        + (f", filtered by{filtered.removeprefix(' where')} (the lowest join holding its columns)"
                           if filtered else ""),
                ),
                where=compile_predicate(condition, {c: i for i, c in enumerate(layout)}),
            ))
            lhs.connect(builder, stage, BinaryJoinStage.LEFT)
            rhs.connect(builder, stage, BinaryJoinStage.RIGHT)
            return Emitter(layout, stage=stage)
    raise LoweringError(f"cannot maintain a {node.node_name} inside a change-propagation join tree")
