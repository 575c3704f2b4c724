"""The optimizer pipeline: one visible list of rule batches, in order.

Ordering constraints:
- Normalization first: strategies only look at join graphs of atoms; derived tables are inlined
  inside the same fixpoint so their joins flatten with the outer ones.
- Foreign-key join trees before aggregates: ``MaintainRingAggregate`` needs a maintained join below.
- Column pruning last: it must see the edges and residuals the strategies introduced.
"""

from __future__ import annotations

from planner.ir.logical import LogicalPlan
from planner.ir.notation import print_plan
from planner.optimizer.context import OptimizerContext
from planner.optimizer.executor import Batch, FixedPoint, Once, PlanTrace, RuleExecutor
from rules.aggregate import MaintainGroupAggregate, MaintainRingAggregate
from rules.change_propagation import ChooseChangePropagationJoin
from rules.cross_product import DecomposeCrossProductAggregate
from rules.decorrelate import DecorrelateExistsAndIn, DecorrelateScalarSubqueries
from rules.distinct import MaintainDistinct
from rules.exists_inequality import DecorrelateInequalityCorrelation
from rules.factorized_output import ChooseFactorizedViewTree
from rules.fk_join_tree import ChooseForeignKeyJoinTree
from rules.generalized_join_tree import ChooseGeneralizedJoinTree
from rules.heavy_light import ChooseHeavyLightTriangle
from rules.inline_views import (
    InlineDerivedTables,
    MaintainDerivedAggregateAsView,
    MergeProjectionIntoDerivedTable,
)
from rules.insert_only import KeepExtremaOfInsertOnlyInput, KeepTopRowsOfInsertOnlyInput
from rules.join_select import MaintainJoinSelect
from rules.nested_aggregate import RecognizeCorrelatedNestedAggregate
from rules.normalize import (
    FactorCommonConjuncts,
    FlattenInnerJoins,
    FormEquiJoinClasses,
    PushSelectionsIntoAtoms,
)
from rules.not_in import DecorrelateNullAwareNotIn
from rules.outer_join import MaintainOuterJoin
from rules.outer_join_pushdown import PushSelectionsThroughOuterJoins
from rules.outer_join_subqueries import JoinSubqueriesOverOuterJoins
from rules.prune_columns import PruneAtomColumns
from rules.scalar_product import MaintainScalarProduct
from rules.threshold import MaintainThresholdCondition, MaintainThresholdFilter
from rules.top_k import MaintainTopK
from rules.view_edges import JoinEachViewOnce
from rules.view_tree import ChooseViewTree
from rules.window import MaintainWindow

NORMALIZE = (
    JoinSubqueriesOverOuterJoins(), InlineDerivedTables(), MergeProjectionIntoDerivedTable(), MaintainDerivedAggregateAsView(), PushSelectionsThroughOuterJoins(),
    FlattenInnerJoins(), FactorCommonConjuncts(),
    DecorrelateNullAwareNotIn(), DecorrelateInequalityCorrelation(), DecorrelateExistsAndIn(), MaintainThresholdFilter(), MaintainScalarProduct(), PushSelectionsIntoAtoms(), FormEquiJoinClasses(),
)

BATCHES = (
    Batch("Normalize", FixedPoint(100), NORMALIZE),
    # Before join trees: it takes the nested comparison out of the join graph, leaving a plain join.
    # Cross products split first: each relation's part then gets its own nested-aggregate index.
    Batch("Correlated nested aggregates", Once(), (DecomposeCrossProductAggregate(), RecognizeCorrelatedNestedAggregate())),
    # What the nested-aggregate indexes did not take: uncorrelated scalars compared in a WHERE become
    # thresholds above their join (after the batch above, so Q22's aggregate stays a nested one);
    # correlated scalar aggregates become keyed views, whose subplans (and the new join equalities)
    # are then normalized like the rest.
    Batch("Decorrelate scalar subqueries", Once(), (MaintainThresholdCondition(), DecorrelateScalarSubqueries())),
    Batch("Normalize views", FixedPoint(100), NORMALIZE),
    # Again, for what the batches above created: views' subplans and the queries feeding a value (NQ1).
    Batch("Nested aggregates in views", Once(), (DecomposeCrossProductAggregate(), RecognizeCorrelatedNestedAggregate())),
    Batch("Foreign-key join trees", Once(), (ChooseForeignKeyJoinTree(),)),
    # What the live-tuple strategy refused, when hierarchical (Olteanu §4); before the binary fallback.
    # Aggregates first (their payload is read off the tree); then projections of q-hierarchical joins,
    # whose result stays factorized (Ex. 4.4), taking the DISTINCT above them in the same pass.
    Batch("View trees", Once(), (ChooseViewTree(), ChooseFactorizedViewTree())),
    # The triangle count the view tree refused (cyclic): IVM^ε (Olteanu §3.3); before the binary fallback.
    Batch("Heavy/light partitioning", Once(), (ChooseHeavyLightTriangle(),)),
    # What is not along foreign keys but joined by inequalities: before the fallback, which takes
    # what this refuses (a cyclic query) and everything when the binary strategy is forced.
    Batch("Generalized join trees", Once(), (ChooseGeneralizedJoinTree(),)),
    # After the live-tuple strategy: it takes what that refused (or everything, when forced).
    Batch("Change propagation", Once(), (ChooseChangePropagationJoin(),)),
    # Once every side has its strategy: the outer joins those did not keep (all but the foreign-key LEFT JOIN).
    Batch("Outer joins", Once(), (MaintainOuterJoin(),)),
    # On the live-tuple joins only (a forced change-propagation tree keeps its residual); before column
    # pruning, which must see the join-select's compared column.
    Batch("Join-select", Once(), (MaintainJoinSelect(), JoinEachViewOnce())),
    # The insert-only variants last: they look below the aggregates and top-k the rules before built.
    Batch("Aggregates and top-k", Once(), (MaintainRingAggregate(), MaintainGroupAggregate(), MaintainDistinct(), MaintainTopK(),
                                            KeepExtremaOfInsertOnlyInput(), KeepTopRowsOfInsertOnlyInput())),
    # Above the joins and aggregates they read: windows per partition, bounded by an outer rank filter.
    Batch("Windows", Once(), (MaintainWindow(),)),
    Batch("Prune columns", Once(), (PruneAtomColumns(),)),
)


def optimize(plan: LogicalPlan, ctx: OptimizerContext, strict: bool = False) -> tuple[LogicalPlan, PlanTrace]:
    """Rewrite a logical plan into a maintenance plan; ``strict`` (tests) turns warnings into errors."""
    return RuleExecutor(BATCHES, strict=strict, render=print_plan).execute(plan, ctx)
