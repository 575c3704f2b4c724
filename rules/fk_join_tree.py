"""Recognise foreign-key-acyclic joins and choose their root (AJU §2.2).

A join graph is a *foreign-key join* when every equi-join class is explained by foreign keys: one
atom's primary key sits in the class and every other member is a declared foreign key to it. The
query's foreign-key graph has an edge R → S for each such foreign key; it is *foreign-key acyclic*
when that graph is a DAG with exactly one vertex of in-degree 0, the root. Every join result then
contains exactly one root tuple, and a root tuple joins at most one tuple of every other relation, so
the join can be maintained through live tuples without intermediate views (AJU §3.1).

Trees and DAGs are both accepted. In a DAG a relation may reach another along several
node-disjoint paths; the live-tuple test then also checks the assertion keys of AJU §3.2
(``planner/ir/fk_graph.py`` finds them, the ``ForeignKeyJoin`` node keeps them; the lowering checks
them where the paths meet).
"""

from __future__ import annotations

from collections import defaultdict

from catalog.schema import Catalog
from planner.ir.expressions import Call, Column, conjunction, contains_subquery
from planner.ir.fk_graph import FkEdge
from planner.ir.logical import LogicalPlan
from planner.ir.maintenance import Atom, ForeignKeyJoin, JoinGraph, ViewAtom
from planner.optimizer.context import OptimizerContext
from planner.optimizer.executor import Rule


class NotAForeignKeyJoin(Exception):
    """Why a join graph is outside the foreign-key-acyclic class (the message is shown in EXPLAIN)."""


def foreign_key_edges(graph: JoinGraph, catalog: Catalog) -> tuple[tuple[FkEdge, ...], list[Call]]:
    """The query's foreign-key graph: R → S when R's FK columns share classes with all of S's key,
    and the equalities no foreign key explains (they become residual conditions on the join)."""
    atoms = {a.alias: a for a in graph.atoms}
    class_of: dict[Column, int] = {col: i for i, cls in enumerate(graph.join_classes) for col in cls}
    explained: set[Column] = set()
    edges: list[FkEdge] = []
    for referenced in atoms.values():
        key = referenced.key if isinstance(referenced, ViewAtom) else catalog.table(referenced.table).primary_key
        key_classes = [class_of.get(Column(referenced.alias, k)) for k in key]
        if not key or None in key_classes:
            continue
        for referencing in atoms.values():
            if referencing.alias == referenced.alias or isinstance(referencing, ViewAtom):
                continue  # a view is a leaf: it references nothing
            members = [
                [c for c in graph.join_classes[i] if c.table == referencing.alias] for i in key_classes
            ]
            if not all(members):
                continue
            fk_columns = tuple(m[0].name for m in members)
            # A join on a view's key needs no declared foreign key: the key is unique by construction.
            if not isinstance(referenced, ViewAtom) and catalog.foreign_key(referencing.table, fk_columns, referenced.table) is None:
                continue
            edges.append(FkEdge(referencing.alias, fk_columns, referenced.alias, key))
            explained.update(Column(referencing.alias, c) for c in fk_columns)
            explained.update(Column(referenced.alias, k) for k in key)
    edges += _edges_into_global_views(graph, edges)
    unexplained = []
    for cls in graph.join_classes:
        anchor = next((c for c in cls if c in explained), cls[0])
        unexplained += [Call("=", (col, anchor)) for col in cls if col not in explained and col != anchor]
    return tuple(edges), unexplained


def _edges_into_global_views(graph: JoinGraph, edges: list[FkEdge]) -> list[FkEdge]:
    """An optional view with no key (an uncorrelated subquery's facts, at most one row: the null-aware
    NOT IN's "holds a NULL") joins every outer tuple: one edge from the relation no other references,
    so the view is a leaf of the tree under its root (it costs that root's tuples when its row changes)."""
    globals_ = [a for a in graph.atoms if isinstance(a, ViewAtom) and a.optional and not a.key]
    referenced = {e.referenced for e in edges} | {a.alias for a in globals_}
    roots = [a.alias for a in graph.atoms if a.alias not in referenced and not isinstance(a, ViewAtom)]
    if len(roots) != 1:
        return []  # no single root: choose_root refuses the join with the reason
    return [FkEdge(roots[0], (), view.alias, ()) for view in globals_]


