"""Lower an ``OuterJoin``: each side lowered on its own, then one ``OuterJoinStage`` keyed by the
join key that keeps both sides and each preserved row's match count (operators/stages/outer_join.py).

A side that is one relation feeds the stage from its source route; any other side (a join of its
own strategy, an outer join, a view, a derived table kept whole) is a subquery lowered by
``StageBuilder.lower``, its result columns re-qualified by its alias where it has one. The WHERE
above the join (``residual``) is applied by the operator reading the join, as for every join.
"""

from __future__ import annotations

from operators.lowering.builder import Emitter, StageBuilder
from operators.lowering.expr_eval import compile_predicate
from operators.stages.base import StageDescription
from operators.stages.outer_join import OuterJoinStage
from planner.ir.expressions import Column
from planner.ir.logical import LogicalPlan, SubqueryAlias
from planner.ir.maintenance import Atom, ForeignKeyJoin, ViewAtom
from planner.ir.notation import print_expr
from planner.ir.outer_join import OUTER_JOIN_COST, OUTER_JOIN_COST_THETA, SYMBOLS, OuterJoin


def lower_outer_join(builder: StageBuilder, join: OuterJoin, needed: frozenset[Column]) -> Emitter:
    """The stages of ``join``, its sides carrying the ``needed`` columns (read above or by the join)."""
    left, right = _side(builder, join.left, needed), _side(builder, join.right, needed)
    layout = left.layout + right.layout
    keys = ", ".join(f"{a} = {b}" for a, b in join.on)
    on = f" and {print_expr(join.condition)}" if join.condition is not None else ""
    preserved = [side for side, kept in zip(("left", "right"), join.preserved, strict=True) if kept]
    stage = builder.add(OuterJoinStage(
        f"{join.kind} join on {keys or 'a constant'}{on}", join.kind,
        (tuple(left.layout.index(a) for a, _ in join.on), tuple(right.layout.index(b) for _, b in join.on)),
        (len(left.layout), len(right.layout)), tuple(map(str, layout)),
        StageDescription(
            operator=f"OuterJoin ({join.kind.upper()}, change propagation)",
            inputs="two maintained inputs",
            state="both inputs grouped by the join key" + (
                "; each preserved row's match count" if join.condition is not None and preserved
                else "; each side's row count per key" if preserved else ""),
            key=keys or "constant (does not scale out)",
            update_cost=OUTER_JOIN_COST_THETA if join.condition is not None else OUTER_JOIN_COST,
            why=f"L {SYMBOLS[join.kind]} R = L ⋈ R plus the padded rows of the "
                + (f"{' and '.join(preserved)} side" if preserved else "(no) side")
                + " without a match; a row turns padded or matched when its match count crosses 0 "
                  "(Griffin & Kumar; Larson & Zhou)" + (f", ON{on.removeprefix(' and')} tested per pair" if on else ""),
        ),
        condition=compile_predicate(join.condition, {c: i for i, c in enumerate(layout)}),
    ))
    left.connect(builder, stage, OuterJoinStage.LEFT)
    right.connect(builder, stage, OuterJoinStage.RIGHT)
    return Emitter(layout, stage=stage)


def _side(builder: StageBuilder, side: LogicalPlan, needed: frozenset[Column]) -> Emitter:
    """Where one side's rows come from: its source (one relation), else its own lowered subquery."""
    match side:
        case Atom():
            return Emitter(side.output, leaf=side)
        case ForeignKeyJoin(edges=(), residual=None, atoms=(Atom() as atom,)):
            return Emitter(atom.output, leaf=atom)
        case ViewAtom(alias=alias, child=child) | SubqueryAlias(alias=alias, child=child):
            lowered = builder.lower_view(side) if isinstance(side, ViewAtom) else builder.lower(child)
            return Emitter(tuple(Column(alias, c.name) for c in lowered.layout), stage=lowered.last)
    lowered = builder.lower(side, needed)
    return Emitter(lowered.layout, stage=lowered.last)
