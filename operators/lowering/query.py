"""Lower a maintenance plan to a dataflow of keyed stages (ARCHITECTURE.md, "keyed stages").

Foreign-key joins (trees and DAGs) lower bottom-up, one stage per edge (Cquirrel's pipeline, no backward
communication): a relation with one child gets a ``ForeignKeyLookupStage`` keyed by its foreign key;
a relation with several children gets one lookup stage per child plus a ``LiveTupleStage`` keyed by
its primary key that counts the children each tuple is alive on. An edge into a view with a
join-select (AJU Theorem 15) gets a ``JoinSelectStage`` in place of the lookup: the tuple is alive
on the view only while its compared column passes the view's value. Leaves need no stage: their tuples
are alive by definition and go straight to their parent's stage; a view atom's rows come from its own
lowered subplan. A DAG is lowered as a tree (a relation reached along k paths gets k copies of its
stages). Change-propagation joins lower to one ``BinaryJoinStage`` per inner node. Above the join sit
the aggregate (keyed by the group, also applying HAVING and the select list) or a stateless map,
then DISTINCT and the top-k; thresholds and set operations join two lowered subqueries.

Departures from STYLE.md's "lower naively, then clean up": the one-child case is emitted fused
directly (lookup stage doing the live test) instead of a LiveTupleStage cleaned up by a later rule,
and an aggregate whose groups live in one key of the join stage is fused into it here.
"""

from __future__ import annotations

import attrs

from catalog.schema import Catalog
from operators.lowering.expr_eval import compile_expr, compile_predicate
from operators.runtime.dataflow import Dataflow, RowRequirement, SourceRoute, StageNode
from operators.stages.aggregate import AggregateSpec, GroupAggregateStage, RingAggregateStage
from operators.stages.base import KeyedStage, StageDescription
from operators.stages.binary_join import BinaryJoinStage
from operators.stages.distinct import DistinctStage
from operators.stages.foreign_key import ForeignKeyLookupStage, LiveTupleStage
from operators.stages.fused import FusedStage
from operators.stages.join_select import JoinSelectStage
from operators.stages.map import MapStage
from operators.stages.product import ProductCombineStage
from operators.stages.set_operation import SetOperationStage
from operators.stages.top_k import TopKStage
from operators.zset import Row
from planner.ir.expressions import AggregateCall, Column, Expr
from planner.ir.fk_graph import assertion_keys
from planner.ir.logical import Filter, LogicalPlan, Project, SetOperation, Sort
from planner.ir.maintenance import (
    Atom,
    BinaryJoin,
    ChangePropagationJoin,
    CountedDistinct,
    CrossProductAggregate,
    FkEdge,
    ForeignKeyJoin,
    GroupAggregate,
    JoinSelect,
    NestedAggregate,
    RingAggregate,
    ThresholdFilter,
    TopK,
    ViewAtom,
)
from planner.ir.notation import print_expr
from planner.ir.outputs import output_columns
from planner.ir.reads import columns_read


class LoweringError(ValueError):
    """The plan holds an operator with no incremental implementation (names it and why)."""


@attrs.define
class StageBuilder:
    """Collects stages (children first) and the routes of base-table rows."""

    catalog: Catalog
    stages: list[KeyedStage] = attrs.field(factory=list)
    downstream: dict[int, tuple[int, int]] = attrs.field(factory=dict)
    sources: list[SourceRoute] = attrs.field(factory=list)
    requirements: list[RowRequirement] = attrs.field(factory=list)

    def add(self, stage: KeyedStage) -> int:
        self.stages.append(stage)
        return len(self.stages) - 1

    def route(self, atom: Atom, columns: tuple[str, ...], stage: int, port: int) -> None:
        table = self.catalog.table(atom.table)
        layout = {Column(atom.alias, c): i for i, c in enumerate(table.column_names)}
        self.sources.append(SourceRoute(
            atom.table, stage, port, tuple(table.column_names.index(c) for c in columns),
            compile_predicate(atom.predicate, layout), _sql(atom.predicate),
        ))


