"""Generalized join trees (IEDyn §3, Def. 3.1–3.5): the tree, its validity check, connex subsets.

A GJT's leaves are the query's atoms; an interior node is labelled by a hyperedge (a subset of one
atom's variables) and has a child whose variables include its own; every variable's nodes form a
connected subtree; each predicate sits on an edge ``p → c`` with its variables in
``var(p) ∪ var(c)``. Nodes are values (two ``{u}`` nodes are equal), so a node of a tree is named
by its *path*, the tuple of child positions from the root; connex subsets are sets of paths.

``gjt_errors`` checks Def. 3.1 literally, so tests can hold hand-drawn trees (the paper's Figure 2)
and constructed ones to the definition. ``connex_subset`` finds a connex subset N with
var(N) = out(Q) (Def. 3.5, compatibility), or a sibling-closed one (strong compatibility, §3 before
Prop. 3.9), or reports that none exists. The construction (Prop. 3.7) is in ``gjt_reduction.py``,
the rewrites of Props. 3.8 and 3.9 in ``gjt_rewrites.py``.
"""

from __future__ import annotations

from collections.abc import Iterator

import attrs

from planner.ir.gcq import Atom, Gcq, Inequality

Path = tuple[int, ...]


def _fmt_vars(variables: frozenset[str]) -> str:
    return "{" + ",".join(sorted(variables)) + "}"


@attrs.frozen
class GjtEdge:
    """The edge to ``child`` and its label pred(p → c)."""

    child: GjtNode
    predicates: tuple[Inequality, ...] = ()


@attrs.frozen
class GjtNode:
    """A leaf holds ``atom``; an interior node holds the hyperedge ``label`` and child edges."""

    label: frozenset[str] = attrs.field(converter=frozenset)
    children: tuple[GjtEdge, ...] = ()
    atom: Atom | None = None

    @property
    def is_leaf(self) -> bool:
        return self.atom is not None

    def text(self) -> str:
        return str(self.atom) if self.atom is not None else _fmt_vars(self.label)


def leaf(atom: Atom) -> GjtNode:
    return GjtNode(atom.var_set, (), atom)


def interior(label: frozenset[str] | set[str], *children: GjtEdge | GjtNode) -> GjtNode:
    """An interior node; a bare child node means an edge without predicates."""
    edges = tuple(c if isinstance(c, GjtEdge) else GjtEdge(c) for c in children)
    return GjtNode(frozenset(label), edges)


def nodes(root: GjtNode, path: Path = ()) -> Iterator[tuple[Path, GjtNode]]:
    """Every node with its path, pre-order."""
    yield path, root
    for i, edge in enumerate(root.children):
        yield from nodes(edge.child, path + (i,))


def node_at(root: GjtNode, path: Path) -> GjtNode:
    for i in path:
        root = root.children[i].child
    return root


def edges(root: GjtNode) -> Iterator[tuple[GjtNode, GjtEdge]]:
    """Every edge with its parent."""
    for _, node in nodes(root):
        for edge in node.children:
            yield node, edge


def gjt_errors(root: GjtNode, query: Gcq) -> list[str]:
    """Why ``root`` is not a GJT for at(Q) and pred(Q) (Def. 3.1); empty when it is one."""
    errors = []
    hyperedges = [a.var_set for a in query.atoms]
    leaves = [n.atom for _, n in nodes(root) if n.is_leaf]
    if sorted(map(str, leaves)) != sorted(map(str, query.atoms)):
        errors.append(f"leaves {sorted(map(str, leaves))} are not the atoms {sorted(map(str, query.atoms))}")
    for path, node in nodes(root):
        if node.is_leaf:
            continue
        if not any(node.label <= h for h in hyperedges):
            errors.append(f"{node.text()} at {path} is not a hyperedge")
        if not any(node.label <= e.child.label for e in node.children):
            errors.append(f"{node.text()} at {path} has no child containing its variables")
    for variable in query.variables:
        holding = {p for p, n in nodes(root) if variable in n.label}
        # Connected iff exactly one holding node has a parent outside the set (its top).
        tops = [p for p in holding if not p or p[:-1] not in holding]
        if len(tops) > 1:
            errors.append(f"variable {variable} occurs in disconnected nodes")
    placed = set()
    for parent, edge in edges(root):
        for p in edge.predicates:
            placed.add(p)
            if not p.variables <= parent.label | edge.child.label:
                errors.append(f"{p} on {parent.text()}→{edge.child.text()} uses variables of neither end")
    missing = set(query.predicates) - placed
    if missing:
        errors.append(f"predicates on no edge: {sorted(map(str, missing))}")
    return errors


def connex_subset(root: GjtNode, out: frozenset[str], sibling_closed: bool = False) -> frozenset[Path] | None:
    """A connex subset N with var(N) = out (Def. 3.4, 3.5), sibling-closed if asked; None if none.

    The union of two connex subsets whose variables lie in ``out`` is again one (and sibling-closed
    if both are), so the largest such set, grown greedily from the root, has var(N) = out exactly
    when some connex subset does: the search is complete, not a heuristic.
    """
    if not root.label <= out:
        return None
    chosen: set[Path] = {()}
    frontier: list[Path] = [()]
    while frontier:
        path = frontier.pop()
        kids = node_at(root, path).children
        fitting = [i for i, e in enumerate(kids) if e.child.label <= out]
        if sibling_closed and len(fitting) < len(kids):
            continue
        for i in fitting:
            chosen.add(path + (i,))
            frontier.append(path + (i,))
    covered = frozenset().union(*(node_at(root, p).label for p in chosen))
    return frozenset(chosen) if covered == out else None


def covering_connex(root: GjtNode, out: frozenset[str]) -> frozenset[Path]:
    """The smallest sibling-closed connex subset, grown from the root, whose variables include ``out``:
    the nodes whose subtree holds an output variable, with their siblings. When the query is not
    free-connex, enumeration walks this set and projects onto ``out`` with multiplicities (the
    free-connex extension of IEDyn §6: var(N) ⊋ out(Q), so the delay is no longer constant)."""
    chosen: set[Path] = {()}
    frontier: list[Path] = [()]
    while frontier:
        path = frontier.pop()
        kids = node_at(root, path).children
        if any(_subtree_variables(e.child) & out for e in kids):
            for i in range(len(kids)):
                chosen.add(path + (i,))
                frontier.append(path + (i,))
    return frozenset(chosen)


def _subtree_variables(root: GjtNode) -> frozenset[str]:
    return frozenset().union(*(n.label for _, n in nodes(root)))


def frontier(connex: frozenset[Path]) -> frozenset[Path]:
    """The nodes of N that are leaves of the subtree N induces (Def. 3.4)."""
    return frozenset(p for p in connex if not any(q[:-1] == p for q in connex if q))


def is_binary(root: GjtNode) -> bool:
    return all(len(n.children) <= 2 for _, n in nodes(root))


def render(root: GjtNode, connex: frozenset[Path] = frozenset()) -> str:
    """The tree as indented text: one node a line, ``[predicates]`` of the edge above it, ``*`` on
    the nodes of the connex set. This is what EXPLAIN prints."""
    lines = []
    for path, node in nodes(root):
        edge = node_at(root, path[:-1]).children[path[-1]] if path else None
        preds = f"[{' ∧ '.join(map(str, edge.predicates))}] " if edge and edge.predicates else ""
        mark = " *" if path in connex else ""
        lines.append("  " * len(path) + preds + node.text() + mark)
    return "\n".join(lines)
