"""EXPLAIN's section on a generalized join tree (IEDyn §3, §5, §6): the GCQ, the inequalities removed as
implied (Prop. 3.8), the tree with its edge predicates and connex set, the update and delay bounds, and
how an aggregate over the join is computed (off the root's ring payload, or by enumeration, and why).

Everything is read from the ``GeneralizedJoinTree`` node the rule built; nothing is derived again here
but the aggregate's plan, which ``gjt_ring_aggregate`` decides the same way the lowering does.
"""

from __future__ import annotations

from planner.compiler import CompiledQuery
from planner.ir.gjt import edges, node_at, render
from planner.ir.gjt_aggregate import GjtRingAggregate, gjt_ring_aggregate
from planner.ir.gjt_maintenance import GeneralizedJoinTree
from planner.ir.maintenance import RingAggregate


def gjt_of(compiled: CompiledQuery) -> GeneralizedJoinTree | None:
    return next((n for n in compiled.plan.walk() if isinstance(n, GeneralizedJoinTree)), None)


def gjt_json(compiled: CompiledQuery) -> dict:
    """The strategy fields of a GJT plan (``"strategy": "gjt"``, ``free_connex``, the tree, the bounds)."""
    node = gjt_of(compiled)
    return _strategy(node) | _aggregate(compiled, node)


def _strategy(node: GeneralizedJoinTree) -> dict:
    """What EXPLAIN shows of a GJT plan, read off the node (IEDyn §3, §5, §6)."""
    gjt = node.gjt
    tree = gjt.tree
    connex = node.enumerated
    covered = sorted(frozenset().union(*(node_at(tree, p).label for p in connex)))
    # the output here is the join's: the columns the plan above it reads (an aggregate's group and
    # arguments), not the query's GROUP BY alone, of which the query class (Olteanu §4) speaks
    output = f"the join's output {{{', '.join(sorted(gjt.reduced.out))}}} (the columns read above the join)"
    if gjt.free_connex:
        shape = f"free-connex for {output}: the connex set N (marked *) covers exactly it"
    else:
        witness = f" (the reduction guarded by the output leaves {gjt.free_connex_witness})" if gjt.free_connex_witness else ""
        shape = (f"not free-connex for {output}: no sibling-closed connex set covers exactly it{witness}; maintained "
                 f"anyway through the free-connex extension (IEDyn §6): enumeration walks the connex set marked * "
                 f"(variables {{{', '.join(covered)}}}) and projects with multiplicities")
    return {
        "strategy": "gjt",
        "free_connex": gjt.free_connex,
        "free_connex_witness": str(gjt.free_connex_witness) if gjt.free_connex_witness else None,
        "description": f"IEDyn T-representation over a generalized join tree: {shape}",
        "root": None, "fk_edges": [],
        "gcq": str(gjt.query),
        "removed_as_implied": [str(p) for p in gjt.removed],
        "tree": render(tree, connex),
        "edge_predicates": [f"{parent.text()} → {edge.child.text()}: {' ∧ '.join(map(str, edge.predicates))}"
                            for parent, edge in edges(tree) if edge.predicates],
        "connex": sorted(list(p) for p in connex),
        "connex_variables": covered,
        "update_bound": node.update_bound,
        "delay_bound": node.delay_bound,
    }


def _aggregate(compiled: CompiledQuery, node: GeneralizedJoinTree) -> dict:
    """How a ring aggregate over the GJT is computed: off the root's payload, or why by enumeration."""
    top = next((n for n in compiled.plan.walk() if isinstance(n, RingAggregate) and n.child is node), None)
    if top is None:
        return {}
    ring = gjt_ring_aggregate(top.group_by, top.aggregates, node, compiled.context.catalog)
    if isinstance(ring, GjtRingAggregate):
        return {"aggregate": ring.explain, "aggregate_tree": render(ring.plan.tree)}
    return {"aggregate": f"the join's changes are enumerated into a ring aggregate (O(output changes) per batch): {ring}"}


def gjt_text(strategy: dict) -> list[str]:
    lines = [f"GCQ: {strategy['gcq']}"]
    if strategy["removed_as_implied"]:
        lines.append(f"Removed as implied by the others (Prop. 3.8): {' ∧ '.join(strategy['removed_as_implied'])}")
    lines += ["Generalized join tree ([edge predicates] above a node, * the connex set):", strategy["tree"]]
    lines.append("Edge predicates: " + ("; ".join(strategy["edge_predicates"]) or "none"))
    lines.append(f"Connex set variables: {{{', '.join(strategy['connex_variables'])}}}")
    lines.append(f"Update: {strategy['update_bound']}")
    lines.append(f"Enumeration delay: {strategy['delay_bound']}")
    if "aggregate" in strategy:
        lines.append(f"Aggregate: {strategy['aggregate']}")
    if "aggregate_tree" in strategy:
        lines += ["GJT guarded by the GROUP BY (the ring stage's tree):", strategy["aggregate_tree"]]
    return lines