@attrs.frozen
class Emitter:
    """Where an atom's live subtree rows come from: a stage, or (for a leaf) its source.

    ``layout`` is what a parent's rows are extended with; ``rows`` is the layout of the emitted
    rows themselves (they differ for an anti view, which is matched on but adds no columns).
    """

    layout: tuple[Column, ...]
    stage: int | None = None
    leaf: Atom | None = None
    rows: tuple[Column, ...] | None = None
    anti: bool = False
    optional: bool = False

    @property
    def row_layout(self) -> tuple[Column, ...]:
        return self.layout if self.rows is None else self.rows

    def connect(self, builder: StageBuilder, stage: int, port: int) -> None:
        if self.stage is not None:
            builder.downstream[self.stage] = (stage, port)
        else:
            builder.route(self.leaf, self.leaf.columns, stage, port)


def _sql(expr: Expr | None) -> str:
    return "" if expr is None else print_expr(expr)


def _positions(layout: tuple[Column, ...], alias: str, names: tuple[str, ...]) -> tuple[int, ...]:
    return tuple(layout.index(Column(alias, n)) for n in names)


def _kept(child: Emitter, needed: frozenset[Column]) -> tuple[int, ...]:
    """Positions of the child's subtree row its parent is extended with: the columns read above."""
    return tuple(i for i, c in enumerate(child.layout) if c in needed)


