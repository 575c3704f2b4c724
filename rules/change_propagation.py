"""Join trees for the change-propagation framework (AJU §3.5): Theorem 11's tree, a forced join
order, and the general fallback for joins the live-tuple strategy cannot take.

Theorem 11's tree: traverse the foreign-key DAG bottom-up; a leaf's view is the relation, a
non-leaf R's view joins R with its children's views left-deep, every join along a foreign key (and,
in a DAG, also on the keys of the descendants two children share). It has O(λ) amortized update
time like the live-tuple plan, but materializes every view (AJU Figure 13 compares their memory).

The fallback joins relations that share an equality on it; a relation linked to those before it only
by other conditions (``r.a < s.d``: an inequality join) is joined on a constant key. Each condition
filters the lowest join whose inputs hold all its columns, ``σ_p(L ⋈ R)`` with refs(p) ⊆ out(L ⋈ R):
the materializing comparison point for IEDyn, whose sub-joins are materialized with their
predicates applied (DBToaster-like), never a cross product filtered at the top.
"""

from __future__ import annotations

import attrs

from planner.ir.expressions import Call, Column, Expr, columns, conjunction, contains_subquery
from planner.ir.fk_graph import equality_classes, natural_pairs
from planner.ir.logical import LogicalPlan
from planner.ir.maintenance import (
    Atom,
    BinaryJoin,
    ChangePropagationJoin,
    ForeignKeyJoin,
    JoinGraph,
    ViewAtom,
)
from planner.optimizer.context import OptimizerContext
from planner.optimizer.executor import Rule


def _tables(condition: Expr) -> set[str]:
    return {c.table for c in columns(condition)}


def left_deep_tree(graph: JoinGraph, order: tuple[str, ...]) -> LogicalPlan:
    """Join the atoms in ``order``, each on every equality class it shares with those before it, each
    join filtered by the conditions whose relations it is the first to hold all of."""
    by_alias = {a.alias: a for a in graph.atoms}
    missing = [a for a in order if a not in by_alias]
    if missing or sorted(order) != sorted(by_alias):
        raise ValueError(f"the join order {', '.join(order)} must name each relation once: {', '.join(sorted(by_alias))}")
    tree: LogicalPlan = by_alias[order[0]]
    pending = list(graph.conditions)
    for i, alias in enumerate(order[1:], start=1):
        atom = by_alias[alias]
        on = natural_pairs(tree.output, atom.output, graph.join_classes)
        here = [c for c in pending if _tables(c) <= set(order[: i + 1])]
        if not on and not here:
            raise ValueError(f"joining {alias} after {', '.join(order[:i])} would be a cross product")
        pending = [c for c in pending if c not in here]
        tree = BinaryJoin(on, tree, atom, conjunction(here))
    return tree


def equalities_within_atoms(graph: JoinGraph) -> tuple[Expr, ...]:
    """``r.a = r.c`` where a join class holds two columns of one relation: the joins pair one column
    of each relation per class, so these would be enforced by none of them."""
    found = []
    for cls in graph.join_classes:
        first: dict[str, Column] = {}
        for column in cls:
            if column.table in first:
                found.append(Call("=", (first[column.table], column)))
            else:
                first[column.table] = column
    return tuple(found)


def connected_order(graph: JoinGraph) -> tuple[str, ...] | None:
    """A left-deep order in which every relation shares a join class (preferably) or a condition with
    those before it, if any."""
    aliases = [a.alias for a in graph.atoms]
    order = [aliases[0]]
    while len(order) < len(aliases):
        rest = [a for a in aliases if a not in order]
        equal = [a for a in rest if any(
            any(c.table == a for c in cls) and any(c.table in order for c in cls) for cls in graph.join_classes)]
        compared = [a for a in rest if any(a in _tables(c) and _tables(c) <= {*order, a} for c in graph.conditions)]
        if not equal and not compared:
            return None
        order.append((equal or compared)[0])
    return tuple(order)


#: The strategies the fallback stands in for, whose refusals say why it was chosen.
STRONGER = ("ChooseForeignKeyJoinTree", "ChooseGeneralizedJoinTree")


class ChooseChangePropagationJoin(Rule):
    """Maintain a join graph the live-tuple strategy refused (or every join, when a join tree is
    forced) by change propagation over binary joins.

    Preconditions: normalization (atoms, classes); runs after ``ChooseForeignKeyJoinTree``.
    """

    def rewrite(self, node: LogicalPlan, ctx: OptimizerContext) -> LogicalPlan:
        match node:
            # R1 ⋈ … ⋈ Rn = ((R_i ⋈ R_j) ⋈ …) ⋈ R_k in any order (associativity): the forced tree, to compare (AJU Fig. 12a)
            case ForeignKeyJoin(atoms=atoms) if ctx.join_tree is not None and not node.preserved:
                graph = JoinGraph(atoms, (), _classes_of(node))
                if ctx.join_tree == "theorem11":
                    return ChangePropagationJoin("theorem11", node.residual, node.theorem11_tree)
                return ChangePropagationJoin("forced", node.residual, left_deep_tree(graph, ctx.join_tree))
            # σ_θ(R1 ⋈ … ⋈ Rn) = a left-deep tree of binary joins, each conjunct of θ on the lowest join holding its relations
            case JoinGraph(atoms=atoms) if all(isinstance(a, Atom | ViewAtom) for a in atoms) and not node.preserved:
                if any(contains_subquery(c) for c in node.conditions) or len(atoms) < 2:
                    return node
                if any(isinstance(a, ViewAtom) and a.anti for a in atoms):
                    # a binary join stage emits matches; an anti view's rows are the keys to exclude
                    ctx.refuse(self.name, "a NOT EXISTS, NOT IN or LEFT ANTI JOIN is maintained only in a join "
                               "along keys, not by binary joins")
                    return node
                order = connected_order(node)
                if order is None:
                    ctx.refuse(self.name, "the relations are not all connected by equalities or conditions "
                               "(a cross product)")
                    return node
                why = "; ".join(ctx.refusals.get(rule, "") for rule in STRONGER if rule in ctx.refusals)
                ctx.decide(self.name, f"general fallback: binary delta joins with materialized views, because {why}")
                # every condition sits on the lowest join holding its relations: nothing is left above
                graph = attrs.evolve(node, conditions=node.conditions + equalities_within_atoms(node))
                return ChangePropagationJoin("fallback", None, left_deep_tree(graph, order))
        return node


def _classes_of(join: ForeignKeyJoin) -> tuple[tuple[Column, ...], ...]:
    """The equi-join classes the foreign-key edges imply (merged: c_nationkey = n_nationkey = s_nationkey)."""
    return equality_classes((Column(edge.referencing, column), Column(edge.referenced, key))
                            for edge in join.edges for column, key in zip(edge.columns, edge.key, strict=True))
