"""Decorrelate ``x NOT IN (SELECT e FROM S ...)`` where ``x`` or ``e`` may be NULL: Spark's null-aware anti join.

Spark (and the SQL standard) read ``x NOT IN Q`` as ``x <> q₁ AND x <> q₂ AND ...`` in three-valued
logic, and WHERE keeps a row only when that is TRUE:

- ``Q`` empty: TRUE for every ``x``, NULL included;
- ``Q`` holds a NULL: never TRUE (``x <> NULL`` is NULL);
- otherwise: TRUE exactly when ``x`` is not NULL and no value of ``Q`` equals it.

So the predicate is a function of three facts, each maintained by counts: the per-value count of
``Q``'s non-NULL values (the anti view of NOT EXISTS, keyed by the value and the correlation), and,
per correlation key (one global row when uncorrelated), the count of ``Q``'s rows and of its
non-NULL values, kept as the one boolean that matters, "Q holds a NULL", in a view joined
*optionally* (no row: ``Q`` is empty). A change of ``Q`` costs O(1) in the counts; the outer rows
change only when a fact they read changes: a value's count leaving or reaching 0 flips the rows of
that value, and a NULL entering or leaving ``Q`` (or ``Q`` emptying or filling) flips every outer row
of that correlation key, O(rows of the result), which is inherent (every such row's answer changes).
"""

from __future__ import annotations

import attrs

from catalog.types import BIGINT, BOOLEAN
from planner.ir.expressions import AggregateCall, Call, Column, Expr, Literal, Subquery, conjunction, type_of
from planner.ir.logical import Aggregate, Filter, LogicalPlan, NamedExpr, Project
from planner.ir.maintenance import ViewAtom
from planner.optimizer.context import FreshAliases
from rules.decorrelate import (
    CannotDecorrelate,
    DecorrelationRule,
    Nullability,
    Replacement,
    _grouped_block,
    equality_correlation,
    view_for,
)

NOTE = ("null-aware NOT IN (Spark's semantics: no row when the subquery holds a NULL, every row when it is "
        "empty): per-value counts of its non-NULL values (an anti view) and, per correlation key, its row and "
        "NULL counts (an optional view); O(1) per change of the subquery or the outer rows, O(rows of that "
        "correlation key) when a NULL enters or leaves the subquery or it empties or fills: every such row flips")


def null_facts(subquery: Subquery, outer: set[str], alias: str, nullable) -> tuple[LogicalPlan, list[tuple[Expr, Expr]]]:
    """The plan of the subquery's facts per correlation key, ``π_{k, _rows > _values AS _null}(σ_{_rows > 0}(
    γ_{k; count(*) AS _rows, count(e) AS _values}(S)))``: a row while the subquery has rows for the key,
    telling whether one is NULL; and the (inner, outer) equalities of its key ``k0, k1, ...``."""
    plan = subquery.plan
    (item,) = plan.items
    grouped = _grouped_block(plan, alias)
    if grouped is not None:
        body, pairs, value = grouped, [], Column(f"{alias}_g", item.name, type_of(item.expr))
    else:
        split = equality_correlation(plan.child, outer)
        body, pairs, value = split.filtered(), split.keys, item.expr
    names = tuple(f"k{i}" for i in range(len(pairs)))
    present = [Call("is not null", (inner,)) for inner, _ in pairs if nullable(inner, plan)]
    if present:  # a NULL correlation value is no outer row's key (SQL's = never holds on NULL)
        body = Filter(conjunction(present), body)
    counts = Aggregate(tuple(NamedExpr(n, inner) for n, (inner, _) in zip(names, pairs, strict=True)),
                       (NamedExpr("_rows", AggregateCall("count", None, dtype=BIGINT)),
                        NamedExpr("_values", AggregateCall("count", value, dtype=BIGINT))), body)
    rows, values = Column(None, "_rows", BIGINT), Column(None, "_values", BIGINT)
    # the row exists while the subquery has rows (a global count of 0 is no row), and it shows only
    # whether one is NULL: a change that keeps that fact changes nothing above it
    nonempty = Filter(Call(">", (rows, Literal(0, "bigint")), BOOLEAN), counts)
    has_null = Call(">", (rows, values), BOOLEAN)
    facts = Project(tuple(NamedExpr(n, Column(None, n, type_of(inner))) for n, (inner, _) in zip(names, pairs, strict=True))
                    + (NamedExpr("_null", has_null),), nonempty)
    return facts, pairs


