"""Group-by aggregation over a maintained join (AJU §5 Theorem 14, Olteanu §2).

SUM and COUNT form a ring under + and −: a deleted row subtracts exactly what its insert added, so a
group's value is kept in O(1) per change with no access to the other rows of the group. AVG is kept
as the pair (SUM, COUNT). That is the preferred strategy, ``RingAggregate``.

STDDEV and VARIANCE are read off the ring payload (Σx, Σx²) kept beside the count (F-IVM's degree-1
covariance ring), kept exactly so a delete takes its value back out with no residue.

MIN/MAX, MAX_BY/MIN_BY, the exact percentiles and the DISTINCT aggregates are not rings: deleting
the current minimum needs the next value, deleting one of two equal values must leave the value in.
``GroupAggregate`` keeps, per group, such an aggregate's argument values as value → multiplicity,
sorted for MIN/MAX (for MAX_BY/MIN_BY the (ordering, value) pairs): O(log n) per change (Theorem
14's ordered structure per group), O(1) for the DISTINCT ones; a percentile keeps every copy in an
order-statistic index, O(log n) per change. FILTER, count_if and bool_and/bool_or reach the rules as
COUNT/SUM/MIN/MAX over CASE arguments (planner/sql/aggregates.py), so they are rings where those are.
"""

from __future__ import annotations

from planner.ir.expressions import AggregateCall
from planner.ir.gjt_maintenance import GeneralizedJoinTree
from planner.ir.logical import Aggregate, LogicalPlan
from planner.ir.maintenance import (
    ChangePropagationJoin,
    ForeignKeyJoin,
    GroupAggregate,
    RingAggregate,
    ThresholdFilter,
)
from planner.ir.outer_join import OuterJoin
from planner.ir.view_tree_plan import FactorizedViewTree
from planner.optimizer.context import OptimizerContext
from planner.optimizer.executor import Rule

# STDDEV/VARIANCE: the ring of (Σx, Σx²) payloads (operators/structures/moments.py), read at the end
RING_FUNCTIONS = ("sum", "count", "avg", "stddev", "stddev_samp", "stddev_pop", "std", "variance", "var_samp", "var_pop")


def _is_ring(call: AggregateCall) -> bool:
    return call.func in RING_FUNCTIONS and not call.distinct


def _describe(call: AggregateCall) -> str:
    return f"{call.func.upper()}({'DISTINCT ' if call.distinct else ''}...)"


