"""EXISTS / IN (and NOT) correlated by one inequality beside equalities, as the MIN or MAX per equality key.

``EXISTS (SELECT ... FROM S WHERE S.a = R.x AND S.b > R.y AND φ(S))`` ("an order followed by a later
order of the same customer") holds exactly when the greatest ``b`` of the S rows of key ``x`` passing φ
exceeds ``y``: ∃s: s.b > y ⟺ max(s.b) > y. Over no such row, or NULL ``b``s only, the max is NULL and
the comparison is not TRUE, as EXISTS is not; a NULL ``y`` makes both not TRUE. With ``<``/``<=`` the
least ``b`` decides. ``IN`` is EXISTS with one more equality (the value and the operand).

So the subquery becomes a view ``V = γ_{a; max(b)}(σ_φ(S))`` keyed by the equalities and the
comparison ``y < V._val`` on the join along that key, which ``MaintainJoinSelect`` (AJU Theorem 15)
maintains with the outer rows ordered by ``y`` per key when ``y`` is a column: a change of ``S`` costs
O(log n) in the key's sorted multiset of ``b``, and when it moves the key's max, the outer rows between
the old and the new max flip, O(log n + rows that flip), which may be every outer row of the key. With
no equality the max is one global value: an uncorrelated scalar comparison, a threshold.

``NOT EXISTS`` (and ``NOT IN`` over non-NULL columns) keeps the rows the comparison does not pass,
``NOT coalesce(y < V._val, FALSE)``, a row with no ``V`` row included: the view is joined optionally,
and a change of a key's max re-evaluates that key's outer rows, O(outer rows of the key).

Two inequalities (``S.b > R.y AND S.c < R.z``, a dominance query) have no such one-value summary
and are refused with the reason.
"""

from __future__ import annotations

import attrs

from catalog.types import BOOLEAN
from planner.ir.correlation import own_relations, split_where
from planner.ir.expressions import (
    FLIPPED,
    AggregateCall,
    Call,
    Column,
    Expr,
    Literal,
    Subquery,
    columns,
    conjunction,
    conjuncts,
    type_of,
)
from planner.ir.logical import Aggregate, Filter, LogicalPlan, NamedExpr, Project
from planner.ir.notation import print_expr
from planner.optimizer.context import FreshAliases
from rules.decorrelate import (
    CannotDecorrelate,
    DecorrelationRule,
    Nullability,
    Replacement,
    scalar_view,
)

INEQUALITIES = ("<", "<=", ">", ">=")

EXISTS_NOTE = ("EXISTS/IN correlated by an inequality: the {agg} of {inner} per equality key (one value when there is none; a sorted multiset per "
               "key, O(log n) per change of the subquery), compared with {outer}; a change of a key's {agg} flips the "
               "outer rows between the old and the new value (a join-select: O(log n + rows that flip)) or, when the "
               "outer side is not a column, re-evaluates the key's outer rows: one inner change can flip many outer rows")
NOT_EXISTS_NOTE = ("NOT EXISTS/NOT IN correlated by an inequality: the {agg} of {inner} per equality key (a sorted "
                   "multiset per key, O(log n) per change of the subquery), joined optionally (no row: no inner row) "
                   "and compared with {outer}; a change of a key's {agg} re-evaluates that key's outer rows, "
                   "O(outer rows of the key): one inner change can flip many outer rows")


@attrs.frozen
class _Split:
    """A subquery's condition as: the one inequality ``inner op outer``, and the rest (equalities, local)."""

    inner: Expr
    op: str
    outer: Expr
    body: LogicalPlan
    equalities: tuple[tuple[Column, Column], ...]


def _side(expr: Expr, inner: set[str], outer: set[str]) -> str | None:
    tables = {c.table for c in columns(expr)}
    if tables and tables <= inner:
        return "inner"
    if tables and tables <= outer:
        return "outer"
    return None


