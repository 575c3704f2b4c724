"""A WHERE subquery over an outer join, as a join with the subquery's keys.

The decorrelation rules work on join graphs (inner joins flattened); a WHERE above a LEFT, RIGHT or
FULL OUTER JOIN stays a filter over the join tree, and an EXISTS/IN in it reads the join's result,
padded rows included. With equality correlations it is a semi or anti join with the subquery's
distinct correlation keys ``K = δ(π_{a}(σ_{φ ∧ a IS NOT NULL}(S)))`` (one row per key):

- ``EXISTS`` / ``IN``: ``σ_{∃}(J) = J ⋈_{x = K.a} K`` (each row of J meets at most one row of K; a
  padded row's NULL ``x`` meets none, as ``x = a`` is never true of NULL);
- ``NOT EXISTS`` / ``NOT IN`` over columns that cannot be NULL: ``J ⟕_{x = K.a} K`` keeping the rows
  whose ``K.a`` is NULL (no key met).

- ``NOT IN``: Spark's null-aware anti join (rules/not_in.py), since its operand may be NULL (a padded
  row's is): the LEFT JOIN with ``K`` as for NOT EXISTS, and a LEFT JOIN with the subquery's facts per
  correlation key (whether it holds a NULL; no row: it is empty), uncorrelated one row joined to every
  row by a constant key.

The joins are then maintained like any join over an outer join (rules/outer_join.py: per-key match
counts): ``K`` changes only when a key appears in or leaves ``S`` (a DISTINCT's count per key), and
then the rows of J with that key flip, O(rows of the key); the facts change only when a NULL enters or
leaves the subquery or it empties or fills, flipping the rows of the correlation key (uncorrelated:
every row, O(rows of the result)); a change of J costs O(1) against them. Correlations other than
equalities are refused with the reason.
"""

from __future__ import annotations

from catalog.types import BOOLEAN
from planner.ir.expressions import Call, Column, Expr, Subquery, conjunction, conjuncts, type_of
from planner.ir.logical import Distinct, Filter, Join, LogicalPlan, NamedExpr, Project, Scan, SubqueryAlias
from planner.optimizer.context import OptimizerContext
from rules.decorrelate import CannotDecorrelate, DecorrelationRule, equality_correlation
from rules.not_in import null_aware_test, null_facts

OUTER = ("left", "right", "full")


def _visible(plan: LogicalPlan) -> set[str]:
    """The relations a join tree makes visible (not those inside its derived tables)."""
    if isinstance(plan, Scan | SubqueryAlias):
        return {plan.alias}
    return {alias for child in plan.children for alias in _visible(child)}


def _holds_outer_join(plan: LogicalPlan) -> bool:
    if isinstance(plan, Join):
        return plan.kind in OUTER or _holds_outer_join(plan.left) or _holds_outer_join(plan.right)
    return isinstance(plan, Filter) and _holds_outer_join(plan.child)


def _keys(subquery: Subquery, visible: set[str]) -> tuple[LogicalPlan, list[tuple[Expr, Expr]]]:
    """The subquery's body without its correlation and its (inner, outer) equalities, IN's value first."""
    plan = subquery.plan
    if subquery.kind == "exists":
        split = equality_correlation(plan.child if isinstance(plan, Project) else plan, visible)
        if not split.keys:
            raise CannotDecorrelate("an uncorrelated EXISTS is a constant condition; it is not maintained yet")
        return split.filtered(), list(split.keys)
    if not (isinstance(plan, Project) and len(plan.items) == 1):
        raise CannotDecorrelate("the IN subquery must select one expression")
    split = equality_correlation(plan.child, visible)
    return split.filtered(), [(plan.items[0].expr, subquery.operand), *split.keys]


