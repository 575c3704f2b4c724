"""Cheaper plans over insert-only input (Olteanu, PODS 2024, §4.6: insert-only versus insert-delete).

A table declared ``ivm.insert_only`` (or ``ivm.static``: rows only in its first batch) never loses a
row: validation rejects its deletes (operators/runtime/dependencies.py), so a plan may rely on it. Some
operators pass that on: a selection, a projection, an inner join (also with inequalities, also
with a view joined on its key whose own rows only arrive), DISTINCT, UNION and INTERSECT are
monotone, so over inputs that only grow their result only grows, and each batch's net change to it
is a bag of inserts. Others do not: an aggregate retracts a group's old row when the value changes
(so a decorrelated EXISTS, a view of counts per key, is refused too, conservatively), a top-k drops its last row when a better one
arrives, a LEFT OUTER JOIN retracts a padded row when its first partner arrives, NOT EXISTS and
EXCEPT drop rows when the other side gains one, a threshold or join-select flips rows out when the
compared value moves. ``input_growth`` works this out for a subplan.

Over an input that only grows, MIN/MAX only ever improve and the k best rows only ever get better:
the general operators keep everything because a delete needs the next value; these need nothing but
the current extreme per group, or the k best rows. The rules below mark such an aggregate or top-k
with the insert-only tables it relies on; the lowering gives it its own stage.
"""

from __future__ import annotations

import attrs

from catalog.schema import Catalog
from planner.ir.cross_product import CrossProductAggregate
from planner.ir.gjt_maintenance import GeneralizedJoinTree
from planner.ir.heavy_light_plan import HeavyLightTriangleCount
from planner.ir.logical import Filter, LogicalPlan, Project, Scan, SetOperation, Sort, SubqueryAlias
from planner.ir.maintenance import (
    Atom,
    BinaryJoin,
    ChangePropagationJoin,
    CountedDistinct,
    ForeignKeyJoin,
    GroupAggregate,
    NestedAggregate,
    RingAggregate,
    ThresholdFilter,
    TopK,
    ViewAtom,
)
from planner.ir.outer_join import OuterJoin
from planner.ir.view_tree_plan import ViewTreeAggregate
from planner.optimizer.context import OptimizerContext
from planner.optimizer.executor import Rule

EXTREMA = ("min", "max", "max_by", "min_by")
PERCENTILES = ("median", "percentile", "percentile_cont", "percentile_disc")  # they read every copy of the values
#: set operations whose result only grows while both sides do
MONOTONE_SET_OPERATIONS = ("union", "union_all", "intersect")


@attrs.frozen
class Growth:
    """How a subplan's rows change as its tables change: ``tables``, the insert-only (or static) tables
    it reads; ``retracts``, why a row can leave its result (None: rows only ever arrive)."""

    tables: frozenset[str]
    retracts: str | None

    @property
    def inserts_only(self) -> bool:
        return self.retracts is None


def input_growth(plan: LogicalPlan, catalog: Catalog) -> Growth:
    """Whether ``plan``'s result changes only by inserts, given the catalog's insert-only tables."""
    match plan:
        # a table declared insert-only or static loses no row: validation rejects its deletes
        case Atom(table=table) | Scan(table=table):
            declared = catalog.table(table)
            if declared.insert_only or declared.static:
                return Growth(frozenset({table}), None)
            return Growth(frozenset(), f"table {table} is not declared insert-only (ivm.insert_only)")
        # R ⋈ ¬S: a row leaves when its first partner arrives in S
        case ViewAtom(anti=True):
            return _grown(plan, "a NOT EXISTS / NOT IN drops a row when a matching subquery row arrives", catalog)
        # R ⟕ S along a key: the NULL-padded row is retracted when its partner arrives
        case ViewAtom(optional=True):
            return _grown(plan, "an outer lookup retracts a NULL-padded row when the view's row arrives", catalog)
        # L ⟕ R along a key: the NULL-padded row is retracted when its first partner arrives
        case ForeignKeyJoin(preserved=preserved) if preserved:
            return _grown(plan, "a LEFT OUTER JOIN retracts a NULL-padded row when its first partner arrives", catalog)
        # L ⟕/⟖/⟗ R: a NULL-padded row is retracted when its first partner arrives
        case OuterJoin(kind=kind) if kind != "inner":
            return _grown(plan, f"a {kind.upper()} OUTER JOIN retracts a NULL-padded row when its first partner arrives",
                          catalog)
        # σ_{x θ v}(R ⋈ V): the rows passing move when the view's value v moves
        case ForeignKeyJoin(join_selects=selects) if selects:
            return _grown(plan, "a join-select (AJU Theorem 15) drops rows when the compared view value moves", catalog)
        # σ_{x θ v}(R): the rows passing move when the maintained value v moves
        case ThresholdFilter():
            return _grown(plan, "a threshold against a maintained value drops rows when that value moves", catalog)
        # R − S: a row leaves when S gains it (not monotone in S)
        case SetOperation(kind=kind) if kind not in MONOTONE_SET_OPERATIONS:
            return _grown(plan, f"{kind.upper()} drops a row when its right side gains it", catalog)
        # γ(R): a group's row is replaced (retracted, re-inserted) whenever its value changes
        case (RingAggregate() | GroupAggregate() | NestedAggregate() | CrossProductAggregate() | ViewTreeAggregate()
              | HeavyLightTriangleCount()):
            return _grown(plan, f"an aggregate's output ({plan.node_name}) retracts a group's old row when its "
                                "value changes", catalog)
        # top_k(R): the k-th row leaves when a better one arrives
        case TopK():
            return _grown(plan, "a top-k drops its last row when a better one arrives", catalog)
        # σ, π, δ, ⋈ (equalities and inequalities), ⋉, ∪, ∩ are monotone: R ⊆ R' ⇒ Q(R) ⊆ Q(R')
        case (Filter() | Project() | Sort() | SubqueryAlias() | CountedDistinct() | SetOperation() | ViewAtom()
              | ForeignKeyJoin() | ChangePropagationJoin() | BinaryJoin() | GeneralizedJoinTree() | OuterJoin()):
            return _grown(plan, None, catalog)
    return _grown(plan, f"{plan.node_name} is not known to change only by inserts", catalog)