def split_inequality(subquery: Subquery, outer: set[str]) -> _Split | None:
    """The one ``<``/``<=``/``>``/``>=`` between the subquery's and the outer query's columns, with
    the subquery's body keeping the rest (IN: plus ``value = operand``); None with no such
    inequality; raises with two or more, with any other correlation than equalities, or with an IN
    that does not select one expression."""
    plan = subquery.plan
    if subquery.kind == "in":
        if not (isinstance(plan, Project) and len(plan.items) == 1):
            raise CannotDecorrelate("the IN subquery must select one expression")
        body, extra = plan.child, [Call("=", (plan.items[0].expr, subquery.operand), BOOLEAN)]
    else:
        body, extra = (plan.child if isinstance(plan, Project) else plan), []
    if not isinstance(body, Filter):
        return None
    split = split_where(Filter(conjunction([*conjuncts(body.condition), *extra]), body.child), outer)
    inner, found, rest = own_relations(body), [], []
    for part in split.others:
        match part:
            # inner θ outer = outer θ' inner (θ' the flipped comparison): kept as inner θ outer
            case Call(op=op, args=(a, b)) if op in INEQUALITIES:
                sides = (_side(a, inner, outer), _side(b, inner, outer))
                if sides == ("inner", "outer"):
                    found.append((a, op, b))
                    continue
                if sides == ("outer", "inner"):
                    found.append((b, FLIPPED[op], a))
                    continue
        rest.append(part)
    if not found:
        return None
    if len(found) > 1:
        raise CannotDecorrelate("the subquery's correlation holds two or more inequalities (a dominance query): no one "
                                "value per key decides it; one inequality beside equalities is maintained")
    if rest:
        raise CannotDecorrelate(f"the subquery's correlation {print_expr(rest[0])} is not an equality between columns")
    (inner_expr, op, outer_expr), parts = found[0], [*split.local, *(Call("=", pair, BOOLEAN) for pair in split.keys)]
    return _Split(inner_expr, op, outer_expr, Filter(conjunction(parts), split.source) if parts else split.source,
                  split.keys)


def _extreme_subquery(split: _Split) -> tuple[str, Subquery]:
    """(max or min, ``(SELECT agg(inner) FROM body)``): the one value deciding the inequality per key."""
    agg = "max" if split.op in (">", ">=") else "min"
    dtype = type_of(split.inner)
    aggregate = Aggregate((), (NamedExpr("_a0", AggregateCall(agg, split.inner, dtype=dtype)),), split.body)
    return agg, Subquery("scalar", Project((NamedExpr("_c0", Column(None, "_a0", dtype)),), aggregate), dtype=dtype)


def inequality_views(subquery: Subquery, outer: set[str], alias: str, nullable: Nullability) -> Replacement:
    """The views and conditions replacing ``subquery``; None when its correlation holds no inequality."""
    split = split_inequality(subquery, outer)
    if split is None:
        return None
    if subquery.negated and subquery.kind == "in" and (
            nullable(subquery.operand, None) or nullable(subquery.plan.items[0].expr, subquery.plan)):
        raise CannotDecorrelate("NOT IN over a column that may be NULL, correlated by an inequality, is not maintained")
    equalities = split.equalities
    agg, extreme = _extreme_subquery(split)
    # the outer side compared with the extreme: y < max(b) for S.b > R.y (the op seen from the outer side)
    op = FLIPPED[split.op]
    if not subquery.negated and not equalities:
        return [], [Call(op, (split.outer, extreme), BOOLEAN)]  # one global value: a threshold
    view, joins = scalar_view(extreme, outer, alias, nullable)
    value = Column(alias, "_val", type_of(split.inner))
    note = (NOT_EXISTS_NOTE if subquery.negated else EXISTS_NOTE).format(
        agg=agg, inner=print_expr(split.inner), outer=print_expr(split.outer))
    compared = Call(op, (split.outer, value), BOOLEAN)
    if subquery.negated:
        view = attrs.evolve(view, optional=True)
        compared = Call("not", (Call("coalesce", (compared, Literal(False, "boolean")), BOOLEAN),), BOOLEAN)
    return [attrs.evolve(view, note=note)], [*joins, compared]


class DecorrelateInequalityCorrelation(DecorrelationRule):
    """Replace an EXISTS/IN (or NOT) subquery correlated by equalities and one inequality by a view of
    the inner side's MIN or MAX keyed by the equalities, compared with the outer side.

    Law: ``∃s ∈ σ_{a=x}(S): s.b > y`` ⟺ ``y < max_{s ∈ σ_{a=x}(S)} s.b`` (NULL when no row: not TRUE).
    Preconditions: the join graph's conditions are conjuncts (normalization); runs before
    ``DecorrelateExistsAndIn``, which takes equality correlations (and Q21's ``<>``).

    Paper: AJU §5 (subqueries as aggregate views joined on their key) and Theorem 15 (join-select).
    """

    def views_for(self, condition: Expr, outer: set[str], nullable: Nullability, aliases: FreshAliases) -> Replacement:
        match condition:
            # R ⋉_{a=x ∧ b>y} S = σ_{y < V.m}(R ⋈_{x = V.k} V), V = γ_{a; max(b) AS m}(S) (NOT: V optional, not coalesce)
            case Subquery(kind=("exists" | "in")):
                return inequality_views(condition, outer, aliases.name(), nullable)
        return None
