"""Facts about a query's foreign-key DAG that AJU's live-tuple test needs (AJU §3.2).

A pair (R_i, R_j) is *unconstrained* when there are two or more node-disjoint paths from R_j down
to R_i: a tuple of R_j may then reach different R_i tuples along different paths (Figure 6), so
``PK(R_i)`` is an *assertion key* of R_j and a tuple of R_j is live only if every path reaches the
same R_i tuple (Lemma 4). When all paths share a relation R_k, the check at R_k suffices.

The graphs are query-sized (a handful of relations), so paths are enumerated directly.
"""

from __future__ import annotations

from collections import defaultdict
from itertools import combinations

from planner.maintenance import FkEdge


def _children(edges: tuple[FkEdge, ...]) -> dict[str, list[str]]:
    children: dict[str, list[str]] = defaultdict(list)
    for edge in edges:
        children[edge.referencing].append(edge.referenced)
    return children


def paths(edges: tuple[FkEdge, ...], start: str, end: str) -> list[tuple[str, ...]]:
    """Every directed path from ``start`` to ``end`` (the graph is acyclic, so they are simple)."""
    children = _children(edges)
    found: list[tuple[str, ...]] = []

    def walk(node: str, path: tuple[str, ...]) -> None:
        if node == end:
            found.append(path)
            return
        for child in children[node]:
            walk(child, path + (child,))

    walk(start, (start,))
    return found


def unconstrained_pairs(edges: tuple[FkEdge, ...]) -> tuple[tuple[str, str], ...]:
    """Pairs ``(descendant, ancestor)`` joined by two node-disjoint paths, as AJU §3.2 lists them."""
    nodes = sorted({e.referencing for e in edges} | {e.referenced for e in edges})
    pairs = []
    for ancestor in nodes:
        for descendant in nodes:
            if ancestor == descendant:
                continue
            found = paths(edges, ancestor, descendant)
            if any(not set(a[1:-1]) & set(b[1:-1]) for a, b in combinations(found, 2)):
                pairs.append((descendant, ancestor))
    return tuple(pairs)


def assertion_keys(edges: tuple[FkEdge, ...]) -> dict[str, tuple[str, ...]]:
    """For each relation R_j, the relations whose primary key is an assertion key of R_j."""
    keys: dict[str, list[str]] = defaultdict(list)
    for descendant, ancestor in unconstrained_pairs(edges):
        keys[ancestor].append(descendant)
    return {alias: tuple(found) for alias, found in keys.items()}
