"""Normalization: flatten inner joins into a join graph of atoms, push selections into the atoms,
and group equality conjuncts into equi-join variable classes (AJU footnote 1: a multi-way equi-join
is a natural join once each class of equal attributes gets one name).

Strategy rules then only look at ``JoinGraph`` nodes, whatever shape the SQL had.
"""

from __future__ import annotations

import attrs

from planner.ir.expressions import Call, Column, Expr, columns, conjunction, conjuncts, contains_subquery
from planner.ir.fk_graph import equality_classes
from planner.ir.logical import Filter, Join, LogicalPlan, Scan
from planner.ir.maintenance import Atom, JoinGraph, ViewAtom
from planner.optimizer.context import OptimizerContext
from planner.optimizer.executor import Rule


def _as_graph(plan: LogicalPlan) -> JoinGraph | None:
    match plan:
        # a join graph is its own graph
        case JoinGraph():
            return plan
        # a scan of R is the graph of one atom R with no conditions
        case Scan(table, alias, cols):
            return JoinGraph((Atom(table, alias, cols),))
        # a view atom V is the graph of one atom V
        case ViewAtom():
            return JoinGraph((plan,))
    return None


class FlattenInnerJoins(Rule):
    """Merge inner/cross joins, filters and scans into one ``JoinGraph``.

    Preconditions: none (pure algebra).

    >>> from planner.optimizer.testing import assert_rewrite
    >>> assert_rewrite(FlattenInnerJoins(), '''
    ... Filter condition=o.o_custkey = c.c_custkey
    ...   Join[cross]
    ...     Scan table=customer alias=c columns=[c_custkey]
    ...     Scan table=orders alias=o columns=[o_custkey]
    ... ''', '''
    ... JoinGraph conditions=[o.o_custkey = c.c_custkey]
    ...   Atom table=customer alias=c columns=[c_custkey]
    ...   Atom table=orders alias=o columns=[o_custkey]
    ... ''', None)

    Keeps a two-line ``apply`` around the executor's walk: a relation read on its own at the plan's
    root has no parent whose rewrite makes it a join graph of one atom.

    Paper: AJU §2.2, expression (1).
    """

    def apply(self, plan: LogicalPlan, ctx: OptimizerContext) -> LogicalPlan:
        flattened = super().apply(plan, ctx)
        return _as_graph(flattened) if isinstance(flattened, Scan | ViewAtom) else flattened

    def rewrite(self, node: LogicalPlan, ctx: OptimizerContext) -> LogicalPlan:
        match node:
            # R ⋈_p S = σ_p(R × S): the join becomes atoms plus a condition
            case Join(kind=("inner" | "cross"), condition=cond, left=left, right=right) if (
                (lg := _as_graph(left)) is not None and (rg := _as_graph(right)) is not None
                and not (lg.preserved or rg.preserved)
            ):
                # a side may be a derived table inlined after its joins became classes: keep them
                return JoinGraph(lg.atoms + rg.atoms, lg.conditions + rg.conditions + tuple(conjuncts(cond)),
                                 lg.join_classes + rg.join_classes)
            # R ⟕_p S of two relations: the atoms and p, with R marked preserved (NULL padding)
            case Join(kind="left", condition=cond, left=left, right=right) if (
                (lg := _as_graph(left)) is not None and (rg := _as_graph(right)) is not None
                and len(lg.atoms) == 1 == len(rg.atoms) and not (lg.conditions or rg.conditions or lg.preserved or rg.preserved)
            ):
                return JoinGraph(lg.atoms + rg.atoms, tuple(conjuncts(cond)), preserved=(lg.atoms[0].alias,))
            # σ_p(σ_q(atoms)) = σ_{p ∧ q}(atoms); a WHERE over a LEFT JOIN may test the NULL padding: it stays a Filter
            case Filter(condition=cond, child=child) if (graph := _as_graph(child)) is not None and not graph.preserved:
                return JoinGraph(graph.atoms, graph.conditions + tuple(conjuncts(cond)), graph.join_classes)
            # R = ⋈(R): a relation read on its own under any other operator (a one-table query, a view in FROM)
            case _ if not isinstance(node, JoinGraph) and any(isinstance(c, Scan | ViewAtom) for c in node.children):
                return node.with_children(tuple(_as_graph(c) if isinstance(c, Scan | ViewAtom) else c
                                                for c in node.children))
        return node


class PushSelectionsIntoAtoms(Rule):
    """Move conjuncts that mention one atom only into that atom's predicate.

    >>> from planner.optimizer.testing import assert_rewrite
    >>> assert_rewrite(PushSelectionsIntoAtoms(), '''
    ... JoinGraph conditions=[c.c_mktsegment = 'BUILDING', o.o_custkey = c.c_custkey]
    ...   Atom table=customer alias=c columns=[c_custkey, c_mktsegment]
    ...   Atom table=orders alias=o columns=[o_custkey]
    ... ''', '''
    ... JoinGraph conditions=[o.o_custkey = c.c_custkey]
    ...   Atom table=customer alias=c columns=[c_custkey, c_mktsegment] predicate=c.c_mktsegment = 'BUILDING'
    ...   Atom table=orders alias=o columns=[o_custkey]
    ... ''', None)

    Paper: AJU §2.3 (an update failing φ_i is discarded).
    """

    def rewrite(self, node: LogicalPlan, ctx: OptimizerContext) -> LogicalPlan:
        if not isinstance(node, JoinGraph):
            return node
        # a view without a key (a derived table of a window or a set operation) filters its own rows
        by_alias = {a.alias: a for a in node.atoms if isinstance(a, Atom) or isinstance(a, ViewAtom) and a.key is None}
        pushed: dict[str, list[Expr]] = {}
        kept: list[Expr] = []
        for cond in node.conditions:
            aliases = {c.table for c in columns(cond)}
            # σ_p(R ⋈ S) = σ_p(R) ⋈ S when refs(p) ⊆ out(R)
            # an ON condition on the preserved side of a LEFT JOIN does not filter that side
            if (len(aliases) == 1 and next(iter(aliases)) in by_alias and not contains_subquery(cond)
                    and not aliases & set(node.preserved)):
                pushed.setdefault(next(iter(aliases)), []).append(cond)
            else:
                kept.append(cond)
        if not pushed:
            return node
        atoms = []
        for atom in node.atoms:
            extra = pushed.get(atom.alias, [])
            if extra and isinstance(atom, Atom):
                atom = Atom(atom.table, atom.alias, atom.columns, conjunction(conjuncts(atom.predicate) + extra))
            elif extra:  # σ_p(V) with V's rows in the view: the rank bound of a top N then reaches the window
                inner, held = (atom.child.child, conjuncts(atom.child.condition)) if isinstance(atom.child, Filter) \
                    else (atom.child, [])
                atom = attrs.evolve(atom, child=Filter(conjunction(held + extra), inner))
            atoms.append(atom)
        return attrs.evolve(node, atoms=tuple(atoms), conditions=tuple(kept))


