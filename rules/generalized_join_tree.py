"""Maintain a join with inequalities on a generalized join tree (IEDyn, Idris et al. SIGMOD 2017).

A join block of base tables whose cross-atom conditions are equalities and inequalities (``<``,
``<=``, ``>``, ``>=``, ``BETWEEN``, with constant offsets ``x < y + c``) is a generalized
conjunctive query (§2). When it is acyclic (a GJT exists, Prop. 3.7, after dropping implied
inequalities, Prop. 3.8) it is maintained as a T-representation over the binary GJT (Prop. 3.9):
linear state, O(M log M) per update where each pair of atoms carries at most one inequality
(Thm 5.5), and enumeration of the result and of its changes with constant delay when the query is
free-connex. A query that is acyclic but not free-connex is still taken: enumeration walks a larger
connex set and projects with multiplicities (§6), which costs the constant delay. A cyclic query is
refused with its witness and left to the materializing fallback. The plain equi-join is left to the
foreign-key and fallback strategies: this rule needs at least one cross-atom inequality.
"""

from __future__ import annotations

from planner.ir.expressions import Column, contains_subquery
from planner.ir.gjt_maintenance import GeneralizedJoinTree
from planner.ir.logical import LogicalPlan
from planner.ir.maintenance import Atom, JoinGraph
from planner.ir.reads import columns_read
from planner.optimizer.context import OptimizerContext
from planner.optimizer.executor import Rule


def _read_outside_joins(plan: LogicalPlan) -> set[Column]:
    """The columns the plan reads outside its join graphs' own conditions and atom selections:
    what a join graph must deliver upward, out(Q) of its GCQ."""
    return columns_read(plan, skip=lambda node, field: isinstance(node, JoinGraph)
                        or (isinstance(node, Atom) and field == "predicate"))


class ChooseGeneralizedJoinTree(Rule):
    """Rewrite an inequality join graph of base tables into a ``GeneralizedJoinTree``.

    Preconditions: normalization has run (atoms with their selections, equality classes); runs
    after ``ChooseForeignKeyJoinTree`` (which keeps the joins along foreign keys) and before the
    change-propagation fallback (which takes what this refuses, and everything when
    ``join_strategy="binary"`` forces it).

    >>> from catalog.ddl import catalog_from_ddl
    >>> from planner.optimizer.context import OptimizerContext
    >>> from planner.optimizer.testing import assert_rewrite
    >>> catalog = catalog_from_ddl("create table r (a int, b int); create table s (d int, e int)")
    >>> assert_rewrite(ChooseGeneralizedJoinTree(), '''
    ... Project items=[r.b AS b, s.e AS e]
    ...   JoinGraph conditions=[r.a < s.d]
    ...     Atom table=r alias=r columns=[a, b]
    ...     Atom table=s alias=s columns=[d, e]
    ... ''', '''
    ... Project items=[r.b AS b, s.e AS e]
    ...   GeneralizedJoinTree conditions=[r.a < s.d] output=[r.b, s.e]
    ...     Atom table=r alias=r columns=[a, b]
    ...     Atom table=s alias=s columns=[d, e]
    ... ''', OptimizerContext(catalog))

    Keeps ``apply``: the tree's output is the columns the rest of the plan reads, a fact of the
    whole plan that decides whether it is free-connex.

    Paper: IEDyn §2 (GCQs), §3 (Props. 3.7–3.9, free-connex), §5 (Thm 5.5), §6 (not free-connex).
    """

    def apply(self, plan: LogicalPlan, ctx: OptimizerContext) -> LogicalPlan:
        read = _read_outside_joins(plan)

        def choose(node: LogicalPlan) -> LogicalPlan:
            match node:
                # R1 ⋈ ... ⋈ Rn | θ with an acyclic GCQ = the enumeration of its T-representation (IEDyn §4)
                case JoinGraph(atoms=atoms, conditions=conditions) if (
                    len(atoms) > 1 and conditions and not node.preserved and all(isinstance(a, Atom) for a in atoms)
                    and not any(contains_subquery(c) for c in conditions)
                ):
                    return self._choose(node, read, ctx)
            return node

        return plan.transform_up(choose)

    def _choose(self, graph: JoinGraph, read: set[Column], ctx: OptimizerContext) -> LogicalPlan:
        aliases = {a.alias for a in graph.atoms}
        output = tuple(c for a in graph.atoms for c in a.output if c in read and c.table in aliases)
        node = GeneralizedJoinTree(graph.atoms, graph.conditions, graph.join_classes, output)
        try:
            gjt = node.gjt
        except ValueError as reason:
            ctx.refuse(self.name, f"not a generalized conjunctive query: {reason}")
            return graph
        if not gjt.query.predicates:
            return graph
        if ctx.join_strategy == "binary":
            ctx.refuse(self.name, "join strategy forced to binary (the materializing fallback, to compare)")
            return graph
        if not gjt.acyclic:
            ctx.refuse(self.name, f"the query is cyclic: no generalized join tree exists ({gjt.witness})")
            return graph
        shape = ("free-connex: enumeration walks a connex set covering exactly the output" if gjt.free_connex else
                 "acyclic but not free-connex: enumeration walks a larger connex set and projects with "
                 "multiplicities (IEDyn §6), so the delay is not constant")
        implied = f"; dropped as implied by the others (Prop. 3.8): {' ∧ '.join(map(str, gjt.removed))}" if gjt.removed else ""
        ctx.decide(self.name, f"an acyclic GCQ with inequalities ({gjt.query}){implied}; {shape}")
        return node
