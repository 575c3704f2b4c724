"""SQL text → logical plan → maintenance plan → dataflow, keeping every stage for EXPLAIN."""

from __future__ import annotations

import attrs

from catalog.schema import Catalog
from operators.lowering.builder import LoweringError
from operators.lowering.expr_eval import ExpressionError
from operators.lowering.pipeline import lower
from operators.runtime.dataflow import Dataflow
from planner.ir.expressions import contains_subquery
from planner.ir.gjt_maintenance import GeneralizedJoinTree
from planner.ir.heavy_light_plan import HeavyLightTriangleCount
from planner.ir.logical import LogicalPlan
from planner.ir.maintenance import ChangePropagationJoin, ForeignKeyJoin, JoinGraph
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
    if ctx.join_strategy == "view-tree" and (other := _join_not_on_a_view_tree(plan)):
        reasons = "; ".join(f"{rule}: {ctx.refusals[rule]}" for rule in VIEW_TREE_RULES if rule in ctx.refusals)
        raise UnsupportedQueryError(f"cannot maintain this query on a view tree (join strategy forced to view-tree): "
                                    f"its join is left to {other.node_name}; {reasons or 'no view tree rule applies'}")
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


#: The rules that build view trees, whose refusals say why a forced view tree is impossible.
VIEW_TREE_RULES = ("ChooseViewTree", "ChooseFactorizedViewTree")


def _join_not_on_a_view_tree(plan: LogicalPlan) -> LogicalPlan | None:
    """A join of several relations the plan maintains by another strategy (or none), if any."""
    for node in plan.walk():
        match node:
            case ForeignKeyJoin(atoms=atoms) | JoinGraph(atoms=atoms) if len(atoms) > 1:
                return node
            case ChangePropagationJoin() | GeneralizedJoinTree() | HeavyLightTriangleCount():
                return node
    return None


def compile_query(sql: str, catalog: Catalog, strict: bool = False, time_zone: str | None = None, **options) -> CompiledQuery:
    """Parse and plan ``sql``; raises ``UnsupportedSqlError``/``UnsupportedQueryError`` with the reason.

    Options, to compare strategies: ``nested_strategy="general"`` forces RPAI's general algorithm;
    ``join_tree="theorem11"`` (AJU Theorem 11) or a join order such as ``("n", "s", "l")`` maintains
    the join by change propagation over that tree instead of live tuples; ``variable_order=("r.a",
    "s.c")`` forces a view tree's variable order (``rules/view_tree.py``); ``join_strategy="binary"``
    maintains a join by the materializing fallback instead of a generalized join tree or a view tree,
    ``join_strategy="view-tree"`` on a view tree where another strategy would apply (else refused);
    ``heavy_light_epsilon=1.0`` sets the triangle count's ε (``rules/heavy_light.py``; 0.5 by default).
    ``time_zone``: the session time zone (Spark's ``spark.sql.session.timeZone``; UTC by default).
    """
    return compile_plan(sql, parse_sql(sql, catalog, time_zone), catalog, strict, **options)