def _lower_atom(join: ForeignKeyJoin, alias: str, builder: StageBuilder, needed: frozenset[Column]) -> Emitter:
    """The stages of ``alias``'s subtree. Each parent keeps and passes on only the ``needed`` columns
    of its children's subtree rows (those read above the join or by an assertion check): a live
    tuple then carries what its ancestors use, not every descendant column."""
    atom = join.atom(alias)
    if isinstance(atom, ViewAtom):
        view = lower_query(builder, atom.child)
        # under a join-select the view's value is a pointer, not a column: its rows extend others by the key
        extends = atom.output if join.join_select_into(alias) is None else tuple(Column(alias, k) for k in atom.key)
        return Emitter(extends, stage=view.last, rows=atom.rows, anti=atom.anti, optional=atom.optional)
    edges = join.children_of(alias)
    if not edges:
        return Emitter(atom.output, leaf=atom)
    children = [(edge, _lower_atom(join, edge.referenced, builder, needed)) for edge in edges]
    # a join-select passes on its view's key columns only, and an anti view none: nothing to cut
    kept = [None if child.anti or join.join_select_into(edge.referenced) is not None else _kept(child, needed)
            for edge, child in children]
    appended = [child.layout if keep is None else tuple(child.layout[i] for i in keep)
                for (_, child), keep in zip(children, kept, strict=True)]
    key = builder.catalog.table(atom.table).primary_key
    if len(children) == 1:
        (edge, child), = children
        layout = atom.output + appended[0]
        select = join.join_select_into(edge.referenced)
        if select is not None:
            stage = builder.add(_join_select_stage(atom, atom.output, edge, child, select))
            builder.route(atom, atom.columns, stage, JoinSelectStage.ROWS)
            child.connect(builder, stage, JoinSelectStage.THRESHOLD)
            return Emitter(layout, stage=stage)
        stage = builder.add(ForeignKeyLookupStage(
            f"live {atom.alias} by {','.join(edge.columns)}" + (f" (no {edge.referenced})" if child.anti else ""),
            _positions(atom.output, alias, edge.columns), _positions(child.row_layout, edge.referenced, edge.key),
            tuple(map(str, layout)),
            StageDescription(operator="ForeignKeyLookup (live tuples)", inputs=f"{atom.alias}, live {edge.referenced}",
             state=f"tuples of {atom.table} grouped by {','.join(edge.columns)}; live {edge.referenced} tuple per key",
             key=f"{atom.alias}.{','.join(edge.columns)}",
             update_cost="O(1) per tuple; O(group) when the child turns (non-)live: O(λ) amortized",
             why=f"{atom.alias} has one child ({edge.referenced}): "
                    + (f"{atom.alias} ⟕ {edge.referenced}, alive with its live {edge.referenced} partner or with NULLs"
                       if alias in join.preserved else
                       f"alive iff its {edge.referenced} partner is "
                       + ("absent (NOT EXISTS / NOT IN)" if child.anti else "alive (AJU §3.1)"))),
            anti=child.anti,
            preserve_child_padding=len(atom.output) if edge.referenced in join.preserved else None,
            # R ⟕ S with R referencing S: R's tuples stay alive without an S partner, padded with NULLs
            optional_width=len(appended[0]) if child.optional or alias in join.preserved else None,
            child_columns=kept[0],
        ))
        builder.route(atom, atom.columns, stage, ForeignKeyLookupStage.PARENT)
        child.connect(builder, stage, ForeignKeyLookupStage.CHILD)
        return Emitter(layout, stage=stage)
    layout = atom.output + tuple(c for part in appended for c in part)
    # Each child's index stage sees R's key plus that child's foreign key columns; the index
    # stages come first so that stages stay in topological order.
    # A join-select's index also needs the compared column.
    selects = [join.join_select_into(edge.referenced) for edge, _ in children]
    projections = [tuple(dict.fromkeys(key + edge.columns + ((select.row.name,) if select else ())))
                   for (edge, _), select in zip(children, selects, strict=True)]
    indexes = []
    for (edge, child), projected, select, keep, part in zip(children, projections, selects, kept, appended, strict=True):
        if select is not None:
            index = builder.add(_join_select_stage(atom, tuple(Column(alias, c) for c in projected), edge, child, select))
            builder.route(atom, projected, index, JoinSelectStage.ROWS)
            child.connect(builder, index, JoinSelectStage.THRESHOLD)
            indexes.append(index)
            continue
        index = builder.add(ForeignKeyLookupStage(
            f"index {atom.alias}→{edge.referenced}",
            tuple(projected.index(c) for c in edge.columns), _positions(child.row_layout, edge.referenced, edge.key),
            projected + tuple(map(str, part)),
            StageDescription(operator="ChildIndex I(R, R_c)", inputs=f"{atom.alias} keys, live {edge.referenced}",
             state=f"keys of {atom.table} by {','.join(edge.columns)}; live {edge.referenced} tuple per key",
             key=f"{atom.alias}.{','.join(edge.columns)}",
             update_cost="O(1) per tuple; O(group) when the child turns (non-)live",
             why=f"tells live {atom.alias} tuples which are alive on {edge.referenced} (AJU §3.3)"
                    + (" (alive when it is absent: NOT EXISTS / NOT IN)" if child.anti else "")),
            anti=child.anti,
            optional_width=len(part) if child.optional else None, child_columns=keep,
        ))
        builder.route(atom, projected, index, ForeignKeyLookupStage.PARENT)
        child.connect(builder, index, ForeignKeyLookupStage.CHILD)
        indexes.append(index)
    assertions = _assertion_groups(join, alias, layout, builder)
    live = builder.add(LiveTupleStage(
        f"live {atom.alias}", _positions(atom.output, alias, key), len(key), tuple(map(len, projections)),
        tuple(map(str, layout)),
        StageDescription(operator="LiveTuples (counter s(t))", inputs=f"{atom.alias}, alive-on messages of {len(children)} children",
         state=f"tuples of {atom.table} with s(t) and their children's partners", key=f"{atom.alias}.{','.join(key)}",
         update_cost="O(1) per message",
         why=f"{atom.alias} has {len(children)} children: live when s(t) = |C(R)| = {len(children)} (AJU §3.3, Lemma 4)"
                + (f"; assertion keys: {', '.join(assertion_keys(join.edges)[alias])} must be reached once (AJU §3.2)"
                   if assertions else "")),
        assertions,
    ))
    builder.route(atom, atom.columns, live, 0)
    for port, index in enumerate(indexes, start=1):
        builder.downstream[index] = (live, port)
    return Emitter(layout, stage=live)


