"""EXISTS and IN (subquery) used as values (in the SELECT list, or in an aggregate's argument), planned
as LEFT JOINs with grouped views keyed by the correlation, the form scalar_subqueries.py gives a
correlated scalar subquery.

Law (EXISTS): for ``e = EXISTS (SELECT ... FROM S WHERE S.k1 = R.b1 AND ... AND φ(S))`` read on each
row of R (φ without outer columns), let ``V = γ_{k1, ...; COUNT(*)}(σ_φ(S))``, keyed by its group:
the distinct correlation keys of the rows the subquery filters. Each R row matches at most one V row,
so ``R ⟕ V`` keeps R's rows once each (an aggregate above counts them as before), and ``e`` is true
exactly when the row met one: ``V.k1 IS NOT NULL`` (a match's key is not NULL, the equality held);
``NOT EXISTS`` is ``V.k1 IS NULL``.

Law (IN, as Spark evaluates it outside WHERE): Spark 4 plans ``x IN (subquery)`` in a select list as
an existence join (``RewritePredicateSubquery``), so it is two-valued, never NULL: TRUE when some
filtered row of the row's correlation has ``y = x``, else FALSE (a NULL ``x``, a NULL in the set:
FALSE, where SQL's IN would be NULL). ``x NOT IN (subquery)`` is the negated null-aware existence:
FALSE when some row has ``y = x``, or the set is not empty and ``x`` or some ``y`` is NULL; else TRUE
(an empty set: TRUE). That is SQL's three-valued answer with NULL read as FALSE, for both. Two views
give those facts, each matching an R row at most once: ``W = γ_{k..., y}(σ_{φ ∧ y IS NOT NULL} S)``
joined on the correlation and ``W.y = x`` (some ``y = x``), and ``V = γ_{k...; COUNT(*), COUNT(y)}(σ_φ S)``
(the set's rows and non-NULL values per correlation: empty, holding a NULL), joined for NOT IN only.

In a grouped block only the subqueries inside aggregate arguments are planned so (each input row's
value); one elsewhere in a grouped select list is left as it is (refused downstream with the reason).
Uncorrelated subqueries and other shapes (an inequality correlation, an aggregate or LIMIT in the
subquery) are left as they are too.
"""

from __future__ import annotations

import attrs

from catalog.types import BIGINT
from planner.ir.correlation import CorrelatedWhere
from planner.ir.expressions import (
    AggregateCall,
    Column,
    Expr,
    Subquery,
    conjunction,
    transform,
    type_of,
)
from planner.ir.logical import Aggregate, Join, LogicalPlan, NamedExpr, Project, SubqueryAlias
from planner.sql.scalar_subqueries import correlation, correlation_group, correlation_join, fresh_alias
from planner.sql.typing import typed_call

_CLAUSE = "an EXISTS / IN subquery used as a value"
_COUNT = NamedExpr("_n", AggregateCall("count", None, dtype=BIGINT))


def subquery_values_as_joins(plan: LogicalPlan, items: list[NamedExpr], outer: frozenset[str],
                             grouped: bool) -> tuple[LogicalPlan, list[NamedExpr]]:
    """``plan`` left-joined with the views of each EXISTS / IN subquery of ``items`` that has the laws'
    shape (only inside aggregate arguments when ``grouped``), and ``items`` reading them instead."""
    def replace(expr: Expr) -> Expr:
        nonlocal plan
        if not (isinstance(expr, Subquery) and expr.kind in ("exists", "in")):
            return expr
        found = _correlation(expr, outer)
        if found is None:
            return expr
        if expr.kind == "in":
            plan, value = _in(plan, outer, found, expr)
            return value
        plan, value = _exists(plan, outer, found)
        return typed_call("not", (value,), _CLAUSE) if expr.negated else value

    def in_arguments(expr: Expr) -> Expr:
        if not isinstance(expr, AggregateCall) or expr.arg is None:
            return expr
        return attrs.evolve(expr, arg=transform(expr.arg, replace),
                            further_args=tuple(transform(a, replace) for a in expr.further_args))

    rewritten = [NamedExpr(item.name, transform(item.expr, in_arguments if grouped else replace)) for item in items]
    return plan, rewritten


def _correlation(subquery: Subquery, outer: frozenset[str]) -> CorrelatedWhere | None:
    """The law's parts of the subquery (``SELECT ... FROM S WHERE ...``, its select list read only by IN)."""
    match subquery.plan:
        case Project(items=items, child=child) if not isinstance(child, Aggregate):
            reads = (items[0].expr,) if subquery.kind == "in" and len(items) == 1 else ()
            if subquery.kind == "in" and not reads:
                return None
            return correlation(child, outer, reads)
    return None


def _view(plan: LogicalPlan, outer: frozenset[str], group: tuple[NamedExpr, ...], aggregates: tuple[NamedExpr, ...],
          source: LogicalPlan) -> tuple[str, SubqueryAlias]:
    """``γ_{group; aggregates}(source)`` under a fresh alias, its columns named as its group and aggregates."""
    alias = fresh_alias(plan, outer)
    items = tuple(NamedExpr(n.name, Column(None, n.name, type_of(n.expr))) for n in (*group, *aggregates))
    return alias, SubqueryAlias(alias, Project(items, Aggregate(group, aggregates, source)))


def _matched(alias: str, group: tuple[NamedExpr, ...]) -> Expr:
    """Whether an outer row met a row of the view ``alias``: its first key is not NULL."""
    return typed_call("is not null", (Column(alias, group[0].name, type_of(group[0].expr)),), _CLAUSE)


def _exists(plan: LogicalPlan, outer: frozenset[str], found: CorrelatedWhere) -> tuple[LogicalPlan, Expr]:
    group = correlation_group(found)
    alias, view = _view(plan, outer, group, (_COUNT,), found.filtered())
    return Join("left", conjunction(correlation_join(found, alias, group, _CLAUSE)), plan, view), _matched(alias, group)


def _in(plan: LogicalPlan, outer: frozenset[str], found: CorrelatedWhere, subquery: Subquery) -> tuple[LogicalPlan, Expr]:
    """IN: whether ``W`` met the row; NOT IN: neither that nor a non-empty set with a NULL on either side."""
    operand, value = subquery.operand, subquery.plan.items[0].expr
    group = correlation_group(found)
    pairs = (*group, NamedExpr("_y", value))
    non_null = attrs.evolve(found, local=(*found.local, typed_call("is not null", (value,), _CLAUSE)))
    equal, view = _view(plan, outer, pairs, (_COUNT,), non_null.filtered())
    on = [*correlation_join(found, equal, pairs, _CLAUSE), typed_call("=", (Column(equal, "_y", type_of(value)), operand), _CLAUSE)]
    plan = Join("left", conjunction(on), plan, view)
    if not subquery.negated:
        return plan, _matched(equal, pairs)
    counts = (_COUNT, NamedExpr("_nn", AggregateCall("count", value, dtype=BIGINT)))
    rows, view = _view(plan, outer, group, counts, found.filtered())
    plan = Join("left", conjunction(correlation_join(found, rows, group, _CLAUSE)), plan, view)
    n, nn = (Column(rows, c.name, BIGINT) for c in counts)
    null_side = typed_call("or", (typed_call("is null", (operand,), _CLAUSE), typed_call(">", (n, nn), _CLAUSE)), _CLAUSE)
    unknown = typed_call("and", (_matched(rows, group), null_side), _CLAUSE)
    return plan, typed_call("not", (typed_call("or", (_matched(equal, pairs), unknown), _CLAUSE),), _CLAUSE)
