"""Lower a (sub)query: the operators above its joins, each to its own stage.

A query's body is a join (``foreign_key.py``, ``change_propagation.py``, ``gjt.py``) under an aggregate (keyed
by the group, also applying HAVING and the select list), a nested aggregate (``nested.py``) or a
stateless map; or a threshold, a product of one-row aggregates or a set operation over subqueries
lowered the same way. DISTINCT and the top-k follow; an ORDER BY without LIMIT is applied when the
result is read. Each operator gets its own stage here: merging an aggregate into its join stage is
a later step (``fuse.py``), noted but not decided here.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from catalog.types import DOUBLE
from operators.lowering.builder import Emitter, LoweredQuery, LoweringError, StageBuilder, finish_function
from operators.lowering.change_propagation import lower_change_propagation
from operators.lowering.expr_eval import compile_expr, compile_predicate
from operators.lowering.foreign_key import columns_needed, lower_foreign_key_join
from operators.lowering.fuse import note_aggregate_over_join
from operators.lowering.gjt import lower_generalized_join_tree
from operators.lowering.gjt_aggregate import lower_gjt_aggregate
from operators.lowering.heavy_light import lower_heavy_light
from operators.lowering.layers import is_layered_query, lower_layered_query
from operators.lowering.nested import lower_nested
from operators.lowering.outer_join import lower_outer_join
from operators.lowering.view_tree import lower_view_tree
from operators.lowering.view_tree_output import lower_factorized_view_tree
from operators.stages.aggregate import (
    AggregateSpec,
    GroupAggregateStage,
    RingAggregateStage,
    all_present,
    ordered_by,
)
from operators.stages.base import StageDescription
from operators.stages.distinct import DistinctStage
from operators.stages.insert_only import insert_only_reason
from operators.stages.insert_only_aggregate import InsertOnlyAggregateStage
from operators.stages.insert_only_top_k import InsertOnlyTopKStage
from operators.stages.join_select import JoinSelectStage
from operators.stages.map import MapStage
from operators.stages.product import ProductCombineStage
from operators.stages.scalar_product import ScalarProductStage
from operators.stages.set_operation import SetOperationStage
from operators.stages.top_k import TopKStage
from planner.ir.cross_product import CrossProductAggregate
from planner.ir.expressions import AggregateCall, Column, Expr, columns, type_of
from planner.ir.gjt_aggregate import GjtRingAggregate, gjt_ring_aggregate
from planner.ir.gjt_maintenance import GeneralizedJoinTree
from planner.ir.heavy_light_plan import HeavyLightTriangleCount
from planner.ir.logical import LINEAR_COST, Filter, LogicalPlan, Project, SetOperation, Sort
from planner.ir.maintenance import (
    ChangePropagationJoin,
    CountedDistinct,
    ForeignKeyJoin,
    GroupAggregate,
    NestedAggregate,
    RingAggregate,
    ThresholdFilter,
    TopK,
)
from planner.ir.notation import print_expr
from planner.ir.outer_join import OuterJoin
from planner.ir.scalar_product import ScalarProduct
from planner.ir.view_tree_plan import FactorizedViewTree, ViewTreeAggregate

#: A lowered body: its last stage and its result's columns.
Body = tuple[int, tuple[Column, ...]]


@attrs.frozen
class _Finishing:
    """What sits above a query's body: the select list (lowered with the body), then DISTINCT, the
    top-k and the ORDER BY applied when the result is read."""

    items: tuple | None = None
    distinct: bool = False
    top_k: TopK | None = None
    presentation: tuple = ()
    #: How many trailing result columns only sort (ORDER BY a column not selected): read, then dropped.
    hidden: int = 0


def lower_query(builder: StageBuilder, plan: LogicalPlan, read_above: frozenset[Column] = frozenset()) -> LoweredQuery:
    """Add the stages maintaining ``plan`` (the whole query, or a view's subplan) to ``builder``;
    ``read_above``: columns of its result that the operator above it reads too (a threshold's)."""
    needed = columns_needed(plan, builder.catalog) | read_above
    finishing, body = _peel(plan)
    last, layout = _lower_body(builder, body, finishing.items, needed)
    return _finish_query(builder, last, layout, finishing)


def _peel(plan: LogicalPlan) -> tuple[_Finishing, LogicalPlan]:
    """Split ``plan`` into what finishes it and its body (Sort, TopK, DISTINCT, Project, in that order).

    A Project of output columns above the Sort or TopK drops the trailing sort-only columns the
    front end added (``ORDER BY`` a column that is not selected); the result keeps them until read.
    """
    hidden = 0
    if isinstance(plan, Project) and isinstance(plan.child, Sort | TopK):
        hidden = _hidden_columns(plan)
        plan = plan.child
    presentation: tuple = ()
    if isinstance(plan, Sort):
        presentation, plan = plan.keys, plan.child
    top_k = None
    if isinstance(plan, TopK):
        top_k, plan = plan, plan.child
    distinct = isinstance(plan, CountedDistinct)
    if distinct:
        plan = plan.child
    items = None
    if isinstance(plan, Project):
        items, plan = plan.items, plan.child
    return _Finishing(items, distinct, top_k, presentation, hidden), plan


def _hidden_columns(project: Project) -> int:
    """How many trailing columns of the sorted result ``project`` drops; it must keep a prefix."""
    below = project.child.output
    kept = tuple(item.expr for item in project.items)
    if kept != tuple(Column(None, c.name) for c in below[: len(kept)]):
        raise LoweringError("a select list above ORDER BY may only drop the trailing sort columns")
    return len(below) - len(kept)


def _lower_body(builder: StageBuilder, plan: LogicalPlan, items: tuple | None, needed: frozenset[Column]) -> Body:
    """Dispatch on the body's top node class (``_BODIES``), a HAVING above it peeled off first; a
    node not listed is a join with what sits on it (``_lower_over_join``)."""
    if is_layered_query(plan):  # layers of filters, aliases and projections over a window or a set operation
        return lower_layered_query(builder, plan, items)
    having = None
    if isinstance(plan, Filter) and plan.child.having_applies:
        having, plan = plan.condition, plan.child
    lowering = _BODIES.get(type(plan), _lower_over_join)
    return lowering(builder, plan, items, having, needed)


def _lower_over_join(builder: StageBuilder, plan: LogicalPlan, items: tuple | None, having: Expr | None,
                     needed: frozenset[Column]) -> Body:
    """A join and what sits on it: an aggregate (with HAVING), a nested aggregate, or a map."""
    top = None
    if isinstance(plan, RingAggregate | GroupAggregate | NestedAggregate):
        top, plan = plan, plan.child
    if isinstance(top, RingAggregate | GroupAggregate) and isinstance(plan, ThresholdFilter):
        return _lower_aggregate_over_threshold(builder, top, plan, items, having)
    if isinstance(top, RingAggregate) and isinstance(plan, GeneralizedJoinTree):
        ring = gjt_ring_aggregate(top.group_by, top.aggregates, plan, builder.catalog)
        if isinstance(ring, GjtRingAggregate):  # else the join's changes are enumerated into the aggregate
            return lower_gjt_aggregate(builder, top, ring, items, having)
    root = _lower_join(builder, plan, needed, nested=isinstance(top, NestedAggregate))
    join_where = compile_predicate(plan.residual, {c: i for i, c in enumerate(root.layout)})
    if isinstance(top, NestedAggregate):
        return lower_nested(builder, top, items, having, plan, root)
    if top is None:
        return _lower_map(builder, plan, items, root)
    last, layout = _lower_aggregate(builder, top, items, having, root.layout, join_where)
    root.connect(builder, last, 0)
    if isinstance(plan, ForeignKeyJoin):
        note_aggregate_over_join(builder, plan, root, top, last)
    return last, layout


def _lower_join(builder: StageBuilder, plan: LogicalPlan, needed: frozenset[Column], nested: bool) -> Emitter:
    """Dispatch on the join's node class (``_JOINS``); only a foreign-key join keeps the live tuples
    a nested aggregate's indexes read."""
    lowering = _JOINS.get(type(plan))
    if lowering is None:
        raise LoweringError(f"cannot maintain a {plan.node_name} here: no incremental operator implements it")
    if nested and not isinstance(plan, ForeignKeyJoin):
        raise LoweringError(f"NestedAggregate over a{'n' if plan.node_name[0] in 'AEIOU' else ''} {plan.node_name}: the "
                            "nested-aggregate indexes read the live tuples of a foreign-key join, which "
                            f"{_NOT_LIVE_TUPLES[type(plan)]} does not keep")
    return lowering(builder, plan, needed)


def _lower_map(builder: StageBuilder, join: LogicalPlan, items: tuple | None, root: Emitter) -> Body:
    """The join's residual selection and the select list: linear, so one stateless stage."""
    mapping = finish_function(items, join.residual, root.layout, hold=reads_aggregates(join))
    layout = tuple(Column(None, i.name) for i in items) if items is not None else root.layout
    stage = builder.add(MapStage("project", mapping, tuple(map(str, layout)), StageDescription(
        operator="Map (σ, π)", inputs="join results", state="none", key="none (stateless)",
        update_cost=LINEAR_COST, why="selection and projection are linear (AJU Thm 14)")))
    root.connect(builder, stage, 0)
    return stage, layout


def _finish_query(builder: StageBuilder, last: int, layout: tuple[Column, ...],
                  finishing: _Finishing) -> LoweredQuery:
    """DISTINCT and top-k after the query's last stage; the ORDER BY applied when the result is read."""
    if finishing.distinct:
        last = _lower_distinct(builder, layout, last)
    top_k = finishing.top_k
    if top_k is not None:
        last = _lower_top_k(builder, top_k, layout, last)
    order_keys = finishing.presentation or (top_k.keys if top_k is not None else ())
    order = tuple((layout.index(_output_column(k.expr, layout)), k.ascending) for k in order_keys)
    return LoweredQuery(last, layout, order, finishing.hidden)


def _lower_set_operation(builder: StageBuilder, plan: SetOperation) -> Body:
    left, right = lower_query(builder, plan.left), lower_query(builder, plan.right)
    if len(left.layout) != len(right.layout):
        raise LoweringError(f"{plan.kind.upper()}: its sides have {len(left.layout)} and {len(right.layout)} columns; "
                            "both must have the same number")
    stage = builder.add(SetOperationStage(plan.kind, tuple(c.name for c in left.layout)))
    builder.downstream[left.last] = (stage, SetOperationStage.LEFT)
    builder.downstream[right.last] = (stage, SetOperationStage.RIGHT)
    return stage, left.layout


def _lower_cross_product(builder: StageBuilder, node: CrossProductAggregate, items: tuple | None) -> Body:
    """Each relation's one-row aggregate, then their products (see operators/stages/product.py)."""
    parts = [lower_query(builder, part) for part in node.parts]
    agg_layout = node.output
    layout = tuple(Column(None, i.name) for i in items) if items is not None else agg_layout
    stage = builder.add(ProductCombineStage(
        tuple(tuple(c.name for c in part.layout) for part in parts),
        node.funcs, tuple(tuple((t.coefficient, t.factors) for t in terms) for terms in node.sums),
        finish_function(items, None, agg_layout, hold=True), tuple(c.name for c in layout),
        node.grouped_part, len(node.group_names)))
    for port, part in enumerate(parts):
        builder.downstream[part.last] = (stage, port)
    return stage, layout


#: Which part of the rows ordered by v passes ``v θ q``, for the comparisons that are not a prefix or suffix.
_PASSING_PART = {"=": "the run equal to q", "<>": "all but the run equal to q"}


def _lower_aggregate_over_threshold(builder: StageBuilder, aggregate: RingAggregate | GroupAggregate,
                                    threshold: ThresholdFilter, items: tuple | None, having: Expr | None) -> Body:
    """An aggregate keyed by its group over the rows a threshold passes (``MIN(x) ... WHERE v > q``):
    the threshold emits exactly the rows flipping across q, the aggregate takes them as any change."""
    read = frozenset().union(*(columns(g.expr) for g in aggregate.group_by),
                             *(columns(a.expr) for a in aggregate.aggregates))
    stage, layout = _lower_threshold(builder, threshold, None, read)
    last, output_layout = _lower_aggregate(builder, aggregate, items, having, layout, None)
    builder.downstream[stage] = (last, 0)
    return last, output_layout


def _lower_threshold(builder: StageBuilder, node: ThresholdFilter, items: tuple | None,
                     read_by_parent: frozenset[Column] = frozenset()) -> Body:
    """The filtered query and the threshold's query as two branches meeting in a threshold stage."""
    # the join below keeps the columns the comparison, the select list and the operator above read
    read_above = read_by_parent.union(columns(node.value), *(columns(i.expr) for i in items or ()))
    rows = lower_query(builder, node.child, read_above)
    threshold = builder.lower_scalar(node.threshold, f"the threshold of {node.op} {print_expr(node.value)}")
    # a join-select whose key x1 is empty: q is Q's one value (AJU Theorem 15 with a constant key)
    stage = builder.add(JoinSelectStage(
        f"threshold {node.op}", compile_expr(node.value, {c: i for i, c in enumerate(rows.layout)}), node.op,
        tuple(c.name for c in rows.layout),
        StageDescription(
            operator=f"ThresholdFilter ({node.op} q)", inputs="rows; the threshold's one value",
            state="the rows ordered by the compared value; q", key="constant (does not scale out)",
            update_cost=node.update_cost,
            why=f"q is uncorrelated: the rows passing v θ q are {_PASSING_PART.get(node.op, 'a prefix or suffix')} "
                "of the value order (AJU Theorem 15's join-select with a constant key)"),
    ))
    builder.downstream[rows.last] = (stage, JoinSelectStage.ROWS)
    builder.downstream[threshold.last] = (stage, JoinSelectStage.THRESHOLD)
    return _projected(builder, stage, rows.layout, items, "filtered rows", hold=reads_aggregates(node.child))


def _lower_scalar_product(builder: StageBuilder, node: ScalarProduct, items: tuple | None) -> Body:
    """The rows and each scalar subquery's one-row view as branches meeting in a product stage
    (operators/stages/scalar_product.py), then the select list over the extended rows."""
    read_above = frozenset().union(*(columns(i.expr) for i in items or ()))
    rows = lower_query(builder, node.child, read_above)
    scalars = [builder.lower_scalar(plan, f"the scalar subquery {name}") for name, plan in zip(node.names, node.scalars,
                                                                                                 strict=True)]
    layout = rows.layout + tuple(Column(None, name) for name in node.names)
    stage = builder.add(ScalarProductStage(len(scalars), tuple(c.name for c in layout), StageDescription(
        operator=f"ScalarProduct ({', '.join(node.names)})", inputs="rows; each scalar subquery's one value",
        state="the rows (a multiset); each subquery's current value", key="constant (does not scale out)",
        update_cost=node.update_cost,
        why="the subquery is uncorrelated, one value for every row: each row is extended by it, and when it "
            "changes every row of the result shows the new value, so every row changes (inherent to the query)")))
    builder.downstream[rows.last] = (stage, ScalarProductStage.ROWS)
    for port, scalar in enumerate(scalars, start=ScalarProductStage.ROWS + 1):
        builder.downstream[scalar.last] = (stage, port)
    return _projected(builder, stage, layout, items, "extended rows", hold=True)


def _projected(builder: StageBuilder, stage: int, layout: tuple[Column, ...], items: tuple | None, inputs: str,
               hold: bool) -> Body:
    """``stage``'s rows (of ``layout``) through the select list ``items``, a stateless map; as they are without.
    ``hold``: the rows carry aggregates, so an error computing the list is the view's value (a held error)."""
    if items is None:
        return stage, layout
    projected = tuple(Column(None, i.name) for i in items)
    project = builder.add(MapStage(
        "project", finish_function(items, None, layout, hold=hold), tuple(c.name for c in projected),
        StageDescription(operator="Map (π)", inputs=inputs, state="none", key="none (stateless)",
                         update_cost="O(1) per change", why="projection is linear")))
    builder.downstream[stage] = (project, 0)
    return project, projected


def _output_column(expr: Expr, layout: tuple[Column, ...]) -> Column:
    if isinstance(expr, Column) and expr in layout:
        return expr
    if isinstance(expr, Column) and Column(None, expr.name) in layout:
        return Column(None, expr.name)
    raise LoweringError(f"ORDER BY {expr} is not a column of the result; order by an output column instead")


def _lower_aggregate(builder: StageBuilder, aggregate: RingAggregate | GroupAggregate, items: tuple | None,
                     having: Expr | None, layout: tuple[Column, ...], where) -> Body:
    """A ``RingAggregate`` or ``GroupAggregate`` as one stage keyed by the group."""
    index = {c: i for i, c in enumerate(layout)}
    group_by = tuple(compile_expr(g.expr, index) for g in aggregate.group_by)
    specs = []
    for item in aggregate.aggregates:
        call: AggregateCall = item.expr
        argument = None if call.arg is None else compile_expr(call.arg, index)
        further = tuple(compile_expr(a, index) for a in call.further_args)
        if call.func in ("max_by", "min_by"):
            argument = ordered_by(argument, further[0])
        elif further:  # count(DISTINCT a, b, ...)
            argument = all_present((argument, *further))
        double = call.arg is not None and type_of(call.arg) in (DOUBLE, None)
        specs.append(AggregateSpec(call.func, argument, call.distinct, double, call.parameters))
    agg_layout = aggregate.output
    finish = finish_function(items, having, agg_layout, hold=True)
    output_layout = tuple(Column(None, i.name) for i in items) if items is not None else agg_layout
    names, columns_out = tuple(g.name for g in aggregate.group_by), tuple(map(str, output_layout))
    if isinstance(aggregate, GroupAggregate) and aggregate.insert_only:
        stage = InsertOnlyAggregateStage(names, group_by, tuple(specs), finish, columns_out, aggregate.insert_only,
                                         where=where)
    else:
        stage_class = RingAggregateStage if isinstance(aggregate, RingAggregate) else GroupAggregateStage
        stage = stage_class(names, group_by, tuple(specs), finish, columns_out, where=where)
    return builder.add(stage), output_layout


def reads_aggregates(plan: LogicalPlan) -> bool:
    """Whether ``plan``'s rows hold values computed from aggregated state (a derived table's group),
    whose errors an expression over them holds instead of failing the batch (operators/held_errors.py)."""
    return any(isinstance(node, RingAggregate | GroupAggregate | NestedAggregate | CrossProductAggregate)
               for node in plan.walk())


def _lower_distinct(builder: StageBuilder, layout: tuple[Column, ...], upstream: int) -> int:
    stage = builder.add(DistinctStage(tuple(c.name for c in layout)))
    builder.downstream[upstream] = (stage, 0)
    return stage


def _lower_top_k(builder: StageBuilder, top_k: TopK, layout: tuple[Column, ...], upstream: int) -> int:
    index = {c: i for i, c in enumerate(layout)}
    keys = tuple((compile_expr(_output_column(k.expr, layout), index), k.ascending) for k in top_k.keys)
    name, columns_out = f"top {top_k.count}", tuple(c.name for c in layout)
    if top_k.insert_only:
        stage = builder.add(InsertOnlyTopKStage(name, keys, top_k.count, columns_out, StageDescription(
            operator=f"InsertOnlyTopK (k={top_k.count})", inputs="result changes (inserts only)",
            state=f"the {top_k.count} best rows only", key="constant (does not scale out)",
            update_cost=top_k.update_cost,
            why=insert_only_reason(top_k.insert_only, "a row out of the k best never returns: only they are kept")),
            insert_only=top_k.insert_only))
    else:
        stage = builder.add(TopKStage(name, keys, top_k.count, columns_out, StageDescription(
            operator=f"TopK (k={top_k.count})", inputs="result changes", state="the whole result as an ordered multiset",
            key="constant (does not scale out)", update_cost=top_k.update_cost,
            why="deleting a top row needs the next one, so all rows are kept in order")))
    builder.downstream[upstream] = (stage, 0)
    return stage


def _lower_set_operation_body(builder: StageBuilder, plan: SetOperation, items: tuple | None, having: Expr | None,
                              needed: frozenset[Column]) -> Body:
    if items is not None:  # a select list over a set operation: the front end gives none
        raise LoweringError(f"cannot maintain a {plan.node_name} here: no incremental operator implements it")
    return _lower_set_operation(builder, plan)


#: How a query body lowers, by its top node's class: (builder, node, select list, HAVING, needed columns) → Body.
_BODIES: dict[type, Callable[..., Body]] = {
    ThresholdFilter: lambda builder, node, items, having, needed: _lower_threshold(builder, node, items),
    ScalarProduct: lambda builder, node, items, having, needed: _lower_scalar_product(builder, node, items),
    CrossProductAggregate: lambda builder, node, items, having, needed: _lower_cross_product(builder, node, items),
    SetOperation: _lower_set_operation_body,
    ViewTreeAggregate: lambda builder, node, items, having, needed: lower_view_tree(builder, node, items, having),
    HeavyLightTriangleCount: lambda builder, node, items, having, needed: lower_heavy_light(builder, node, items, having),
}
#: How a join lowers, by its node's class: (builder, node, needed columns) → the emitter of its rows.
_JOINS: dict[type, Callable[[StageBuilder, LogicalPlan, frozenset[Column]], Emitter]] = {
    ForeignKeyJoin: lower_foreign_key_join,
    ChangePropagationJoin: lambda builder, node, needed: lower_change_propagation(builder, node.tree),
    GeneralizedJoinTree: lambda builder, node, needed: lower_generalized_join_tree(builder, node),
    OuterJoin: lower_outer_join,
    FactorizedViewTree: lambda builder, node, needed: lower_factorized_view_tree(builder, node),
}
#: What each join other than a foreign-key join keeps instead of live tuples (a nested aggregate's refusal).
_NOT_LIVE_TUPLES = {ChangePropagationJoin: "a change-propagation join", GeneralizedJoinTree: "a T-representation",
                    OuterJoin: "an outer join's stage", FactorizedViewTree: "a view tree"}
