"""EXPLAIN's section on the heavy/light triangle count (IVM^ε, Olteanu §3.3): ε, the amortized
update bound, the materialized views and why no stronger strategy applies (the query's class
witness, read from ``explain_classes``). Read from the ``HeavyLightTriangleCount`` node; nothing is
derived again here.
"""

from __future__ import annotations

from planner.compiler import CompiledQuery
from planner.explain_classes import query_classes
from planner.ir.heavy_light_plan import TRIANGLE, VIEWS, HeavyLightTriangleCount, amortized_bound
from planner.ir.join_query import NotAJoinQuery

DESCRIPTION = ("heavy/light partitioning for the triangle count (IVM^ε, Olteanu §3.3; Kara et al. ICDT'19): each "
               "relation split on its first variable into light keys (degree < ~N^ε) and heavy ones (at most "
               "~N^(1−ε)), one view per heavy/light pair, rebalanced as N changes; one stage keyed by a "
               "constant key (does not scale out)")
OPTIMUM = ("ε = 1/2 gives O(√N), the optimum under the OMv conjecture (Olteanu Thm 3.4); ε = 1 is plain "
           "first-order delta queries, O(N)")


def heavy_light_of(compiled: CompiledQuery) -> HeavyLightTriangleCount | None:
    return next((n for n in compiled.plan.walk() if isinstance(n, HeavyLightTriangleCount)), None)


def _witness(compiled: CompiledQuery) -> dict[str, str]:
    """Why the query is neither hierarchical nor acyclic (no view tree, no join tree)."""
    found = query_classes(compiled)
    if isinstance(found, NotAJoinQuery):
        return {}
    witnesses = found.maintained.witnesses
    return {name: witnesses[name] for name in ("hierarchical", "acyclic") if name in witnesses}


def heavy_light_json(compiled: CompiledQuery) -> dict:
    node = heavy_light_of(compiled)
    return {"strategy": "heavy_light_triangle", "description": DESCRIPTION, "root": None, "fk_edges": [],
            "epsilon": node.epsilon, "amortized_update": amortized_bound(node.epsilon), "optimum": OPTIMUM,
            "triangle": {relation: [str(c) for c in pair] for relation, pair in zip(TRIANGLE, node.edges, strict=True)},
            "views": list(VIEWS), "key": "constant key (does not scale out)", "not_stronger": _witness(compiled)}


def heavy_light_text(compiled: CompiledQuery) -> list[str]:
    node = heavy_light_of(compiled)
    lines = [f"Heavy/light partitioning (IVM^ε), ε = {node.epsilon:g}: {amortized_bound(node.epsilon)}; {OPTIMUM}",
             "  triangle: " + ", ".join(f"{relation} = {a.alias}({first.name}, {second.name})"
                                       for relation, a, (first, second) in zip(TRIANGLE, node.atoms, node.edges, strict=True)),
             f"  materialized views: {'; '.join(VIEWS)}",
             "  key: constant key (does not scale out)"]
    lines += [f"  not {name}: {why}" for name, why in _witness(compiled).items()]
    return lines
