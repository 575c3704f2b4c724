"""The two rewrites IEDyn §3 needs before evaluation: Prop. 3.8 and Prop. 3.9.

``remove_implied_inequalities`` (Prop. 3.8, algorithm omitted in the paper): an inequality implied
by the others through transitivity (``x < z ∧ z < u`` implies ``x < u``; a chain implies ``<`` if
one link is strict, ``<=`` always) is dropped, one at a time, re-checking against what is left,
so the result is equivalent. When the inequalities have no cycle, the ones left are those no chain
of others implies (for strict ones, the Hasse diagram of the order), and every equivalent set of
inequalities over these variables contains them; since dropping a predicate from a GJT's labels
keeps it a GJT, the reduced query is acyclic whenever an equivalent query with the same atoms and
a set of inequalities is. Simplifications: only implications among the query's own inequalities
(no constants, no arithmetic, no interplay with equalities: an inequality with an offset,
``x < y + c``, is neither dropped nor used to drop another); a cycle among them (``x <= y ∧ y <= x``
means ``x = y``, ``x < y ∧ y < x`` is empty) is left alone, so such queries are not helped.

``binarize`` (Prop. 3.9): a node with more than two children becomes a chain of copies of its
label, each with two children, the child that contains the label kept at the bottom so every copy
still has one (Def. 3.1). Strong compatibility: under a node of the connex set N, children outside N
are first grouped under one more copy of the label, which then stands for them in N's sibling
pairs. That copy needs a child containing the label: one of those outside children, or else a
child in N whose label equals the node's and that has no N-descendants (moving it out of N loses
no variable). When neither exists the tree stays binary but may not be strongly compatible; the
caller checks with ``connex_subset(..., sibling_closed=True)``, never assumes.
"""

from __future__ import annotations

from collections import defaultdict

from planner.ir.gcq import Gcq, Inequality
from planner.ir.gjt import GjtEdge, GjtNode, Path, connex_subset, frontier, interior, is_binary


def _implied(target: Inequality, others: list[Inequality]) -> bool:
    """A chain of ``others`` from target.left to target.right, with a strict link if target is ``<``."""
    succ: dict[str, list[Inequality]] = defaultdict(list)
    for p in others:
        succ[p.left].append(p)
    seen = set()
    stack = [(target.left, False)]
    while stack:
        var, strict = stack.pop()
        if var == target.right and (strict or not target.strict):
            return True
        if (var, strict) in seen:
            continue
        seen.add((var, strict))
        stack.extend((p.right, strict or p.strict) for p in succ[var])
    return False


def _has_cycle(predicates: tuple[Inequality, ...]) -> bool:
    return any(_implied(Inequality(p.right, "<=", p.left), list(predicates)) for p in predicates)


def remove_implied_inequalities(query: Gcq) -> tuple[Gcq, tuple[Inequality, ...]]:
    """The equivalent query without inequalities implied by the others, and the ones removed."""
    plain = tuple(p for p in query.predicates if not p.offset)
    if _has_cycle(plain):
        return query, ()
    kept = sorted(query.predicates)
    removed = []
    for p in sorted(plain):
        rest = [q for q in kept if q != p]
        if _implied(p, [q for q in rest if not q.offset]):
            kept, removed = rest, removed + [p]
    if not removed:
        return query, ()
    return query.with_predicates(kept), tuple(sorted(removed))


def _chain(label: frozenset[str], edges: list[GjtEdge]) -> GjtNode:
    """A binary chain of ``label`` copies over ``edges``; the first edge containing ``label`` goes last."""
    keeper = next(i for i, e in enumerate(edges) if label <= e.child.label)
    ordered = edges[:keeper] + edges[keeper + 1 :] + [edges[keeper]]
    node = interior(label, *ordered[-2:])
    for edge in reversed(ordered[:-2]):
        node = interior(label, edge, node)
    return node


def _group_outside(node: GjtNode, path: Path, connex: frozenset[Path]) -> list[GjtEdge]:
    """The child edges, those outside N gathered under one copy of the label when that is possible."""
    edges = list(node.children)
    inside = [i for i in range(len(edges)) if path + (i,) in connex]
    outside = [i for i in range(len(edges)) if path + (i,) not in connex]
    if not inside or not outside:
        return edges
    has_keeper = any(node.label <= edges[i].child.label for i in outside)
    if not has_keeper:
        ends = frontier(connex)
        movable = [i for i in inside if edges[i].child.label == node.label and path + (i,) in ends]
        if not movable:
            return edges
        outside, inside = outside + movable[:1], [i for i in inside if i != movable[0]]
    group = _chain(node.label, [edges[i] for i in outside])
    return [edges[i] for i in inside] + [GjtEdge(group)]


def binarize(root: GjtNode, out: frozenset[str] | None = None) -> GjtNode:
    """A binary GJT for the same query (Prop. 3.9), strongly compatible with ``out`` where possible.

    A tree that is already binary (and strongly compatible, given ``out``) is returned as is."""
    if is_binary(root) and (out is None or connex_subset(root, out, sibling_closed=True) is not None):
        return root
    connex = (connex_subset(root, out) if out is not None else None) or frozenset()
    return _binarize(root, connex, ())


def _binarize(root: GjtNode, connex: frozenset[Path], path: Path) -> GjtNode:
    if root.is_leaf:
        return root
    children = tuple(
        GjtEdge(_binarize(e.child, connex, path + (i,)), e.predicates) for i, e in enumerate(root.children)
    )
    edges = _group_outside(GjtNode(root.label, children), path, connex) if path in connex else list(children)
    if len(edges) <= 2 and edges == list(root.children):
        return root
    return _chain(root.label, edges) if len(edges) > 1 else interior(root.label, *edges)
