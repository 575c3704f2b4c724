"""A correlated aggregate subquery in the SELECT list, planned as a LEFT JOIN with the grouped view
of its aggregate, the form the planner maintains (a left join with a derived table keyed by its group).

Law: for ``q = (SELECT f(a) FROM S WHERE S.k1 = R.b1 AND ... AND φ(S))`` read on each row of R (φ
without outer columns, ``f`` an expression of aggregates), let ``V = γ_{k1, ...; f(a) AS v}(σ_φ(S))``,
keyed by its group. Each R row matches at most one V row (``V.k1 = R.b1 ∧ ...``), so
``R ⟕ V`` keeps R's rows, once each, and ``q = CASE WHEN V.k1 IS NULL THEN f(∅) ELSE V.v END``:
a matched row's key is not NULL (the equality holds), and an unmatched row's subquery reads no rows,
whose aggregate is ``f`` over the empty input (COUNT 0, the others NULL: a COUNT of no match is 0,
not the NULL of a padded row). Uncorrelated subqueries are left as they are (a one-row global
aggregate joined to every row is not maintained as a view).
"""

from __future__ import annotations

import attrs

from catalog.types import BIGINT, NULL
from planner.ir.correlation import CorrelatedWhere, split_where
from planner.ir.expressions import (
    AggregateCall,
    Column,
    Expr,
    Literal,
    Subquery,
    columns,
    conjunction,
    transform,
    type_of,
)
from planner.ir.logical import Aggregate, Join, LogicalPlan, NamedExpr, Project, Scan, SubqueryAlias
from planner.sql.typing import typed_call

#: the value of each aggregate over no rows (Spark's): COUNT 0, these others NULL
_EMPTY_COUNT = frozenset({"count"})
_EMPTY_NULL = frozenset({"sum", "avg", "min", "max"})


def correlation_group(found: CorrelatedWhere) -> tuple[NamedExpr, ...]:
    """The view's group: the inner column of each correlation equality, named ``_k<i>``."""
    return tuple(NamedExpr(f"_k{i}", inner) for i, (inner, _) in enumerate(found.keys))


def correlation_join(found: CorrelatedWhere, alias: str, group: tuple[NamedExpr, ...], clause: str) -> list[Expr]:
    """``alias.k_i = outer_i`` for the view ``alias`` grouped by ``group`` (the inner key columns first)."""
    return [typed_call("=", (Column(alias, k.name, type_of(k.expr)), outer), clause)
            for k, (_, outer) in zip(group, found.keys, strict=False)]


@attrs.frozen
class _Correlated:
    """A scalar subquery split into its grouped view's parts."""

    correlation: CorrelatedWhere
    aggregates: tuple[NamedExpr, ...]
    value: Expr  # f over the aggregates' output columns


def scalar_subqueries_as_joins(
    plan: LogicalPlan, items: list[NamedExpr], outer: frozenset[str]
) -> tuple[LogicalPlan, list[NamedExpr]]:
    """``plan`` (a query block's FROM and WHERE) left-joined with the grouped view of each correlated scalar subquery in ``items``
    that has the law's shape, and ``items`` reading the view in its place; any other is left as it is."""
    rewritten: list[NamedExpr] = []
    for item in items:
        def replace(expr: Expr) -> Expr:
            nonlocal plan
            if not (isinstance(expr, Subquery) and expr.kind == "scalar"):
                return expr
            correlated = _correlated(expr.plan, outer)
            if correlated is None:
                return expr
            alias = fresh_alias(plan, outer)
            plan, value = _joined(plan, alias, correlated)
            return value
        rewritten.append(NamedExpr(item.name, transform(item.expr, replace)))
    return plan, rewritten


def _correlated(plan: LogicalPlan, outer: frozenset[str]) -> _Correlated | None:
    """The law's parts of ``SELECT f(...) FROM S WHERE ...``, or None for any other shape."""
    match plan:
        case Project(items=(NamedExpr(expr=value),), child=Aggregate(group_by=(), aggregates=aggregates, child=child)):
            pass
        case _:
            return None
    if not all(isinstance(a.expr, AggregateCall) and a.expr.func in _EMPTY_COUNT | _EMPTY_NULL for a in aggregates):
        return None
    found = correlation(child, outer, tuple(a.expr for a in aggregates))
    return None if found is None else _Correlated(found, aggregates, value)


def correlation(child: LogicalPlan, outer: frozenset[str], reads: tuple[Expr, ...]) -> CorrelatedWhere | None:
    """``child`` (``σ(S)`` or ``S``) split into S, φ(S) and at least one equality with an outer
    column; None when anything else (in S, in ``reads``, or another conjunct) reads an outer column."""
    found = split_where(child, outer)
    reads_outer = any(c.table in outer for node in found.source.walk() for e in node.expressions() for c in columns(e))
    reads_outer |= any(c.table in outer for e in reads for c in columns(e))
    return None if not found.keys or found.others or reads_outer else found


def fresh_alias(plan: LogicalPlan, outer: frozenset[str]) -> str:
    taken = outer | {n.alias for n in plan.walk() if isinstance(n, Scan | SubqueryAlias)}
    return next(f"_scalar{i}" for i in range(len(taken) + 1) if f"_scalar{i}" not in taken)


def _joined(plan: LogicalPlan, alias: str, sub: _Correlated) -> tuple[LogicalPlan, Expr]:
    """``plan ⟕ V`` on the correlation, and the subquery's value read from it."""
    group = correlation_group(sub.correlation)
    view_items = (*(NamedExpr(k.name, Column(None, k.name, type_of(k.expr))) for k in group),
                  NamedExpr("_v", sub.value))
    view = SubqueryAlias(alias, Project(view_items, Aggregate(group, sub.aggregates, sub.correlation.filtered())))
    on = conjunction(correlation_join(sub.correlation, alias, group, "a scalar subquery"))
    typed = {Column(None, a.name): Column(None, a.name, type_of(a.expr)) for a in sub.aggregates}
    empty = {Column(None, a.name): _empty_value(a.expr) for a in sub.aggregates}
    over_nothing = transform(sub.value, lambda e: empty.get(e, e) if isinstance(e, Column) else e)
    first_key = Column(alias, group[0].name, type_of(group[0].expr))
    matched = Column(alias, "_v", type_of(transform(sub.value, lambda e: typed.get(e, e) if isinstance(e, Column) else e)))
    value = typed_call("case", (typed_call("is null", (first_key,), "a scalar subquery"), over_nothing, matched),
                       "a scalar subquery")
    return Join("left", on, plan, view), value


def _empty_value(aggregate: AggregateCall) -> Literal:
    return Literal(0, BIGINT) if aggregate.func in _EMPTY_COUNT else Literal(None, NULL)