def _join_select_stage(atom: Atom, rows: tuple[Column, ...], edge: FkEdge, child: Emitter,
                       select: JoinSelect) -> JoinSelectStage:
    """The lookup of a keyed view that passes a tuple only where ``row θ value`` (AJU Theorem 15, (3))."""
    columns = ",".join(edge.columns)
    return JoinSelectStage(
        f"join-select {atom.alias} by {columns}", compile_expr(select.row, {c: i for i, c in enumerate(rows)}),
        select.op, tuple(map(str, rows + child.layout)),
        StageDescription(operator="join-select (AJU Theorem 15)", inputs=f"{atom.alias}, {edge.referenced} (x2 = {select.value})",
         state=f"per key: tuples of {atom.table} ordered by {select.row.name}; {edge.referenced}'s row, "
                  f"its {select.value.name} a pointer into them",
         key=f"{atom.alias}.{columns}",
         update_cost=f"O(log n) per tuple; O(log n + rows that flip) when {select.value} changes",
         why=f"{select.row} {select.op} {select.value} with {edge.referenced} keyed by the join: a new "
                f"{select.value.name} passes or fails only the tuples between its old and new position, "
                "instead of re-testing every tuple of the key"),
        row_key=tuple(rows.index(Column(atom.alias, c)) for c in edge.columns),
        threshold_key=_positions(child.row_layout, edge.referenced, edge.key),
        threshold_value=child.row_layout.index(select.value),
    )


def _lower_tree(builder: StageBuilder, node: LogicalPlan) -> Emitter:
    """A change-propagation join tree: one materializing binary join stage per inner node."""
    match node:
        case Atom():
            return Emitter(node.output, leaf=node)
        case ViewAtom(anti=False):
            return Emitter(node.output, stage=lower_query(builder, node.child).last)
        case BinaryJoin(on=on, left=left, right=right):
            lhs, rhs = _lower_tree(builder, left), _lower_tree(builder, right)
            layout = lhs.layout + rhs.layout
            keys = ", ".join(f"{a} = {b}" for a, b in on)
            stage = builder.add(BinaryJoinStage(
                f"join on {keys}", tuple(lhs.layout.index(a) for a, _ in on), tuple(rhs.layout.index(b) for _, b in on),
                tuple(map(str, layout)),
                StageDescription(operator="BinaryJoin (change propagation)", inputs="two materialized views",
                 state="both inputs, grouped by the join key (a materialized view each)", key=keys,
                 update_cost="O(matching rows on the other side) per change",
                 why="ΔL ⋈ R + L' ⋈ ΔR over materialized views (AJU §3.5)"),
            ))
            lhs.connect(builder, stage, BinaryJoinStage.LEFT)
            rhs.connect(builder, stage, BinaryJoinStage.RIGHT)
            return Emitter(layout, stage=stage)
    raise LoweringError(f"cannot maintain a {node.node_name} inside a change-propagation join tree")


def _assertion_groups(join: ForeignKeyJoin, alias: str, layout: tuple[Column, ...], builder: StageBuilder):
    """Per assertion key column of ``alias`` (AJU §3.2), its positions in the live row: one per path.

    A DAG is lowered as a tree (a relation reached along k paths gets k copies of its stages), so
    the live row carries a copy of each descendant per path; the copies must agree.
    """
    groups = []
    for descendant in assertion_keys(join.edges).get(alias, ()):
        for column in _key_of(join.atom(descendant), builder.catalog):
            positions = tuple(i for i, c in enumerate(layout) if c == Column(descendant, column))
            if len(positions) > 1:
                groups.append(positions)
    return tuple(groups)


def finish_function(items: tuple, having: Expr | None, layout: tuple[Column, ...]):
    """The select list (and HAVING) over rows of ``layout``, as one closure returning a row or None."""
    index = {c: i for i, c in enumerate(layout)}
    keep = compile_predicate(having, index)
    if items is None:
        project = None
    else:
        project = tuple(compile_expr(item.expr, index) for item in items)

    def finish(row):
        if keep is not None and not keep(row):
            return None
        return row if project is None else tuple(p(row) for p in project)

    return finish


