"""Outer joins beyond the foreign-key lookup: any LEFT, RIGHT or FULL OUTER JOIN whose sides are
maintained becomes an ``OuterJoin``, maintained by change propagation with per-key match counts
(planner/ir/outer_join.py, operators/stages/outer_join.py for the law).

The live-tuple strategy runs first and keeps what it can: a LEFT JOIN of two relations along one
foreign key (O(1) per change). This rule takes the rest, after the join strategies:

- a join whose side is itself a join, an outer join or a derived table (``c ⟕ o ⟕ p``, a LEFT JOIN
  of two grouped derived tables), and an inner join with an outer join for a side;
- a LEFT JOIN of two relations the live-tuple strategy refused (not along a key, a condition beyond
  the key in ON);
- a WHERE above an outer join (it may test the padded rows): a selection is linear, so it becomes
  the join's ``residual``, applied to the join's result changes (σ_p(ΔV) = Δσ_p(V)). Over the
  foreign-key LEFT JOIN it becomes that join's residual in the same way.
"""

from __future__ import annotations

import attrs

from planner.ir.expressions import Call, Column, Expr, conjunction, conjuncts, contains_subquery
from planner.ir.logical import Filter, Join, LogicalPlan
from planner.ir.maintenance import Atom, ForeignKeyJoin, JoinGraph, ViewAtom
from planner.ir.outer_join import OuterJoin
from planner.optimizer.context import OptimizerContext
from planner.optimizer.executor import Rule
from rules.change_propagation import equalities_within_atoms

#: The join kinds this rule maintains (a cross join is an inner join on a constant key).
_KINDS = {"left": "left", "right": "right", "full": "full", "inner": "inner", "cross": "inner"}


def split_on(condition: Expr | None, left: LogicalPlan, right: LogicalPlan) -> tuple[tuple[tuple[Column, Column], ...], Expr | None]:
    """ON as the pairs of columns it equates, one of each side (the stage's key), and the rest."""
    sides = ({c.table for c in left.output}, {c.table for c in right.output})
    pairs: list[tuple[Column, Column]] = []
    rest: list[Expr] = []
    for part in conjuncts(condition):
        match part:
            # L.a = R.b equates a column of each side: a key pair (L.a, R.b)
            case Call("=", (Column() as a, Column() as b)) if a.table in sides[0] and b.table in sides[1]:
                pairs.append((a, b))
            # (R.b = L.a) ≡ (L.a = R.b): the same pair, equality is symmetric
            case Call("=", (Column() as a, Column() as b)) if b.table in sides[0] and a.table in sides[1]:
                pairs.append((b, a))
            # any other conjunct of ON is a residual applied to the matched pairs
            case _:
                rest.append(part)
    return tuple(pairs), conjunction(rest)


def _from_graph(graph: JoinGraph) -> OuterJoin:
    """The two-relation LEFT JOIN the live-tuple strategy refused, its classes back as key pairs."""
    left, right = graph.atoms
    pairs = []
    for cls in graph.join_classes:
        mine = [c for c in cls if c.table == left.alias]
        theirs = [c for c in cls if c.table == right.alias]
        if mine and theirs:
            pairs.append((mine[0], theirs[0]))
    # a class holding two columns of one relation also equates those (ON o.a = c.k AND o.b = c.k)
    condition = conjunction([*graph.conditions, *equalities_within_atoms(graph)])
    return OuterJoin("left", tuple(pairs), condition, left, right)


class MaintainOuterJoin(Rule):
    """Maintain an outer join of maintained sides by change propagation with per-key match counts,
    and fold the WHERE above an outer join into it.

    Preconditions: the strategy rules have run (every side that can be maintained is); the live-tuple
    strategy has kept the LEFT JOINs along one foreign key.

    >>> from catalog.tpch import tpch_catalog
    >>> from planner.optimizer.context import OptimizerContext
    >>> from planner.optimizer.testing import assert_rewrite
    >>> assert_rewrite(MaintainOuterJoin(), '''
    ... Filter condition=l.l_quantity > 5 or l.l_quantity is null
    ...   Join[left] condition=l.l_orderkey = o.o_orderkey
    ...     ForeignKeyJoin root=o edges=[]
    ...       Atom table=orders alias=o columns=[o_orderkey]
    ...     ForeignKeyJoin root=l edges=[]
    ...       Atom table=lineitem alias=l columns=[l_orderkey, l_linenumber, l_quantity]
    ... ''', '''
    ... OuterJoin[left] on=[[o.o_orderkey, l.l_orderkey]] residual=l.l_quantity > 5 or l.l_quantity is null
    ...   ForeignKeyJoin root=o edges=[]
    ...     Atom table=orders alias=o columns=[o_orderkey]
    ...   ForeignKeyJoin root=l edges=[]
    ...     Atom table=lineitem alias=l columns=[l_orderkey, l_linenumber, l_quantity]
    ... ''', OptimizerContext(tpch_catalog()))

    Paper: Griffin & Kumar (1998), Larson & Zhou (2007): an outer join is its inner join plus the
    padded anti-joins, each maintained incrementally.
    """

    def rewrite(self, node: LogicalPlan, ctx: OptimizerContext) -> LogicalPlan:
        match node:
            # the sides' joins have their strategies by now (transform_up: an inner outer join first); an
            # aggregate or DISTINCT in a side gets its own in a later batch, and what no rule maintains
            # is named by why_unsupported as the deepest operator left
            case Join(kind=kind, condition=cond, left=left, right=right) if kind in _KINDS:
                on, condition = split_on(cond, left, right)
                ctx.decide(self.name, "an outer join whose sides are maintained on their own: change propagation "
                                      "with per-key match counts (the padded rows turn when a count crosses 0)")
                return OuterJoin(_KINDS[kind], on, condition, left, right)
            # L ⟕ R = (L ⋈ R) ∪ (pad(L) where a key's match count is 0): counts per key maintain both parts
            case JoinGraph(atoms=(Atom() | ViewAtom(anti=False), Atom() | ViewAtom(anti=False)), preserved=(_,)):
                ctx.decide(self.name, "a LEFT JOIN the live-tuple strategy refused: change propagation with "
                                      "per-key match counts")
                return _from_graph(node)
            # σ_p over an outer join: linear, so it filters the join's result changes (padded rows too)
            case Filter(condition=cond, child=OuterJoin() as join) if not contains_subquery(cond):
                return attrs.evolve(join, residual=conjunction([*conjuncts(join.residual), *conjuncts(cond)]))
            # σ_p over a live-tuple LEFT JOIN: linear too, kept as the join's residual
            case Filter(condition=cond, child=ForeignKeyJoin(preserved=(_, *_)) as join) if not contains_subquery(cond):
                return attrs.evolve(join, residual=conjunction([*conjuncts(join.residual), *conjuncts(cond)]))
        return node