def _not_along_keys(graph: JoinGraph, unexplained: list[Call]) -> str:
    """Why the equalities left over cannot join: they name no foreign key (shown by EXPLAIN)."""
    atoms = {a.alias: a for a in graph.atoms}
    parts = []
    for equality in unexplained:
        col, other = equality.args
        table = getattr(atoms[col.table], "table", col.table)
        parts.append(f"the join {col} = {other} is not along a declared foreign key "
                     f"(no foreign key from {table}.{col.name} to a primary key in that class)")
    return "; ".join(parts)


def choose_root(graph: JoinGraph, edges: tuple[FkEdge, ...]) -> str:
    """The unique relation no other relation references; raises if there is none or several."""
    aliases = [a.alias for a in graph.atoms]
    referenced = {e.referenced for e in edges}
    roots = [a for a in aliases if a not in referenced]
    if len(roots) != 1:
        detail = (f"a cycle of foreign keys {' → '.join(find_cycle(edges))}" if not roots
                  else f"{len(roots)} relations referenced by none: {', '.join(roots)}")
        raise NotAForeignKeyJoin(f"the foreign-key graph needs exactly one root, found {detail}")
    _check_reaches_all(roots[0], aliases, edges)
    return roots[0]


def find_cycle(edges: tuple[FkEdge, ...]) -> list[str]:
    """One cycle of the foreign-key graph as relations, first repeated last (``[o, c, o]``); [] if none."""
    children = defaultdict(list)
    for e in edges:
        children[e.referencing].append(e.referenced)

    def walk(node: str, path: list[str]) -> list[str]:
        for nxt in children[node]:
            if nxt in path:
                return path[path.index(nxt):] + [nxt]
            found = walk(nxt, path + [nxt])
            if found:
                return found
        return []

    for start in sorted(children):
        found = walk(start, [start])
        if found:
            return found
    return []


def _check_reaches_all(root: str, aliases: list[str], edges: tuple[FkEdge, ...]) -> None:
    children = defaultdict(list)
    for e in edges:
        children[e.referencing].append(e.referenced)
    seen, stack, on_path = set(), [(root, iter(children[root]))], {root}
    seen.add(root)
    while stack:
        node, it = stack[-1]
        nxt = next(it, None)
        if nxt is None:
            stack.pop()
            on_path.discard(node)
        elif nxt in on_path:
            raise NotAForeignKeyJoin(f"a cycle of foreign keys {' → '.join(find_cycle(edges))}")
        elif nxt not in seen:
            seen.add(nxt)
            on_path.add(nxt)
            stack.append((nxt, iter(children[nxt])))
    missing = [a for a in aliases if a not in seen]
    if missing:
        raise NotAForeignKeyJoin(f"relations {', '.join(missing)} are not connected to the root {root} by foreign keys")


def _keyless_with_several_children(graph: JoinGraph, edges: tuple[FkEdge, ...], catalog: Catalog) -> str | None:
    """A relation without a primary key that references two or more others, if any (shown by EXPLAIN).

    With one child a keyless relation's tuples are counted copies in the lookup stage; with several
    the live-tuple stage would be keyed by a primary key it does not have.
    """
    children = defaultdict(int)
    for edge in edges:
        children[edge.referencing] += 1
    for atom in graph.atoms:
        if isinstance(atom, Atom) and children[atom.alias] > 1 and not catalog.table(atom.table).primary_key:
            return atom.alias
    return None


def _left_join_along_key(graph: JoinGraph, edges: tuple[FkEdge, ...], root: str, residual) -> bool:
    """R ⟕ S of two relations joined along one foreign key, either way round; the stage keyed by
    that key sees locally whether an R tuple has a live partner:

    - S references R's key (TPC-H Q13's customer ⟕ orders): an R tuple without S partners shows
      once, padded with NULLs;
    - R references S's key (orders ⟕ customer, a dangling or NULL foreign key): each R tuple shows
      once, with its S partner or with NULLs.
    """
    return (len(graph.atoms) == 2 and residual is None and len(edges) == 1 and edges[0].referencing == root
            and graph.preserved in ((edges[0].referenced,), (edges[0].referencing,)))