def lower(plan: LogicalPlan, catalog: Catalog) -> Dataflow:
    """The dataflow maintaining ``plan`` (an optimized maintenance plan)."""
    builder = StageBuilder(catalog)
    query = lower_query(builder, plan)
    nodes = tuple(
        StageNode(i, stage, *(builder.downstream.get(i, (None, 0)) if i != query.last else (None, 0)))
        for i, stage in enumerate(builder.stages)
    )
    return Dataflow(nodes, tuple(builder.sources), tuple(c.name for c in query.layout), query.initial, query.order,
                    tuple(builder.requirements))


@attrs.frozen
class LoweredQuery:
    """The stage emitting a (sub)query's result changes, the result's columns, its rows over empty
    input, and its ORDER BY as (position, ascending) pairs."""

    last: int
    layout: tuple[Column, ...]
    initial: tuple[Row, ...]
    order: tuple[tuple[int, bool], ...]


def _key_of(atom: Atom | ViewAtom, catalog: Catalog) -> tuple[str, ...]:
    return atom.key if isinstance(atom, ViewAtom) else catalog.table(atom.table).primary_key


def _read_above_edges(plan: LogicalPlan, catalog: Catalog) -> frozenset[Column]:
    """The columns ``plan`` reads anywhere but in its joins' edges (which the join stages consume),
    plus the keys that assertion checks compare where a DAG's paths meet."""
    read = columns_read(plan, skip=lambda node, field: isinstance(node, ForeignKeyJoin) and field == "edges")
    for join in (node for node in plan.walk() if isinstance(node, ForeignKeyJoin)):
        for descendants in assertion_keys(join.edges).values():
            for descendant in descendants:
                read |= {Column(descendant, k) for k in _key_of(join.atom(descendant), catalog)}
    return frozenset(read)


def lower_query(builder: StageBuilder, plan: LogicalPlan) -> LoweredQuery:
    """Add the stages maintaining ``plan`` (the whole query, or a view's subplan) to ``builder``."""
    needed = _read_above_edges(plan, builder.catalog)
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
    if isinstance(plan, ThresholdFilter):
        last, output_layout = _lower_threshold(builder, plan, items)
        return _finish_query(builder, last, output_layout, (), distinct, top_k, presentation)
    if isinstance(plan, CrossProductAggregate):
        last, output_layout, initial = _lower_cross_product(builder, plan, items)
        return _finish_query(builder, last, output_layout, initial, distinct, top_k, presentation)
    if isinstance(plan, SetOperation) and items is None:
        left, right = lower_query(builder, plan.left), lower_query(builder, plan.right)
        if len(left.layout) != len(right.layout):
            raise LoweringError(f"{plan.kind.upper()} of {len(left.layout)} and {len(right.layout)} columns")
        stage = builder.add(SetOperationStage(plan.kind, tuple(c.name for c in left.layout)))
        builder.downstream[left.last] = (stage, SetOperationStage.LEFT)
        builder.downstream[right.last] = (stage, SetOperationStage.RIGHT)
        return _finish_query(builder, stage, left.layout, (), distinct, top_k, presentation)
    having = None
    if isinstance(plan, Filter) and isinstance(plan.child, RingAggregate | GroupAggregate):
        having, plan = plan.condition, plan.child
    aggregate = nested = None
    if isinstance(plan, RingAggregate | GroupAggregate):
        aggregate, plan = plan, plan.child
    elif isinstance(plan, NestedAggregate):
        nested, plan = plan, plan.child
    if isinstance(plan, ChangePropagationJoin):
        if nested is not None:
            raise LoweringError("a nested aggregate over a change-propagation join is not supported")
        root = _lower_tree(builder, plan.tree)
    elif isinstance(plan, ForeignKeyJoin):
        for node in plan.atoms:
            if not isinstance(node, Atom | ViewAtom):
                raise LoweringError(f"cannot maintain a join over a {node.node_name}")
        root = _lower_atom(plan, plan.root, builder, needed)
    else:
        raise LoweringError(f"cannot maintain a {plan.node_name} here: no incremental operator implements it")
    join_where = compile_predicate(plan.residual, {c: i for i, c in enumerate(root.layout)})
    output_layout: tuple[Column, ...]
    if nested is not None:
        from operators.lowering.nested import lower_nested

        last, output_layout, initial = lower_nested(builder, nested, items, plan, root)
    elif aggregate is not None:
        consumer, output_layout, initial = _lower_aggregate(builder, aggregate, items, having, root.layout, join_where)
        if isinstance(plan, ForeignKeyJoin) and _group_owned_by_stage(builder, root, aggregate, plan):
            consumer = _fuse(builder, root.stage, consumer)
            nested = "fused"  # the root stage already feeds the aggregate: nothing left to connect
    else:
        mapping = finish_function(items, plan.residual, root.layout)
        output_layout = tuple(Column(None, i.name) for i in items) if items is not None else root.layout
        consumer = builder.add(MapStage("project", mapping, tuple(map(str, output_layout)), StageDescription(
            operator="Map (σ, π)", inputs="join results", state="none", key="none (stateless)",
            update_cost="O(1) per result change", why="selection and projection are linear (AJU Thm 14)")))
        initial = ()
    if nested is None:
        root.connect(builder, consumer, 0)
    if nested in (None, "fused"):
        last = consumer
    return _finish_query(builder, last, output_layout, initial, distinct, top_k, presentation)


