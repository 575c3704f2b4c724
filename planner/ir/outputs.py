"""The output columns of every plan node, in order: the row layout stages compile expressions against."""

from __future__ import annotations

from functools import singledispatch

from planner.ir.expressions import Column
from planner.ir.gjt_maintenance import GeneralizedJoinTree
from planner.ir.heavy_light_plan import HeavyLightTriangleCount
from planner.ir.logical import (
    Aggregate,
    Distinct,
    Filter,
    Join,
    Limit,
    LogicalPlan,
    Project,
    Scan,
    SetOperation,
    Sort,
    SubqueryAlias,
)
from planner.ir.maintenance import (
    Atom,
    BinaryJoin,
    ChangePropagationJoin,
    CountedDistinct,
    CrossProductAggregate,
    ForeignKeyJoin,
    GroupAggregate,
    JoinGraph,
    NestedAggregate,
    RingAggregate,
    ScalarProduct,
    ThresholdFilter,
    TopK,
    ViewAtom,
)
from planner.ir.outer_join import OuterJoin
from planner.ir.view_tree_plan import FactorizedViewTree, ViewTreeAggregate
from planner.ir.window import MaintainedWindow, Window, window_columns


@singledispatch
def output_columns(plan: LogicalPlan) -> tuple[Column, ...]:
    raise NotImplementedError(f"no output layout for {plan.node_name}")


@output_columns.register
def _(plan: Scan) -> tuple[Column, ...]:
    return plan.output


@output_columns.register(Atom)
@output_columns.register(ViewAtom)
def _(plan) -> tuple[Column, ...]:
    return plan.output


@output_columns.register(Filter)
@output_columns.register(ThresholdFilter)
@output_columns.register(Sort)
@output_columns.register(Limit)
@output_columns.register(Distinct)
@output_columns.register(TopK)
@output_columns.register(CountedDistinct)
def _(plan) -> tuple[Column, ...]:
    return output_columns(plan.child)


@output_columns.register(ScalarProduct)
def _(plan: ScalarProduct) -> tuple[Column, ...]:
    return output_columns(plan.child) + tuple(Column(None, name) for name in plan.names)


@output_columns.register(Project)
def _(plan: Project) -> tuple[Column, ...]:
    return tuple(Column(None, item.name) for item in plan.items)


@output_columns.register(Aggregate)
@output_columns.register(ViewTreeAggregate)
@output_columns.register(RingAggregate)
@output_columns.register(GroupAggregate)
def _(plan) -> tuple[Column, ...]:
    return tuple(Column(None, item.name) for item in (*plan.group_by, *plan.aggregates))


@output_columns.register(HeavyLightTriangleCount)
def _(plan: HeavyLightTriangleCount) -> tuple[Column, ...]:
    return tuple(Column(None, item.name) for item in plan.aggregates)


@output_columns.register(NestedAggregate)
def _(plan: NestedAggregate) -> tuple[Column, ...]:
    return tuple(Column(None, item.name) for item in (*plan.group_by, *plan.aggregates))


@output_columns.register(CrossProductAggregate)
def _(plan: CrossProductAggregate) -> tuple[Column, ...]:
    return tuple(Column(None, name) for name in (*plan.group_names, *plan.names))


@output_columns.register(Join)
def _(plan: Join) -> tuple[Column, ...]:
    if plan.kind in ("semi", "anti"):
        return output_columns(plan.left)
    return output_columns(plan.left) + output_columns(plan.right)


@output_columns.register(JoinGraph)
def _(plan: JoinGraph) -> tuple[Column, ...]:
    return tuple(col for atom in plan.atoms for col in output_columns(atom))


@output_columns.register(ForeignKeyJoin)
def _(plan: ForeignKeyJoin) -> tuple[Column, ...]:
    # a view under a join-select passes on its key only: its value is the pointer (rules/join_select.py)
    pointing = {s.value.table for s in plan.join_selects}
    return tuple(col for atom in plan.atoms for col in output_columns(atom)
                 if col.table not in pointing or col.name in plan.atom(col.table).key)


@output_columns.register(GeneralizedJoinTree)
def _(plan: GeneralizedJoinTree) -> tuple[Column, ...]:
    return plan.output


@output_columns.register(BinaryJoin)
@output_columns.register(OuterJoin)
def _(plan) -> tuple[Column, ...]:
    return output_columns(plan.left) + output_columns(plan.right)


@output_columns.register(ChangePropagationJoin)
def _(plan: ChangePropagationJoin) -> tuple[Column, ...]:
    return output_columns(plan.tree)


@output_columns.register(SetOperation)
def _(plan: SetOperation) -> tuple[Column, ...]:
    return output_columns(plan.left)  # SQL names a set operation's columns after its left side


@output_columns.register(SubqueryAlias)
def _(plan: SubqueryAlias) -> tuple[Column, ...]:
    return tuple(Column(plan.alias, c.name) for c in output_columns(plan.child))


@output_columns.register(FactorizedViewTree)
def _(plan: FactorizedViewTree) -> tuple[Column, ...]:
    return plan.output


@output_columns.register(Window)
@output_columns.register(MaintainedWindow)
def _(plan) -> tuple[Column, ...]:
    return output_columns(plan.child) + window_columns(plan.functions)
