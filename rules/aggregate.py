"""Group-by aggregation over a maintained join, as ring aggregates (AJU Theorem 14, Olteanu §2).

SUM and COUNT form a ring under + and −: a deleted row subtracts exactly what its insert added, so a
group's value is kept in O(1) per change with no access to the other rows of the group. AVG is kept
as the pair (SUM, COUNT). MIN/MAX and DISTINCT aggregates are not rings (a delete of the current
minimum needs the rest of the group); they are refused here until ordered multisets land.
"""

from __future__ import annotations

from planner.context import OptimizerContext
from planner.expressions import AggregateCall
from planner.maintenance import ForeignKeyJoin, RingAggregate
from planner.plan import Aggregate, LogicalPlan
from planner.rule_executor import Rule

RING_FUNCTIONS = ("sum", "count", "avg")


class MaintainRingAggregate(Rule):
    """Replace an ``Aggregate`` over a maintained join by a ``RingAggregate`` when every aggregate is a ring.

    Preconditions: the child is already a maintained join (``ForeignKeyJoin``).

    >>> from planner.testing import assert_rewrite
    >>> assert_rewrite(MaintainRingAggregate(), '''
    ... Aggregate group_by=[o.o_orderdate AS o_orderdate] aggregates=[sum(l.l_extendedprice) AS _a0]
    ...   ForeignKeyJoin root=l edges=[FkEdge(referencing=l, columns=[l_orderkey], referenced=o, key=[o_orderkey])] residual=None
    ...     Atom table=orders alias=o columns=[o_orderkey, o_orderdate] predicate=None
    ...     Atom table=lineitem alias=l columns=[l_orderkey, l_extendedprice] predicate=None
    ... ''', '''
    ... RingAggregate group_by=[o.o_orderdate AS o_orderdate] aggregates=[sum(l.l_extendedprice) AS _a0]
    ...   ForeignKeyJoin root=l edges=[FkEdge(referencing=l, columns=[l_orderkey], referenced=o, key=[o_orderkey])] residual=None
    ...     Atom table=orders alias=o columns=[o_orderkey, o_orderdate] predicate=None
    ...     Atom table=lineitem alias=l columns=[l_orderkey, l_extendedprice] predicate=None
    ... ''', None)

    Paper: AJU §5 Theorem 14 (SUM/COUNT aggregation in O(1) per delta tuple).
    """

    def apply(self, plan: LogicalPlan, ctx: OptimizerContext) -> LogicalPlan:
        def convert(node: LogicalPlan) -> LogicalPlan:
            match node:
                # γ_{g; Σ}(Q) with Σ ⊆ {sum, count, avg}: Δγ(Q) = γ(ΔQ) added into the group's value
                case Aggregate(group_by, aggregates, ForeignKeyJoin() as child):
                    calls = [item.expr for item in aggregates]
                    unsupported = [
                        c for c in calls if not (isinstance(c, AggregateCall) and c.func in RING_FUNCTIONS and not c.distinct)
                    ]
                    if unsupported:
                        names = ", ".join(sorted({_describe(c) for c in unsupported}))
                        if ctx is not None:
                            ctx.refuse(self.name, f"{names} is not a ring aggregate (a delete cannot be undone in O(1)); "
                                       "MIN/MAX and DISTINCT aggregates are not implemented yet")
                        return node
                    return RingAggregate(group_by, aggregates, child)
            return node

        return plan.transform_up(convert)


def _describe(call) -> str:
    if isinstance(call, AggregateCall):
        return f"{call.func.upper()}({'DISTINCT ' if call.distinct else ''}...)"
    return type(call).__name__
