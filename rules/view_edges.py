"""Join each view once: drop edges into a view that the join's other edges imply.

A subquery view keyed by a join column (TPC-H Q18's ``o_orderkey IN (... GROUP BY l_orderkey)``)
lands in the join class of that column, so every relation holding the column gets an edge to it
(orders → _v0 and lineitem → _v0). A DAG is lowered as a tree, so a view reached along two edges
would be lowered, and maintained, twice. When an edge's equalities follow from the other edges
(l_orderkey = o_orderkey = _v0.l_orderkey), dropping it changes no result.

Base relations keep their implied edges: they form the foreign-key DAG of AJU §2.2 whose assertion
keys the live-tuple test checks, and a leaf relation copied along two paths costs little. Views are
ours (decorrelation), not part of that graph, and copying one copies its whole maintained subplan.
"""

from __future__ import annotations

import attrs

from planner.ir.fk_graph import FkEdge, implied
from planner.ir.logical import LogicalPlan
from planner.ir.maintenance import ForeignKeyJoin, ViewAtom
from planner.optimizer.context import OptimizerContext
from planner.optimizer.executor import Rule


def _depths(join: ForeignKeyJoin) -> dict[str, int]:
    """Each relation's longest distance from the root along the edges."""
    depth = {join.root: 0}
    changed = True
    while changed:
        changed = False
        for edge in join.edges:
            if edge.referencing in depth and depth.get(edge.referenced, -1) < depth[edge.referencing] + 1:
                depth[edge.referenced] = depth[edge.referencing] + 1
                changed = True
    return depth


def single_edges_into_views(join: ForeignKeyJoin) -> tuple[FkEdge, ...]:
    """The join's edges with each view reached along one edge where the others are implied.

    The edge kept is the one from the relation deepest below the root: a change of the view then
    reaches the fewest tuples first (an order rather than its lineitems).
    """
    depth = _depths(join)
    edges = join.edges
    for view in (atom for atom in join.atoms if isinstance(atom, ViewAtom)):
        into = sorted((e for e in edges if e.referenced == view.alias), key=lambda e: -depth.get(e.referencing, 0))
        for edge in into[1:]:
            rest = tuple(e for e in edges if e != edge)
            if implied(edge, rest):
                edges = rest
    return edges


class JoinEachViewOnce(Rule):
    """Drop the edges into a view that the other edges of its foreign-key join imply.

    Preconditions: the join's tree is chosen (``ChooseForeignKeyJoinTree``) and join-selects have
    taken their edges (``MaintainJoinSelect`` keeps the edge its comparison needs).

    >>> from planner.optimizer.context import OptimizerContext
    >>> from planner.optimizer.testing import assert_rewrite
    >>> assert_rewrite(JoinEachViewOnce(), '''
    ... ForeignKeyJoin root=l edges=[l(l_orderkey)→o(o_orderkey), o(o_orderkey)→_v0(k0), l(l_orderkey)→_v0(k0)]
    ...   Atom table=lineitem alias=l columns=[l_orderkey, l_linenumber]
    ...   Atom table=orders alias=o columns=[o_orderkey]
    ...   ViewAtom alias=_v0 key=[k0] columns=[k0, _n] anti=False
    ...     Aggregate group_by=[l2.l_orderkey AS k0] aggregates=[count(*) AS _n]
    ...       Scan table=lineitem alias=l2 columns=[l_orderkey]
    ... ''', '''
    ... ForeignKeyJoin root=l edges=[l(l_orderkey)→o(o_orderkey), o(o_orderkey)→_v0(k0)]
    ...   Atom table=lineitem alias=l columns=[l_orderkey, l_linenumber]
    ...   Atom table=orders alias=o columns=[o_orderkey]
    ...   ViewAtom alias=_v0 key=[k0] columns=[k0, _n] anti=False
    ...     Aggregate group_by=[l2.l_orderkey AS k0] aggregates=[count(*) AS _n]
    ...       Scan table=lineitem alias=l2 columns=[l_orderkey]
    ... ''', OptimizerContext(None))
    """

    def rewrite(self, node: LogicalPlan, ctx: OptimizerContext) -> LogicalPlan:
        if not isinstance(node, ForeignKeyJoin):
            return node
        edges = single_edges_into_views(node)
        if edges == node.edges:
            return node
        dropped = ", ".join(str(e) for e in node.edges if e not in edges)
        ctx.decide(self.name, f"dropped {dropped}: implied by the other edges, so each view is maintained once")
        return attrs.evolve(node, edges=edges)