class FormEquiJoinClasses(Rule):
    """Turn equalities between columns of different atoms into equi-join variable classes.

    >>> from planner.optimizer.testing import assert_rewrite
    >>> assert_rewrite(FormEquiJoinClasses(), '''
    ... JoinGraph conditions=[o.o_custkey = c.c_custkey, l.l_orderkey = o.o_orderkey]
    ...   Atom table=customer alias=c columns=[c_custkey]
    ...   Atom table=orders alias=o columns=[o_orderkey, o_custkey]
    ...   Atom table=lineitem alias=l columns=[l_orderkey]
    ... ''', '''
    ... JoinGraph join_classes=[[c.c_custkey, o.o_custkey], [l.l_orderkey, o.o_orderkey]]
    ...   Atom table=customer alias=c columns=[c_custkey]
    ...   Atom table=orders alias=o columns=[o_orderkey, o_custkey]
    ...   Atom table=lineitem alias=l columns=[l_orderkey]
    ... ''', None)

    Paper: AJU §2.2 footnote 1.
    """

    def rewrite(self, node: LogicalPlan, ctx: OptimizerContext) -> LogicalPlan:
        if not isinstance(node, JoinGraph):
            return node
        kept, equal = [], [(column, join_class[0]) for join_class in node.join_classes for column in join_class]
        for cond in node.conditions:
            match cond:
                # a = b ∧ b = c puts a, b, c in one class (equality is transitive)
                case Call(op="=", args=(Column() as a, Column() as b)) if a.table != b.table:
                    equal.append((a, b))
                # any other condition (a constant, one relation, an inequality) stays a condition
                case _:
                    kept.append(cond)
        if len(kept) == len(node.conditions):
            return node
        classes = sorted((tuple(sorted(g, key=str)) for g in equality_classes(equal)), key=lambda cls: [str(c) for c in cls])
        return attrs.evolve(node, conditions=tuple(kept), join_classes=tuple(classes))


def _disjuncts(expr: Expr) -> list[Expr]:
    if isinstance(expr, Call) and expr.op == "or":
        return [d for arg in expr.args for d in _disjuncts(arg)]
    return [expr]


def _disjunction(parts: list[Expr]) -> Expr:
    result = parts[0]
    for part in parts[1:]:
        result = Call("or", (result, part))
    return result


def factor_common_conjuncts(condition: Expr) -> list[Expr]:
    """``(X ∧ A) ∨ (X ∧ B)`` → ``[X, A ∨ B]``; a condition that is not such an OR comes back alone."""
    disjuncts = _disjuncts(condition)
    if len(disjuncts) < 2:
        return [condition]
    branches = [conjuncts(d) for d in disjuncts]
    common = [c for c in branches[0] if all(c in other for other in branches[1:])]
    if not common:
        return [condition]
    rests = [[c for c in branch if c not in common] for branch in branches]
    if any(not rest for rest in rests):
        return common  # one branch is exactly the common part: the OR adds nothing
    return common + [_disjunction([conjunction(rest) for rest in rests])]


class FactorCommonConjuncts(Rule):
    """Pull the conjuncts every OR branch shares out of the OR, so joins hidden in it become visible.

    >>> from planner.optimizer.testing import assert_rewrite
    >>> assert_rewrite(FactorCommonConjuncts(), '''
    ... JoinGraph conditions=[p.p_partkey = l.l_partkey and p.p_size < 5 or p.p_partkey = l.l_partkey and l.l_quantity > 10]
    ...   Atom table=lineitem alias=l columns=[l_partkey, l_quantity]
    ...   Atom table=part alias=p columns=[p_partkey, p_size]
    ... ''', '''
    ... JoinGraph conditions=[p.p_partkey = l.l_partkey, p.p_size < 5 or l.l_quantity > 10]
    ...   Atom table=lineitem alias=l columns=[l_partkey, l_quantity]
    ...   Atom table=part alias=p columns=[p_partkey, p_size]
    ... ''', None)

    Law: (X ∧ A) ∨ (X ∧ B) = X ∧ (A ∨ B). TPC-H Q19 writes its join inside each OR branch.
    """

    def rewrite(self, node: LogicalPlan, ctx: OptimizerContext) -> LogicalPlan:
        if not isinstance(node, JoinGraph):
            return node
        conditions = [part for cond in node.conditions for part in factor_common_conjuncts(cond)]
        if conditions == list(node.conditions):
            return node
        return attrs.evolve(node, conditions=tuple(conditions))