class ChooseForeignKeyJoinTree(Rule):
    """Rewrite a foreign-key-acyclic join graph (a tree or a DAG) into a live-tuple ``ForeignKeyJoin``.

    Preconditions: primary and foreign keys from the catalog; normalization has run (atoms, classes).

    >>> from catalog.tpch import tpch_catalog
    >>> from planner.optimizer.context import OptimizerContext
    >>> from planner.optimizer.testing import assert_rewrite
    >>> assert_rewrite(ChooseForeignKeyJoinTree(), '''
    ... JoinGraph join_classes=[[c.c_custkey, o.o_custkey], [l.l_orderkey, o.o_orderkey]]
    ...   Atom table=customer alias=c columns=[c_custkey]
    ...   Atom table=orders alias=o columns=[o_orderkey, o_custkey]
    ...   Atom table=lineitem alias=l columns=[l_orderkey]
    ... ''', '''
    ... ForeignKeyJoin root=l edges=[o(o_custkey)→c(c_custkey), l(l_orderkey)→o(o_orderkey)]
    ...   Atom table=customer alias=c columns=[c_custkey]
    ...   Atom table=orders alias=o columns=[o_orderkey, o_custkey]
    ...   Atom table=lineitem alias=l columns=[l_orderkey]
    ... ''', OptimizerContext(tpch_catalog()))

    Paper: AJU §2.2 (foreign-key acyclic joins, the root), §3.1 (live tuples), §3.2 (assertion keys).
    """

    def rewrite(self, node: LogicalPlan, ctx: OptimizerContext) -> LogicalPlan:
        if not isinstance(node, JoinGraph) or not all(isinstance(a, Atom | ViewAtom) for a in node.atoms):
            return node
        if ctx.join_strategy == "view-tree" and len(node.atoms) > 1:
            ctx.refuse(self.name, "join strategy forced to view-tree (to compare)")
            return node
        nested = [c for c in node.conditions if contains_subquery(c)]
        if nested:
            ctx.refuse(self.name, "a WHERE condition holds a subquery (IN/EXISTS/scalar) that no decorrelation rule "
                       "turned into a maintained view joined on its key")
            return node
        edges, unexplained = foreign_key_edges(node, ctx.catalog)
        try:
            root = choose_root(node, edges)
        except NotAForeignKeyJoin as reason:
            why = _not_along_keys(node, unexplained)
            ctx.refuse(self.name, f"{why}, so {reason}" if why else str(reason))
            return node
        if keyless := _keyless_with_several_children(node, edges, ctx.catalog):
            ctx.refuse(self.name, f"{keyless} has no primary key (bag semantics) and references several "
                       "relations: its live-tuple stage counts the children a tuple is alive on per "
                       "primary key, which a row present several times does not have")
            return node
        # Equalities beside the foreign keys (Q2's ps_supplycost = the subquery's minimum) filter
        # the joined rows: σ_{a=b}(R ⋈ S) with R ⋈ S already along keys.
        residual = conjunction([*node.conditions, *unexplained])
        if node.preserved and not _left_join_along_key(node, edges, root, residual):
            ctx.refuse(self.name, "a LEFT OUTER JOIN is maintained only between two relations joined along "
                       "one foreign key (either way round), with no other condition in ON than on the "
                       "right side's own columns")
            return node
        join = ForeignKeyJoin(root, edges, residual, node.atoms, node.preserved)
        shape = "a DAG" if join.assertion_keys else "a tree"
        ctx.decide(
            self.name,
            f"every join is along a foreign key and the foreign-key graph is {shape} rooted at {root}: "
            "each join result holds one root tuple, so live tuples need no intermediate views",
        )
        # R1 ⋈ ... ⋈ Rn over a foreign-key tree = the live root tuples extended by their unique partners
        return join
