"""SELECT DISTINCT over a maintained query, by counting each result row's multiplicity.

The maintained query below emits a bag of rows; DISTINCT keeps a row while its multiplicity is
positive. Counting the multiplicity per row is a ring (a delete subtracts its insert), so the
distinct result changes only when a count crosses zero: O(1) per change (AJU §5 Theorem 14, π
under set semantics).
"""

from __future__ import annotations

from planner.ir.gjt_maintenance import GeneralizedJoinTree
from planner.ir.logical import Distinct, Filter, LogicalPlan, Project
from planner.ir.maintenance import (
    ChangePropagationJoin,
    CountedDistinct,
    ForeignKeyJoin,
    GroupAggregate,
    NestedAggregate,
    RingAggregate,
)
from planner.ir.outer_join import OuterJoin
from planner.ir.view_tree_plan import FactorizedViewTree
from planner.optimizer.context import OptimizerContext
from planner.optimizer.executor import Rule


class MaintainDistinct(Rule):
    """Replace ``Distinct`` over a maintained projection by ``CountedDistinct``.

    Preconditions: the child is the select list (``Project``) of a maintained join or aggregate
    (after ``ChooseForeignKeyJoinTree`` and the aggregate rules).

    >>> from planner.optimizer.testing import assert_rewrite
    >>> assert_rewrite(MaintainDistinct(), '''
    ... Distinct
    ...   Project items=[o.o_orderpriority AS o_orderpriority, l.l_shipmode AS l_shipmode]
    ...     ForeignKeyJoin root=l edges=[l(l_orderkey)→o(o_orderkey)]
    ...       Atom table=orders alias=o columns=[o_orderkey, o_orderpriority]
    ...       Atom table=lineitem alias=l columns=[l_orderkey, l_shipmode]
    ... ''', '''
    ... CountedDistinct
    ...   Project items=[o.o_orderpriority AS o_orderpriority, l.l_shipmode AS l_shipmode]
    ...     ForeignKeyJoin root=l edges=[l(l_orderkey)→o(o_orderkey)]
    ...       Atom table=orders alias=o columns=[o_orderkey, o_orderpriority]
    ...       Atom table=lineitem alias=l columns=[l_orderkey, l_shipmode]
    ... ''', None)

    An input that is not maintained yet (here a join no strategy took) is left alone:

    >>> from planner.optimizer.testing import assert_unchanged
    >>> assert_unchanged(MaintainDistinct(), '''
    ... Distinct
    ...   Project items=[o.o_orderpriority AS o_orderpriority]
    ...     JoinGraph
    ...       Atom table=orders alias=o columns=[o_orderkey, o_orderpriority]
    ... ''', None)

    Paper: AJU §5 Theorem 14 (projection; DISTINCT as a count per row).
    """

    def rewrite(self, node: LogicalPlan, ctx: OptimizerContext) -> LogicalPlan:
        match node:
            # δ(π(Q)): a row is in the result iff its multiplicity in π(Q) is positive
            case Distinct(Project(child=ForeignKeyJoin() | ChangePropagationJoin() | GeneralizedJoinTree() | FactorizedViewTree() | OuterJoin() | RingAggregate() | GroupAggregate()
                                  | NestedAggregate() | Filter(child=RingAggregate() | GroupAggregate())) as projected):
                return CountedDistinct(projected)
        return node