def null_aware_test(null: Column, operand: Expr, operand_nullable: bool) -> Expr:
    """Whether the outer row passes, given the facts' ``_null`` (NULL: no facts row, the subquery is
    empty) and that its value is in none of the subquery's non-NULL values (tested apart)."""
    qualifies = Call("not", (null,), BOOLEAN)
    if operand_nullable:
        qualifies = Call("and", (qualifies, Call("is not null", (operand,), BOOLEAN)), BOOLEAN)
    return Call("or", (Call("is null", (null,), BOOLEAN), qualifies), BOOLEAN)


def null_aware_not_in(subquery: Subquery, outer: set[str], aliases: tuple[str, str], nullable) -> tuple[list[ViewAtom], list[Expr]]:
    """The two views replacing ``x NOT IN (subquery)`` and the conditions joining them back."""
    if not (isinstance(subquery.plan, Project) and len(subquery.plan.items) == 1):
        raise CannotDecorrelate("the IN subquery must select one expression")
    # the anti view of the non-NULL values (view_for leaves a NULL value out: it never equals x)
    anti, joins = view_for(attrs.evolve(subquery, negated=False), outer, aliases[0], nullable)
    anti = attrs.evolve(anti, anti=True, note=NOTE)
    facts_plan, pairs = null_facts(subquery, outer, aliases[1], nullable)
    names = tuple(f"k{i}" for i in range(len(pairs)))
    facts = ViewAtom(aliases[1], names, names + ("_null",), False, facts_plan, optional=True, note=NOTE)
    joins += [Call("=", (outer_expr, Column(aliases[1], n))) for n, (_, outer_expr) in zip(names, pairs, strict=True)]
    test = null_aware_test(Column(aliases[1], "_null", BOOLEAN), subquery.operand, nullable(subquery.operand, None))
    return [anti, facts], [*joins, test]


def _needs_null_awareness(subquery: Subquery, nullable) -> bool:
    plan = subquery.plan
    if not (subquery.kind == "in" and subquery.negated and isinstance(plan, Project) and len(plan.items) == 1):
        return False
    return nullable(subquery.operand, None) or nullable(plan.items[0].expr, plan)


class DecorrelateNullAwareNotIn(DecorrelationRule):
    """Replace ``x NOT IN (subquery)`` whose ``x`` or value may be NULL by an anti view of the values
    and an optional view telling whether the subquery holds a NULL (no row: it is empty).

    Law: ``x NOT IN Q`` ≡ ``Q = ∅ ∨ (NULL ∉ Q ∧ x IS NOT NULL ∧ ¬∃q ∈ Q: q = x)``, per correlation key.
    Preconditions: the join graph's conditions are conjuncts (normalization); runs before
    ``DecorrelateExistsAndIn``, which maintains NOT IN over non-NULL columns as NOT EXISTS.

    Paper: AJU §5 (subqueries as maintained aggregate views joined along a key).
    """

    def views_for(self, condition: Expr, outer: set[str], nullable: Nullability, aliases: FreshAliases) -> Replacement:
        match condition:
            # x NOT IN Q = F._null IS NULL ∨ (¬F._null ∧ x IS NOT NULL) over R ▷_{x = A.k} A ⟕ F (A: Q's values, F: its NULL facts)
            case Subquery() if _needs_null_awareness(condition, nullable):
                return null_aware_not_in(condition, outer, (aliases.name(0), aliases.name(1)), nullable)
        return None
