"""A filter comparing rows with an uncorrelated scalar subquery becomes a maintained threshold.

``σ_{v θ (SELECT ...)}(Q)``: the subquery is one maintained value q (its plan is maintained like
any other query), and the filter keeps Q's rows ordered by v, so a change of q moves only the rows
between the old and the new q across the threshold (TPC-H Q11's HAVING).
"""

from __future__ import annotations

from planner.ir.expressions import FLIPPED, Call, Subquery, contains_subquery
from planner.ir.logical import Filter, LogicalPlan, Scan
from planner.ir.maintenance import ThresholdFilter
from planner.optimizer.context import OptimizerContext
from planner.optimizer.executor import Rule
from rules.decorrelate import _referenced_aliases


def _uncorrelated(subquery: Subquery) -> bool:
    inner = {n.alias for n in subquery.plan.walk() if isinstance(n, Scan)}
    return _referenced_aliases(subquery.plan) <= inner | {None}


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

    def apply(self, plan: LogicalPlan, ctx: OptimizerContext) -> LogicalPlan:
        def convert(node: LogicalPlan) -> LogicalPlan:
            match node:
                # σ_{v θ q}(Q) with q a constant of the database state, not of the row
                case Filter(condition=Call(op=op, args=(value, Subquery(kind="scalar") as q)), child=child) if (
                    op in FLIPPED and op != "<>" and _uncorrelated(q) and not contains_subquery(value)
                ):
                    return ThresholdFilter(value, op, child, q.plan)
                case Filter(condition=Call(op=op, args=(Subquery(kind="scalar") as q, value)), child=child) if (
                    op in FLIPPED and op != "<>" and _uncorrelated(q) and not contains_subquery(value)
                ):
                    return ThresholdFilter(value, FLIPPED[op], child, q.plan)
            return node

        return plan.transform_up(convert)