def joined_subquery(subquery: Subquery, child: LogicalPlan, alias: str) -> tuple[LogicalPlan, list[Expr]]:
    """``child`` joined with the subquery's distinct keys, and the tests left for the WHERE."""
    body, pairs = _keys(subquery, _visible(child))
    names = [f"k{i}" for i in range(len(pairs))]
    present = conjunction([Call("is not null", (inner,), BOOLEAN) for inner, _ in pairs])
    keys = SubqueryAlias(alias, Distinct(Project(tuple(NamedExpr(n, inner) for n, (inner, _) in zip(names, pairs, strict=True)),
                                                 Filter(present, body))))
    on = conjunction([Call("=", (outer, Column(alias, n, type_of(inner))), BOOLEAN)
                      for n, (inner, outer) in zip(names, pairs, strict=True)])
    if not subquery.negated:
        return Join("inner", on, child, keys), []
    joined = Join("left", on, child, keys)
    tests = [Call("is null", (Column(alias, names[0], type_of(pairs[0][0])),), BOOLEAN)]
    if subquery.kind == "in":  # NOT IN: Spark's null-aware anti join (rules/not_in.py), its facts joined too
        joined, test = _with_null_facts(subquery, joined, f"{alias}f")
        tests.append(test)
    return joined, tests


def _with_null_facts(subquery: Subquery, child: LogicalPlan, alias: str) -> tuple[LogicalPlan, Expr]:
    """``child`` LEFT JOINed with the subquery's facts per correlation key (whether it holds a NULL; no
    row: it is empty), and the null-aware test on them. Uncorrelated, the facts are one row joined to
    every row (a constant key): its change, a NULL entering or leaving, flips every row."""
    facts, pairs = null_facts(subquery, _visible(child), alias, lambda expr, plan: True)
    null = Column(alias, "_null", BOOLEAN)
    on = conjunction([Call("=", (outer, Column(alias, f"k{i}", type_of(inner))), BOOLEAN)
                      for i, (inner, outer) in enumerate(pairs)]) or Call("is not null", (null,), BOOLEAN)
    # a padded row's operand is NULL: the test treats it as the NULL it is
    return Join("left", on, child, SubqueryAlias(alias, facts)), null_aware_test(null, subquery.operand, True)


class JoinSubqueriesOverOuterJoins(DecorrelationRule):
    """Replace an EXISTS/IN (or NOT) conjunct of a WHERE over an outer join by a join with the subquery's
    distinct correlation keys (NOT: a LEFT JOIN keeping the rows that meet none; NOT IN: null-aware).

    Law: ``σ_{∃s ∈ S: s.a = x}(J) = J ⋈_{x = a} δ(π_a(σ_{a IS NOT NULL}(S)))``, and
    ``σ_{∄s ∈ S: s.a = x}(J) = σ_{K.a IS NULL}(J ⟕_{x = a} δ(π_a(σ_{a IS NOT NULL}(S))))``.
    Preconditions: none; the joins it makes are normalized (the keys a derived table) in the same batch.

    Paper: Griffin & Kumar (outer joins maintained by change propagation); AJU §5 (subqueries as views
    joined on their key).
    """

    def numbering(self, plan: LogicalPlan) -> tuple[str, int]:
        return "_sq", sum(1 for n in plan.walk() if isinstance(n, SubqueryAlias) and n.alias.startswith("_sq"))

    def rewrite(self, node: LogicalPlan, ctx: OptimizerContext) -> LogicalPlan:
        match node:
            # σ_{∃s ∈ S: s.a = x}(J) = J ⋈_{x = a} δ(π_a(S)); NOT: σ_{K.a IS NULL}(J ⟕_{x = a} δ(π_a(S))) (J has an outer join)
            case Filter(condition=condition, child=child) if _holds_outer_join(child):
                tests = []
                for part in conjuncts(condition):
                    if not (isinstance(part, Subquery) and part.kind in ("exists", "in")):
                        tests.append(part)
                        continue
                    try:
                        child, left = joined_subquery(part, child, ctx.aliases.name())
                    except CannotDecorrelate as reason:
                        ctx.refuse(self.name, str(reason))
                        tests.append(part)
                        continue
                    ctx.aliases.take(1)
                    tests += left
                if child is not node.child:
                    return Filter(conjunction(tests), child) if tests else child
        return node