def _grown(plan: LogicalPlan, reason: str | None, catalog: Catalog) -> Growth:
    """``plan``'s growth from its children's and its own ``reason`` to retract (which comes first)."""
    parts = [input_growth(child, catalog) for child in plan.children]
    tables = frozenset().union(*(part.tables for part in parts))
    return Growth(tables, reason or next((part.retracts for part in parts if part.retracts), None))


def _refuse(rule: Rule, ctx: OptimizerContext, what: str, growth: Growth, why: str) -> None:
    ctx.refuse(rule.name, f"{what} reads insert-only {', '.join(sorted(growth.tables))}, but {why}")


class KeepExtremaOfInsertOnlyInput(Rule):
    """Mark a ``GroupAggregate`` whose input only grows: each group then keeps its current MIN/MAX only.

    Preconditions: every table below is declared ``ivm.insert_only`` (or ``ivm.static``) in the
    catalog and nothing between them and the aggregate retracts a row (``input_growth``); every
    aggregate that is not a ring is a MIN or MAX (a DISTINCT aggregate still needs its values).

    >>> from catalog.ddl import catalog_from_ddl
    >>> from planner.optimizer.testing import assert_rewrite
    >>> ctx = OptimizerContext(catalog_from_ddl(
    ...     "CREATE TABLE trades (k INT, price INT) TBLPROPERTIES ('ivm.insert_only' = 'true');"))
    >>> assert_rewrite(KeepExtremaOfInsertOnlyInput(), '''
    ... GroupAggregate group_by=[t.k AS k] aggregates=[min(t.price) AS _a0, count(*) AS _a1]
    ...   ForeignKeyJoin root=t edges=[]
    ...     Atom table=trades alias=t columns=[k, price]
    ... ''', '''
    ... GroupAggregate group_by=[t.k AS k] aggregates=[min(t.price) AS _a0, count(*) AS _a1] insert_only=[trades]
    ...   ForeignKeyJoin root=t edges=[]
    ...     Atom table=trades alias=t columns=[k, price]
    ... ''', ctx)

    Paper: Olteanu, PODS 2024, §4.6 (insert-only batches are cheaper to maintain).
    """

    def rewrite(self, node: LogicalPlan, ctx: OptimizerContext) -> LogicalPlan:
        match node:
            # Q only grows ⇒ min(Q ⊎ ΔQ) = min(min Q, min ΔQ): the old extreme and the batch decide
            case GroupAggregate(aggregates=aggregates, child=child, insert_only=()):
                growth = input_growth(child, ctx.catalog)
                if not growth.tables:
                    return node  # nothing below is declared insert-only: nothing to gain, nothing to say
                if not growth.inserts_only:
                    _refuse(self, ctx, "the aggregate", growth, growth.retracts)
                    return node
                kept = sorted({f"{a.expr.func.upper()}({'DISTINCT ' if a.expr.distinct else ''}...)"
                               for a in aggregates if (a.expr.distinct or a.expr.func in PERCENTILES)
                               and a.expr.func not in EXTREMA})
                if kept:
                    _refuse(self, ctx, "the aggregate", growth,
                            f"{', '.join(kept)} must still count each value's copies")
                    return node
                return attrs.evolve(node, insert_only=tuple(sorted(growth.tables)))
        return node


class KeepTopRowsOfInsertOnlyInput(Rule):
    """Mark a ``TopK`` whose input only grows: it then keeps only the k best rows.

    Preconditions: as for ``KeepExtremaOfInsertOnlyInput``, every table below insert-only (or static)
    and nothing between retracting a row.

    >>> from catalog.ddl import catalog_from_ddl
    >>> from planner.optimizer.testing import assert_rewrite
    >>> ctx = OptimizerContext(catalog_from_ddl(
    ...     "CREATE TABLE trades (k INT, price INT) TBLPROPERTIES ('ivm.insert_only' = 'true');"))
    >>> assert_rewrite(KeepTopRowsOfInsertOnlyInput(), '''
    ... TopK keys=[price DESC] count=3
    ...   Project items=[t.price AS price]
    ...     ForeignKeyJoin root=t edges=[]
    ...       Atom table=trades alias=t columns=[k, price]
    ... ''', '''
    ... TopK keys=[price DESC] count=3 insert_only=[trades]
    ...   Project items=[t.price AS price]
    ...     ForeignKeyJoin root=t edges=[]
    ...       Atom table=trades alias=t columns=[k, price]
    ... ''', ctx)

    Paper: Olteanu, PODS 2024, §4.6.
    """

    def rewrite(self, node: LogicalPlan, ctx: OptimizerContext) -> LogicalPlan:
        match node:
            # Q only grows ⇒ top_k(Q ⊎ ΔQ) = top_k(top_k(Q) ⊎ ΔQ): a row out of the k best never returns
            case TopK(child=child, insert_only=()):
                growth = input_growth(child, ctx.catalog)
                if not growth.tables:
                    return node
                if not growth.inserts_only:
                    _refuse(self, ctx, "the top-k", growth, growth.retracts)
                    return node
                return attrs.evolve(node, insert_only=tuple(sorted(growth.tables)))
        return node