class MaintainRingAggregate(Rule):
    """Replace an ``Aggregate`` over a maintained join by a ``RingAggregate`` when every aggregate is a ring.

    Preconditions: the child is already a maintained join (``ForeignKeyJoin``), or a threshold
    over one (its changes are rows like a join's).

    >>> from planner.optimizer.testing import assert_rewrite
    >>> assert_rewrite(MaintainRingAggregate(), '''
    ... Aggregate group_by=[o.o_orderdate AS o_orderdate] aggregates=[sum(l.l_extendedprice) AS _a0]
    ...   ForeignKeyJoin root=l edges=[l(l_orderkey)→o(o_orderkey)]
    ...     Atom table=orders alias=o columns=[o_orderkey, o_orderdate]
    ...     Atom table=lineitem alias=l columns=[l_orderkey, l_extendedprice]
    ... ''', '''
    ... RingAggregate group_by=[o.o_orderdate AS o_orderdate] aggregates=[sum(l.l_extendedprice) AS _a0]
    ...   ForeignKeyJoin root=l edges=[l(l_orderkey)→o(o_orderkey)]
    ...     Atom table=orders alias=o columns=[o_orderkey, o_orderdate]
    ...     Atom table=lineitem alias=l columns=[l_orderkey, l_extendedprice]
    ... ''', None)

    A MIN is not a ring; the rule leaves it (to ``MaintainGroupAggregate``) and records why:

    >>> from catalog.tpch import tpch_catalog
    >>> from planner.optimizer.testing import assert_unchanged
    >>> ctx = OptimizerContext(tpch_catalog())
    >>> assert_unchanged(MaintainRingAggregate(), '''
    ... Aggregate group_by=[] aggregates=[min(o.o_totalprice) AS _a0, count(*) AS _a1]
    ...   ForeignKeyJoin root=o edges=[]
    ...     Atom table=orders alias=o columns=[o_orderkey, o_totalprice]
    ... ''', ctx)
    >>> ctx.refusals["MaintainRingAggregate"]
    'MIN(...) is not a ring aggregate: a delete cannot be undone in O(1) without the rest of the group'

    Paper: AJU §5 Theorem 14 (SUM/COUNT aggregation in O(1) per delta tuple).
    """

    def rewrite(self, node: LogicalPlan, ctx: OptimizerContext) -> LogicalPlan:
        match node:
            # γ_{g; Σ}(Q) with Σ ⊆ {sum, count, avg}: Δγ(Q) = γ(ΔQ) added into the group's value
            case Aggregate(group_by, aggregates, (ForeignKeyJoin() | ChangePropagationJoin() | GeneralizedJoinTree() | FactorizedViewTree() | OuterJoin()
                                             | ThresholdFilter()) as child):
                not_rings = sorted({_describe(item.expr) for item in aggregates if not _is_ring(item.expr)})
                if not_rings:
                    if ctx is not None:
                        verb = "is not a ring aggregate" if len(not_rings) == 1 else "are not ring aggregates"
                        ctx.refuse(self.name, f"{', '.join(not_rings)} {verb}: a delete cannot be undone in O(1) "
                                              "without the rest of the group")
                    return node
                return RingAggregate(group_by, aggregates, child)
        return node


class MaintainGroupAggregate(Rule):
    """Replace an ``Aggregate`` over a maintained join by a ``GroupAggregate`` (MIN/MAX, DISTINCT aggregates).

    Preconditions: the child is already a maintained join (``ForeignKeyJoin``). Runs after
    ``MaintainRingAggregate``, which takes every aggregate it can (O(1) per change, no kept values).

    >>> from planner.optimizer.testing import assert_rewrite
    >>> assert_rewrite(MaintainGroupAggregate(), '''
    ... Aggregate group_by=[o.o_orderpriority AS o_orderpriority] aggregates=[min(o.o_totalprice) AS _a0, count(distinct l.l_suppkey) AS _a1]
    ...   ForeignKeyJoin root=l edges=[l(l_orderkey)→o(o_orderkey)]
    ...     Atom table=orders alias=o columns=[o_orderkey, o_orderpriority, o_totalprice]
    ...     Atom table=lineitem alias=l columns=[l_orderkey, l_suppkey]
    ... ''', '''
    ... GroupAggregate group_by=[o.o_orderpriority AS o_orderpriority] aggregates=[min(o.o_totalprice) AS _a0, count(distinct l.l_suppkey) AS _a1]
    ...   ForeignKeyJoin root=l edges=[l(l_orderkey)→o(o_orderkey)]
    ...     Atom table=orders alias=o columns=[o_orderkey, o_orderpriority, o_totalprice]
    ...     Atom table=lineitem alias=l columns=[l_orderkey, l_suppkey]
    ... ''', None)

    Paper: AJU §5 Theorem 14 (MIN/MAX with an ordered structure per group).
    """

    def rewrite(self, node: LogicalPlan, ctx: OptimizerContext) -> LogicalPlan:
        match node:
            # γ_{g; min(x)}(Q): Δ moves x's multiplicity in g's ordered multiset; min = its first element
            case Aggregate(group_by, aggregates, (ForeignKeyJoin() | ChangePropagationJoin() | GeneralizedJoinTree() | FactorizedViewTree() | OuterJoin()
                                             | ThresholdFilter()) as child):
                return GroupAggregate(group_by, aggregates, child)
        return node
