"""EXPLAIN's section on outer joins: the headline when the query's outermost join is an ``OuterJoin``,
and one line per outer join naming its kind, key, what one change costs and each side's strategy.
"""

from __future__ import annotations

from planner.compiler import CompiledQuery
from planner.ir.gjt_maintenance import GeneralizedJoinTree
from planner.ir.logical import LogicalPlan, Project, SubqueryAlias
from planner.ir.maintenance import Atom, ChangePropagationJoin, ForeignKeyJoin, ViewAtom
from planner.ir.notation import print_expr
from planner.ir.outer_join import OUTER_JOIN_COST, OUTER_JOIN_COST_THETA, OuterJoin

DESCRIPTION = ("outer joins by change propagation with per-key match counts (Griffin & Kumar; Larson & Zhou): "
               "each is its inner join plus the padded rows of its preserved sides, a row turning padded or "
               "matched when its match count crosses 0; each side keeps its own strategy (Outer join lines below)")


def outer_join_of(compiled: CompiledQuery) -> OuterJoin | None:
    """The query's outermost join when it is an outer join maintained by change propagation."""
    for node in compiled.plan.walk():
        if isinstance(node, OuterJoin):
            return node
        if isinstance(node, ForeignKeyJoin | ChangePropagationJoin | GeneralizedJoinTree):
            return None
    return None


def _side_strategy(side: LogicalPlan) -> str:
    while isinstance(side, Project | SubqueryAlias):
        side = side.child
    match side:
        case Atom(alias=alias) | ForeignKeyJoin(edges=(), atoms=(Atom(alias=alias),)):
            return f"the relation {alias}"
        case ForeignKeyJoin(preserved=(_, *_), root=root):
            return f"the foreign-key LEFT JOIN rooted at {root} (live-tuple lookup, O(1) per change)"
        case ForeignKeyJoin(root=root):
            return f"AJU live tuples rooted at {root} (O(λ) amortized)"
        case OuterJoin(kind=kind):
            return f"a {kind.upper()} outer join (its own line)"
        case ViewAtom(alias=alias):
            return f"the derived table {alias}, maintained on its own"
        case ChangePropagationJoin():
            return "binary delta joins (the materializing fallback)"
        case GeneralizedJoinTree():
            return "a generalized join tree"
    return side.node_name


def outer_joins_json(compiled: CompiledQuery) -> list[dict]:
    """Per outer join, outermost first: kind, key, the rest of ON, the WHERE it filters by, the cost
    of one change and each side's strategy."""
    return [{
        "kind": join.kind,
        "on": [f"{a} = {b}" for a, b in join.on],
        "condition": None if join.condition is None else print_expr(join.condition),
        "where": None if join.residual is None else print_expr(join.residual),
        "update_cost": OUTER_JOIN_COST_THETA if join.condition is not None else OUTER_JOIN_COST,
        "left": _side_strategy(join.left),
        "right": _side_strategy(join.right),
    } for join in compiled.plan.walk() if isinstance(join, OuterJoin)]


def outer_joins_text(compiled: CompiledQuery) -> list[str]:
    """One ``Outer join:`` line per outer join."""
    lines = []
    for join in outer_joins_json(compiled):
        on = " and ".join(join["on"] + ([join["condition"]] if join["condition"] else [])) or "a constant key"
        where = f", then WHERE {join['where']} on its rows" if join["where"] else ""
        lines.append(f"Outer join: {join['kind'].upper()} on {on}{where}: change propagation with per-key match "
                     f"counts, {join['update_cost']}; left side: {join['left']}; right side: {join['right']}")
    return lines
