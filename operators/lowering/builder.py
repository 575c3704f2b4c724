"""The dataflow under construction, shared by every lowering module.

``StageBuilder`` collects the stages (children first, so ids are a topological order), where each
stage sends its output and the routes of base-table rows. It also carries the one recursive entry,
``lower``, that lowers a subplan (a view, a set operation's side, a fed subquery): the modules that
lower a join or a nested aggregate call it instead of importing the query lowering, so
``operators/lowering`` has no import cycle. ``pipeline.py`` builds it and hands it that entry.

Naive lowering leaves notes for the clean-up steps that follow it: ``FusionCandidate`` is what
``fuse.py`` needs to decide whether an aggregate can live inside the join stage feeding it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import attrs

from catalog.schema import Catalog
from operators.held_errors import ErrorRow
from operators.lowering.expr_eval import compile_expr, compile_predicate
from operators.runtime.dataflow import RowRequirement, SourceRoute
from operators.stages.base import KeyedStage, key_getter
from operators.stages.scalar import OneRowStage
from operators.zset import Row
from planner.ir.cross_product import CrossProductAggregate
from planner.ir.expressions import Column, Expr
from planner.ir.logical import Filter, LogicalPlan, Project, Sort
from planner.ir.maintenance import (
    Atom,
    CountedDistinct,
    GroupAggregate,
    NestedAggregate,
    RingAggregate,
)
from planner.ir.notation import print_expr
from planner.ir.values import SqlRuntimeError


class LoweringError(ValueError):
    """The plan holds an operator with no incremental implementation (names it and why)."""


@attrs.frozen
class LoweredQuery:
    """The stage emitting a (sub)query's result changes, the result's columns, and its ORDER BY as
    (position, ascending) pairs."""

    last: int
    layout: tuple[Column, ...]
    order: tuple[tuple[int, bool], ...]
    #: Trailing columns of the layout that only sort the result (dropped when it is read).
    hidden: int = 0


@attrs.frozen
class FusionCandidate:
    """An aggregate stage fed directly by a foreign-key join's root stage, with the facts of the
    plan that fusion needs and the stages do not keep: which positions of the join row the groups
    are made of, and how wide the parent's part of that row is."""

    join: int
    aggregate: int
    grouped: frozenset[int]
    parent_width: int
    join_width: int


@attrs.define
class StageBuilder:
    """Collects stages (children first) and the routes of base-table rows."""

    catalog: Catalog
    #: Lowers a subplan into this builder (the query lowering, given by pipeline.py).
    lower_subplan: Callable[[StageBuilder, LogicalPlan, frozenset[Column]], LoweredQuery]
    stages: list[KeyedStage] = attrs.field(factory=list)
    downstream: dict[int, tuple[int, int]] = attrs.field(factory=dict)
    sources: list[SourceRoute] = attrs.field(factory=list)
    requirements: list[RowRequirement] = attrs.field(factory=list)
    fusion_candidates: list[FusionCandidate] = attrs.field(factory=list)
    #: Stages that can enumerate their whole result from their state (a GJT's T-representation), so
    #: the view need not keep it (``pipeline.py`` decides whether the query's result can be read so).
    enumerating: set[int] = attrs.field(factory=set)

    def add(self, stage: KeyedStage) -> int:
        self.stages.append(stage)
        return len(self.stages) - 1

    def lower(self, plan: LogicalPlan, read_above: frozenset[Column] = frozenset()) -> LoweredQuery:
        """Add the stages maintaining the subplan ``plan``; ``read_above``: columns of its result the
        operator above it reads too."""
        return self.lower_subplan(self, plan, read_above)

    def lower_scalar(self, plan: LogicalPlan, name: str) -> LoweredQuery:
        """Add the stages of an uncorrelated scalar subquery: a one-row view. Unless its plan is a
        global aggregate (one row by construction), a ``OneRowStage`` after it raises Spark's error
        when more than one row remains, so the stages reading the value never see two."""
        lowered = self.lower(plan)
        if len(lowered.layout) != 1:
            raise LoweringError(f"the scalar subquery {name} returns {len(lowered.layout)} columns; it must return one")
        if at_most_one_row(plan):
            return lowered
        stage = self.add(OneRowStage(name, tuple(c.name for c in lowered.layout)))
        self.downstream[lowered.last] = (stage, 0)
        return attrs.evolve(lowered, last=stage)

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


def at_most_one_row(plan: LogicalPlan) -> bool:
    """Whether ``plan`` returns at most one row whatever the data: a global aggregate (and what only
    filters, projects or orders it)."""
    while isinstance(plan, Sort | Project | CountedDistinct | Filter):
        plan = plan.child
    match plan:
        case RingAggregate(group_by=()) | GroupAggregate(group_by=()) | NestedAggregate(group_by=()):
            return True
        case CrossProductAggregate(group_names=()):
            return True
    return False


def _sql(expr: Expr | None) -> str:
    return "" if expr is None else print_expr(expr)


def positions(layout: tuple[Column, ...], alias: str, names: tuple[str, ...]) -> tuple[int, ...]:
    """Where ``alias``'s columns ``names`` sit in rows of ``layout``."""
    return tuple(layout.index(Column(alias, n)) for n in names)


def finish_function(items: tuple | None, having: Expr | None, layout: tuple[Column, ...], hold: bool = False):
    """The select list (and HAVING) over rows of ``layout``, as one closure returning a row or None.
    ``hold``: over a row computed from a stage's state (a group's aggregates), Spark's run-time error
    gives an ``ErrorRow`` instead of raising (``hold_errors``)."""
    return finish_function_at(items, having, {c: i for i, c in enumerate(layout)}, hold)


def finish_function_at(items: tuple | None, having: Expr | None, index: Mapping[Column, int], hold: bool = False):
    """``finish_function`` over rows where ``index`` says each column's position (several columns
    may share one: the variable columns made equal stand for)."""
    keep = compile_predicate(having, index)
    parts = ()
    if items is None:
        project = None
    elif all(isinstance(item.expr, Column) and item.expr in index for item in items):
        # bare columns (a join's select list, the GJT's columns of variables): one C call per row,
        # not a Python call per column (it was most of a push-mode IEDyn run's time)
        project = key_getter(tuple(index[item.expr] for item in items))
    else:
        parts = tuple(compile_expr(item.expr, index) for item in items)

        def project(row):
            return tuple([p(row) for p in parts])

    if keep is None and project is not None:
        return hold_errors(project) if hold and parts else project

    def finish(row):
        if keep is not None and not keep(row):
            return None
        return row if project is None else project(row)

    return hold_errors(finish) if hold and (keep is not None or parts) else finish


def hold_errors(function: Callable[[Row], Row | None]) -> Callable[[Row], Row | None]:
    """``function`` giving an ``ErrorRow`` where it raises Spark's run-time error (operators/held_errors.py
    says why a row computed from a stage's state holds its error instead of failing the batch)."""

    def held(row: Row) -> Row | None:
        try:
            return function(row)
        except SqlRuntimeError as error:
            return ErrorRow(error.error_class, str(error).removeprefix(f"[{error.error_class}] "))

    return held
