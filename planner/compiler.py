"""SQL text → logical plan → maintenance plan → dataflow, keeping every stage for EXPLAIN."""

from __future__ import annotations

import attrs

from catalog.schema import Catalog
from operators.lowering.builder import LoweringError
from operators.lowering.expr_eval import ExpressionError
from operators.lowering.pipeline import lower
from operators.runtime.dataflow import Dataflow
from planner.ir.expressions import contains_subquery
from planner.ir.logical import LogicalPlan
from planner.optimizer.batches import optimize
from planner.optimizer.context import OptimizerContext
from planner.optimizer.executor import PlanTrace
from planner.optimizer.unsupported import why_unsupported
from planner.sql.statements import parse_sql


class UnsupportedQueryError(ValueError):
    """The query has no maintenance plan yet; the message says which operator and why."""


@attrs.frozen
class CompiledQuery:
    sql: str
    logical: LogicalPlan
    plan: LogicalPlan
    trace: PlanTrace
    context: OptimizerContext
    dataflow: Dataflow


def compile_plan(sql: str, logical: LogicalPlan, catalog: Catalog, strict: bool = False, **options) -> CompiledQuery:
    """``options`` are ``OptimizerContext`` settings: ``nested_strategy``, ``join_tree``, ``variable_order``,
    ``join_strategy``, ``heavy_light_epsilon``."""
    ctx = OptimizerContext(catalog, **options)
    plan, trace = optimize(logical, ctx, strict=strict)
    if any(contains_subquery(e) for node in plan.walk() for e in node.expressions()):
        raise UnsupportedQueryError(f"cannot maintain this query: {why_unsupported(plan, ctx)}")
    try:
        dataflow = lower(plan, catalog)
    except ExpressionError as err:
        raise UnsupportedQueryError(f"cannot maintain this query: {err}") from err
    except LoweringError as err:
        # an operator no rule maintained explains more than the lowering, which only met its effect
        raise UnsupportedQueryError(f"cannot maintain this query: {why_unsupported(plan, ctx) or err}") from err
    return CompiledQuery(sql, logical, plan, trace, ctx, dataflow)


def compile_query(sql: str, catalog: Catalog, strict: bool = False, **options) -> CompiledQuery:
    """Parse and plan ``sql``; raises ``UnsupportedSqlError``/``UnsupportedQueryError`` with the reason.

    Options, to compare strategies: ``nested_strategy="general"`` forces RPAI's general algorithm;
    ``join_tree="theorem11"`` (AJU Theorem 11) or a join order such as ``("n", "s", "l")`` maintains
    the join by change propagation over that tree instead of live tuples; ``variable_order=("r.a",
    "s.c")`` forces a view tree's variable order (``rules/view_tree.py``); ``join_strategy="binary"``
    maintains an inequality join by the materializing fallback instead of a generalized join tree;
    ``heavy_light_epsilon=1.0`` sets the triangle count's ε (``rules/heavy_light.py``; 0.5 by default).
    """
    return compile_plan(sql, parse_sql(sql, catalog), catalog, strict, **options)