def _finish_query(builder: StageBuilder, last: int, layout: tuple[Column, ...], initial: tuple, distinct: bool,
                  top_k: TopK | None, presentation: tuple) -> LoweredQuery:
    """DISTINCT and top-k after the query's last stage; the ORDER BY applied when the result is read."""
    if distinct:
        last = _lower_distinct(builder, layout, last)
    if top_k is not None:
        last = _lower_top_k(builder, top_k, layout, last)
    order_keys = presentation or (top_k.keys if top_k is not None else ())
    order = tuple((layout.index(_output_column(k.expr, layout)), k.ascending) for k in order_keys)
    return LoweredQuery(last, layout, initial, order)


def _lower_cross_product(builder: StageBuilder, node: CrossProductAggregate, items):
    """Each relation's one-row aggregate, then their products (see operators/stages/product.py)."""
    parts = [lower_query(builder, part) for part in node.parts]
    agg_layout = output_columns(node)
    layout = tuple(Column(None, i.name) for i in items) if items is not None else agg_layout
    stage = builder.add(ProductCombineStage(
        tuple(tuple(c.name for c in part.layout) for part in parts), tuple(part.initial for part in parts),
        node.funcs, tuple(tuple((t.coefficient, t.factors) for t in terms) for terms in node.sums),
        finish_function(items, None, agg_layout), tuple(c.name for c in layout),
        node.grouped_part, len(node.group_names)))
    for port, part in enumerate(parts):
        builder.downstream[part.last] = (stage, port)
    empty = builder.stages[stage].empty_result()
    return stage, layout, (() if empty is None else (empty,))


def _lower_threshold(builder: StageBuilder, node: ThresholdFilter, items) -> tuple[int, tuple[Column, ...]]:
    """The filtered query and the threshold's query as two branches meeting in a threshold stage."""
    rows = lower_query(builder, node.child)
    threshold = lower_query(builder, node.threshold)
    if len(threshold.layout) != 1:
        raise LoweringError("the threshold subquery must return one column")
    # a join-select whose key x1 is empty: q is Q's one value (AJU Theorem 15 with a constant key)
    stage = builder.add(JoinSelectStage(
        f"threshold {node.op}", compile_expr(node.value, {c: i for i, c in enumerate(rows.layout)}), node.op,
        tuple(c.name for c in rows.layout),
        StageDescription(operator=f"ThresholdFilter ({node.op} q)", inputs="rows; the threshold's one value",
         state="the rows ordered by the compared value; q", key="constant (does not scale out)",
         update_cost="O(log n) per row; O(log n + rows that flip) when q changes",
         why="q is uncorrelated: the rows passing v θ q are a prefix or suffix of the value order "
                "(AJU Theorem 15's join-select with a constant key)"),
        initial_threshold=threshold.initial,
    ))
    builder.downstream[rows.last] = (stage, JoinSelectStage.ROWS)
    builder.downstream[threshold.last] = (stage, JoinSelectStage.THRESHOLD)
    if items is None:
        return stage, rows.layout
    layout = tuple(Column(None, i.name) for i in items)
    project = builder.add(MapStage("project", finish_function(items, None, rows.layout), tuple(c.name for c in layout),
                                   StageDescription(operator="Map (π)", inputs="filtered rows", state="none",
                                                    key="none (stateless)", update_cost="O(1) per change",
                                                    why="projection is linear")))
    builder.downstream[stage] = (project, 0)
    return project, layout


