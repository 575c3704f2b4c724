"""A filter comparing rows with an uncorrelated scalar subquery becomes a maintained threshold.

``σ_{v θ (SELECT ...)}(Q)``: the subquery is one maintained value q (its plan is maintained like
any other query, a one-row view), and the filter keeps Q's rows ordered by v, so a change of q
moves only the rows between the old and the new q across the threshold (TPC-H Q11's HAVING).

The same comparison in a WHERE is a join-graph condition once joins are flattened; it becomes a
threshold above the join only after the nested-aggregate rules had their turn, because an
aggregate over it (Q22) is better maintained as a join-select-aggregate (RPAI, AJU Theorem 15).
"""

from __future__ import annotations

import attrs

from planner.ir.correlation import is_uncorrelated
from planner.ir.expressions import FLIPPED, Call, Expr, Subquery, conjunction, conjuncts, contains_subquery
from planner.ir.logical import Aggregate, Filter, LogicalPlan
from planner.ir.maintenance import JoinGraph, ThresholdFilter
from planner.optimizer.context import OptimizerContext
from planner.optimizer.executor import Rule
from rules.decorrelate import CannotDecorrelate, scalar_view


def threshold_comparison(condition: Expr) -> tuple[Expr, str, Subquery] | None:
    """``(v, θ, q)`` when ``condition`` is ``v θ q`` or ``q θ' v`` with q an uncorrelated scalar
    subquery, θ a comparison (< <= = <> >= >) and v free of subqueries; None otherwise."""
    match condition:
        # v θ q, as written
        case Call(op=op, args=(value, Subquery(kind="scalar") as q)) if op in FLIPPED:
            pass
        # q θ v = v θ' q (θ' the flipped comparison)
        case Call(op=op, args=(Subquery(kind="scalar") as q, value)) if op in FLIPPED:
            op = FLIPPED[op]
        # no comparison with a scalar subquery: no threshold
        case _:
            return None
    if not is_uncorrelated(q.plan) or contains_subquery(value):
        return None
    return value, op, q


class MaintainThresholdFilter(Rule):
    """Rewrite ``Filter(v θ scalar{uncorrelated})`` into ``ThresholdFilter(v, θ, child, subquery plan)``.

    >>> from planner.optimizer.testing import assert_rewrite
    >>> assert_rewrite(MaintainThresholdFilter(), '''
    ... Filter condition=_a0 > scalar{
    ...     Project items=[0.5 * _a0 AS _c0]
    ...       Aggregate group_by=[] aggregates=[sum(t2.x) AS _a0]
    ...         Scan table=t alias=t2 columns=[x]
    ...   }
    ...   Aggregate group_by=[t.k AS k] aggregates=[sum(t.x) AS _a0]
    ...     Scan table=t alias=t columns=[k, x]
    ... ''', '''
    ... ThresholdFilter value=(_a0) op='>'
    ...   Aggregate group_by=[t.k AS k] aggregates=[sum(t.x) AS _a0]
    ...     Scan table=t alias=t columns=[k, x]
    ...   Project items=[0.5 * _a0 AS _c0]
    ...     Aggregate group_by=[] aggregates=[sum(t2.x) AS _a0]
    ...       Scan table=t alias=t2 columns=[x]
    ... ''', None)
    """

    def rewrite(self, node: LogicalPlan, ctx: OptimizerContext) -> LogicalPlan:
        match node:
            # σ_{v θ q}(Q) with q a constant of the database state, not of the row
            case Filter(condition=condition, child=child) if (found := threshold_comparison(condition)):
                value, op, q = found
                return ThresholdFilter(value, op, child, q.plan)
            # σ_{c ∧ v θ q}(γ(Q)) = σ_{v θ q}(σ_c(γ(Q))): the rest of the HAVING stays below the threshold
            case Filter(condition=condition, child=Aggregate() as child):
                parts = conjuncts(condition)
                found = [threshold_comparison(part) for part in parts]
                if not any(found) or len(parts) < 2:
                    return node
                rest = [part for part, f in zip(parts, found, strict=True) if f is None]
                result: LogicalPlan = Filter(conjunction(rest), child) if rest else child
                for value, op, q in (f for f in found if f is not None):
                    result = ThresholdFilter(value, op, result, q.plan)
                return result
        return node


def _equality_with_one_row_view(value: Expr, op: str, q: Subquery) -> bool:
    """``v = q`` with q one aggregate: ``DecorrelateScalarSubqueries`` joins its one-row view on the
    value (Q15), touching only the rows equal to the old or the new value; leave it to that rule."""
    if op != "=":
        return False
    try:
        scalar_view(q, set(), "_probe")
    except CannotDecorrelate:
        return False
    return True


class MaintainThresholdCondition(Rule):
    """Take each ``v θ q`` with q an uncorrelated scalar subquery out of a join graph's conditions,
    as a ``ThresholdFilter`` above the join: ``σ_{c ∧ v θ q}(R1 ⋈ …) = σ_{v θ q}(σ_c(R1 ⋈ …))``.

    Preconditions: the nested-aggregate rules have run (a SUM/COUNT/AVG over the join graph is
    theirs: Q22's ``count(*) ... where c_acctbal > (select avg ...)`` is a join-select-aggregate;
    what they left, such as a MIN, is then an aggregate over the threshold). An equality with a one-aggregate subquery is
    left to ``DecorrelateScalarSubqueries`` (Q15's one-row view joined on the value); any other
    subquery may return several rows, which the lowering's one-row stage turns into Spark's error.

    >>> from planner.optimizer.testing import assert_rewrite
    >>> assert_rewrite(MaintainThresholdCondition(), '''
    ... Project items=[c.c_custkey AS c_custkey]
    ...   JoinGraph conditions=[c.c_acctbal > scalar{
    ...       Project items=[_a0 - 500 AS _c0]
    ...         Aggregate group_by=[] aggregates=[max(s.s_acctbal) AS _a0]
    ...           Scan table=supplier alias=s columns=[s_acctbal]
    ...     }]
    ...     Atom table=customer alias=c columns=[c_custkey, c_acctbal]
    ... ''', '''
    ... Project items=[c.c_custkey AS c_custkey]
    ...   ThresholdFilter value=c.c_acctbal op='>'
    ...     JoinGraph
    ...       Atom table=customer alias=c columns=[c_custkey, c_acctbal]
    ...     Project items=[_a0 - 500 AS _c0]
    ...       Aggregate group_by=[] aggregates=[max(s.s_acctbal) AS _a0]
    ...         Scan table=supplier alias=s columns=[s_acctbal]
    ... ''', None)

    Paper: AJU Theorem 15 (join-select with a constant key: q is one value).
    """

    def rewrite(self, node: LogicalPlan, ctx: OptimizerContext) -> LogicalPlan:
        match node:
            # σ_{c ∧ v θ q}(R1 ⋈ …) = σ_{v θ q}(σ_c(R1 ⋈ …)), q uncorrelated; several thresholds nest
            case JoinGraph(conditions=conditions):
                thresholds, kept = [], []
                for condition in conditions:
                    found = threshold_comparison(condition)
                    if found is None or _equality_with_one_row_view(*found):
                        kept.append(condition)
                    else:
                        thresholds.append(found)
                if not thresholds:
                    return node
                result: LogicalPlan = attrs.evolve(node, conditions=tuple(kept))
                for value, op, q in thresholds:
                    result = ThresholdFilter(value, op, result, q.plan)
                return result
        return node
