"""Maintain a comparison with a keyed view's value as a join-select (AJU Theorem 15, query (3)).

A correlated scalar subquery becomes a view V keyed by its correlation and joined back on that key
(rules/decorrelate.py); its comparison with the outer row, ``R.c θ V.v``, is left as a residual of
the foreign-key join. Tested after the join, a new v for one key retracts and re-emits every R
tuple of that key to re-test it: O(tuples of the key). As a join-select the R tuples of each key
are kept in order of c, and v is a pointer into them: a moved v passes or fails only the tuples
between its old and its new position, O(log n + rows that flip) (TPC-H Q2's ``ps_supplycost =
(SELECT min(ps_supplycost) ...)``: a new minimum swaps the suppliers at the old minimum for those
at the new one).
"""

from __future__ import annotations

import attrs

from planner.ir.expressions import (
    FLIPPED,
    RANGE_COMPARISONS,
    Call,
    Column,
    Expr,
    conjunction,
    conjuncts,
    deep_columns,
)
from planner.ir.fk_graph import FkEdge, implied
from planner.ir.logical import LogicalPlan
from planner.ir.maintenance import ForeignKeyJoin, JoinSelect, ViewAtom
from planner.ir.notation import print_expr
from planner.ir.reads import columns_read
from planner.optimizer.context import OptimizerContext
from planner.optimizer.executor import Rule


class CannotJoinSelect(Exception):
    """Why a comparison with a view's value stays a residual (shown by EXPLAIN)."""


def oriented(part: Expr, join: ForeignKeyJoin) -> JoinSelect | None:
    """``R.c θ V.v`` (either way round) as ``JoinSelect(R.c, θ, V.v)`` when V is a view atom of the
    join, v is not its key, and R references V."""
    match part:
        # σ_{R.c θ V.v}(R ⋈ V) keeps R's rows of a key ordered by c, so a move of v passes or drops a range of them
        case Call(op=op, args=(Column() as left, Column() as right)) if op in RANGE_COMPARISONS:
            pass
        # any other conjunct is no range of one relation's column: a residual selection
        case _:
            return None
    # a view without a key (a bag of rows) is never referenced: no edge leads into it
    views = {atom.alias: atom for atom in join.atoms if isinstance(atom, ViewAtom) and atom.key is not None}
    for row, theta, value in ((left, op, right), (right, FLIPPED[op], left)):
        view = views.get(value.table)
        if view is not None and value.name not in view.key and any(
            e.referencing == row.table and e.referenced == view.alias for e in join.edges
        ):
            return JoinSelect(row, theta, value)
    return None


def edges_for(join: ForeignKeyJoin, select: JoinSelect, read_elsewhere: set[Column]) -> tuple[FkEdge, ...]:
    """The join's edges with V reached along the join-select's edge alone; raises why it cannot be."""
    view = join.atom(select.value.table)
    if view.anti or view.optional or join.preserved:
        raise CannotJoinSelect(f"{view.alias} is joined as NOT EXISTS, optionally or in an outer join")
    if join.join_select_into(view.alias) is not None:
        raise CannotJoinSelect(f"{view.alias} already has a join-select")
    moving = sorted(str(c) for c in read_elsewhere if c.table == view.alias and c.name not in view.key)
    if moving:
        raise CannotJoinSelect(f"{', '.join(moving)} is read elsewhere, but a join-select passes on only "
                               f"{view.alias}'s key (a column moving with the pointer would change every row)")
    chosen = next(e for e in join.edges if e.referencing == select.row.table and e.referenced == view.alias)
    edges = join.edges
    for other in [e for e in join.edges if e.referenced == view.alias and e != chosen]:
        rest = tuple(e for e in edges if e != other)
        if not implied(other, rest):
            raise CannotJoinSelect(f"{view.alias} is also joined by {other.referencing} on a key the other joins "
                                   "do not imply, so its value would reach the join along two paths")
        edges = rest  # the equalities of ``other`` follow from the rest: dropping it changes no result
    return edges


class MaintainJoinSelect(Rule):
    """Move a residual ``R.c θ V.v`` of a foreign-key join into a join-select on the edge R → V.

    Preconditions: V is a view atom (not anti, not optional) joined on its key by R; v is not a key
    column and nothing else reads V's non-key columns; other edges into V are implied by the rest
    (they are dropped). θ is one of ``< <= > >= =``.

    >>> from planner.optimizer.context import OptimizerContext
    >>> from planner.optimizer.testing import assert_rewrite
    >>> assert_rewrite(MaintainJoinSelect(), '''
    ... ForeignKeyJoin root=ps edges=[ps(ps_partkey)→_v0(k0)] residual=ps.ps_supplycost = _v0._val
    ...   Atom table=partsupp alias=ps columns=[ps_partkey, ps_suppkey, ps_supplycost]
    ...   ViewAtom alias=_v0 key=[k0] columns=[k0, _val] anti=False
    ...     Aggregate group_by=[ps2.ps_partkey AS k0] aggregates=[min(ps2.ps_supplycost) AS _val]
    ...       Scan table=partsupp alias=ps2 columns=[ps_partkey, ps_supplycost]
    ... ''', '''
    ... ForeignKeyJoin root=ps edges=[ps(ps_partkey)→_v0(k0)] join_selects=[JoinSelect(row=ps.ps_supplycost, op='=', value=_v0._val)]
    ...   Atom table=partsupp alias=ps columns=[ps_partkey, ps_suppkey, ps_supplycost]
    ...   ViewAtom alias=_v0 key=[k0] columns=[k0, _val] anti=False
    ...     Aggregate group_by=[ps2.ps_partkey AS k0] aggregates=[min(ps2.ps_supplycost) AS _val]
    ...       Scan table=partsupp alias=ps2 columns=[ps_partkey, ps_supplycost]
    ... ''', OptimizerContext(None))

    Keeps ``apply``: a comparison moves into the join only when nothing else in the whole plan
    reads V's compared column, which no single node shows.

    Paper: AJU §5, Theorem 15 (join-select).
    """

    def apply(self, plan: LogicalPlan, ctx: OptimizerContext) -> LogicalPlan:
        # what the plan reads outside the joins' residuals; a residual is read conjunct by conjunct below
        outside = columns_read(plan, skip=lambda node, field: isinstance(node, ForeignKeyJoin) and field == "residual")

        def convert(node: LogicalPlan) -> LogicalPlan:
            if not isinstance(node, ForeignKeyJoin) or node.residual is None:
                return node
            parts, join, kept = conjuncts(node.residual), node, []
            for i, part in enumerate(parts):
                select = oriented(part, join)
                if select is None:
                    kept.append(part)
                    continue
                others = {c for j, other in enumerate(parts) if j != i for c in deep_columns(other)}
                try:
                    edges = edges_for(join, select, outside | others)
                except CannotJoinSelect as reason:
                    ctx.refuse(self.name, f"{print_expr(part)}: {reason}")
                    kept.append(part)
                    continue
                # σ_{c θ v}(R ⋈_k V) = R ⋈_{k, c θ v} V: the comparison moves into the join on V's key
                join = attrs.evolve(join, edges=edges, join_selects=(*join.join_selects, select))
                ctx.decide(self.name, f"{print_expr(part)} compares {select.row.table} with {select.value.table}, "
                           f"which is keyed by the join: join-select (AJU Theorem 15), a new {select.value} "
                           "passes or fails only the rows between its old and new position")
            return node if join is node else attrs.evolve(join, residual=conjunction(kept))

        return plan.transform_up(convert)
