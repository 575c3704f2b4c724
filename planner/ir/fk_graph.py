"""A query's foreign-key graph: its edges, and the facts about it that AJU's live-tuple test needs (AJU §3.2).

A pair (R_i, R_j) is *unconstrained* when there are two or more node-disjoint paths from R_j down
to R_i: a tuple of R_j may then reach different R_i tuples along different paths (Figure 6), so
``PK(R_i)`` is an *assertion key* of R_j and a tuple of R_j is live only if every path reaches the
same R_i tuple (Lemma 4). When all paths share a relation R_k, the check at R_k suffices.

Where a relation's children do not already hold ``PK(R_i)``, the key must be added to some
relations as *auxiliary attributes* so that Condition 5 holds; finding the fewest is NP-hard in
the DAG's size but the DAG is query-sized, so ``auxiliary_attributes`` searches by brute force, as
the paper says. The graphs are a handful of relations, so paths are enumerated directly.

These functions read edges only, so this module sits below the plan nodes: ``ForeignKeyJoin``
(``planner/ir/maintenance.py``) calls them once per node and caches the answers, and lowering and
EXPLAIN read the node's facts.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from itertools import chain, combinations

import attrs

from planner.ir.expressions import Column
from planner.ir.notation import notation_edge


@notation_edge
@attrs.frozen
class FkEdge:
    """``referencing(columns)`` is a foreign key to the primary key ``referenced(key)`` (aliases)."""

    referencing: str
    columns: tuple[str, ...]
    referenced: str
    key: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.referencing}({','.join(self.columns)})→{self.referenced}({','.join(self.key)})"


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


#: Beyond this many candidate attributes the brute-force search would try too many sets.
MAX_AUXILIARY_CANDIDATES = 16


def auxiliary_attributes(edges: tuple[FkEdge, ...]) -> dict[str, tuple[str, ...]]:
    """The fewest auxiliary attributes satisfying AJU Condition 5: relation → descendants whose key it gets.

    Condition 5: for each unconstrained pair (R_i, R_j) and each child R_c of R_j that reaches R_i,
    some path from R_c down to R_i has ``PK(R_i)`` in every relation on it, as an original attribute
    (R_i itself, or a foreign key straight to R_i), an assertion key, or an auxiliary attribute.
    Tries candidate sets by increasing size; the first that satisfies the condition is the answer.
    """
    pairs = unconstrained_pairs(edges)
    keys = assertion_keys(edges)
    direct = {(e.referencing, e.referenced) for e in edges}
    children = _children(edges)
    routes = [(descendant, paths(edges, child, descendant))
              for descendant, ancestor in pairs for child in children[ancestor]]
    routes = [(descendant, found) for descendant, found in routes if found]

    def native(relation: str, descendant: str) -> bool:
        return (relation == descendant or (relation, descendant) in direct
                or descendant in keys.get(relation, ()))

    candidates = sorted({(relation, descendant) for descendant, found in routes for path in found
                         for relation in path if not native(relation, descendant)})
    if len(candidates) > MAX_AUXILIARY_CANDIDATES:
        raise ValueError(f"the foreign-key DAG needs a choice among {len(candidates)} auxiliary attributes; "
                         f"the brute-force search (AJU §3.2) stops at {MAX_AUXILIARY_CANDIDATES}")

    def satisfied(added: set[tuple[str, str]]) -> bool:
        return all(any(all(native(r, descendant) or (r, descendant) in added for r in path) for path in found)
                   for descendant, found in routes)

    subsets = chain.from_iterable(combinations(candidates, size) for size in range(len(candidates) + 1))
    chosen = next(set(subset) for subset in subsets if satisfied(set(subset)))
    result: dict[str, list[str]] = defaultdict(list)
    for relation, descendant in sorted(chosen):
        result[relation].append(descendant)
    return {relation: tuple(found) for relation, found in result.items()}


def implied(edge: FkEdge, edges: tuple[FkEdge, ...]) -> bool:
    """Whether the equalities of ``edge`` follow from those of ``edges`` (transitively)."""
    parent: dict[Column, Column] = {}

    def find(column: Column) -> Column:
        while parent.setdefault(column, column) != column:
            column = parent[column]
        return column

    for other in edges:
        for column, key in zip(other.columns, other.key, strict=True):
            parent[find(Column(other.referencing, column))] = find(Column(other.referenced, key))
    return all(find(Column(edge.referencing, c)) == find(Column(edge.referenced, k))
               for c, k in zip(edge.columns, edge.key, strict=True))


def natural_pairs(left: tuple[Column, ...], right: tuple[Column, ...], classes: tuple[tuple[Column, ...], ...]):
    """Equalities joining plans with output columns ``left`` and ``right``: per join class, one column
    of each side, plus the columns of one relation appearing on both sides (a descendant shared in a DAG)."""
    pairs = []
    for cls in classes:
        lhs = [c for c in cls if c in left]
        rhs = [c for c in cls if c in right]
        if lhs and rhs:
            pairs.append((lhs[0], rhs[0]))
    shared = [c for c in right if c in left]
    pairs += [(c, c) for c in dict.fromkeys(shared) if all(c not in p for p in pairs)]
    return tuple(pairs)


def equality_classes(pairs: Iterable[tuple[Column, Column]]) -> tuple[tuple[Column, ...], ...]:
    """The classes of columns the equalities ``pairs`` make equal (equality is transitive: a union-find),
    each in the order its columns were first seen, the classes in the order of their first column."""
    parent: dict[Column, Column] = {}

    def find(c: Column) -> Column:
        while parent.setdefault(c, c) != c:
            c = parent[c]
        return c

    for a, b in pairs:
        parent[find(a)] = find(b)
    groups: dict[Column, list[Column]] = {}
    for column in list(parent):
        groups.setdefault(find(column), []).append(column)
    return tuple(tuple(group) for group in groups.values())