def _group_owned_by_stage(builder: StageBuilder, root: Emitter, aggregate: RingAggregate, join: ForeignKeyJoin) -> bool:
    """Whether every group lives in one key of the root's lookup stage: the group-by holds that key
    (the parent's foreign key, or the equal child key that follows the parent row in the output)."""
    stage = builder.stages[root.stage] if root.stage is not None else None
    if not isinstance(stage, ForeignKeyLookupStage):
        return False
    grouped = {root.layout.index(g.expr) for g in aggregate.group_by if g.expr in root.layout}
    parent_width = len(join.atom(join.root).output)
    kept = stage.child_columns if stage.child_columns is not None else range(len(root.layout) - parent_width)
    if not set(stage.child_key) <= set(kept):
        return set(stage.parent_key) <= grouped  # the child's key is not passed on
    child_positions = tuple(parent_width + kept.index(p) for p in stage.child_key)
    return set(stage.parent_key) <= grouped or set(child_positions) <= grouped


def _fuse(builder: StageBuilder, first: int, second: int) -> int:
    """Replace stage ``first`` by first+second (``second`` must be the last stage added)."""
    assert second == len(builder.stages) - 1
    builder.stages[first] = FusedStage(builder.stages[first], builder.stages.pop())
    return first


def _output_column(expr: Expr, layout: tuple[Column, ...]) -> Column:
    if isinstance(expr, Column) and expr in layout:
        return expr
    if isinstance(expr, Column) and Column(None, expr.name) in layout:
        return Column(None, expr.name)
    raise LoweringError(f"ORDER BY {expr} is not a column of the result; order by an output column instead")


def _lower_aggregate(builder: StageBuilder, aggregate: LogicalPlan, items, having, layout, where):
    """A ``RingAggregate`` or ``GroupAggregate`` as one stage keyed by the group."""
    index = {c: i for i, c in enumerate(layout)}
    group_by = tuple(compile_expr(g.expr, index) for g in aggregate.group_by)
    specs = []
    for item in aggregate.aggregates:
        call: AggregateCall = item.expr
        specs.append(AggregateSpec(call.func, None if call.arg is None else compile_expr(call.arg, index), call.distinct))
    agg_layout = output_columns(aggregate)
    finish = finish_function(items, having, agg_layout)
    output_layout = tuple(Column(None, i.name) for i in items) if items is not None else agg_layout
    stage_class = RingAggregateStage if isinstance(aggregate, RingAggregate) else GroupAggregateStage
    stage = stage_class(tuple(g.name for g in aggregate.group_by), group_by, tuple(specs), finish,
                        tuple(map(str, output_layout)), where=where)
    empty = stage.empty_result()
    return builder.add(stage), output_layout, (() if empty is None else (empty,))


def _lower_distinct(builder: StageBuilder, layout: tuple[Column, ...], upstream: int) -> int:
    stage = builder.add(DistinctStage(tuple(c.name for c in layout)))
    builder.downstream[upstream] = (stage, 0)
    return stage


def _lower_top_k(builder: StageBuilder, top_k: TopK, layout: tuple[Column, ...], upstream: int) -> int:
    index = {c: i for i, c in enumerate(layout)}
    keys = tuple((compile_expr(_output_column(k.expr, layout), index), k.ascending) for k in top_k.keys)
    stage = builder.add(TopKStage(
        f"top {top_k.count}", keys, top_k.count, tuple(c.name for c in layout),
        StageDescription(operator=f"TopK (k={top_k.count})", inputs="result changes", state="the whole result as an ordered multiset",
         key="constant (does not scale out)", update_cost="O(log n + k) per batch",
         why="deleting a top row needs the next one, so all rows are kept in order"),
    ))
    builder.downstream[upstream] = (stage, 0)
    return stage

