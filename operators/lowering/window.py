"""Lower window functions: the query below the windows, a ``WindowStage`` per window, then what reads them.

A window closes a query block the way an aggregate does: ``Filter? / SubqueryAlias? / Project``
layers (the derived table and the outer WHERE of the top-N pattern) above one or more stacked
``MaintainedWindow`` nodes, above the body they number. The body is lowered as a query of its own
(``lower_query``, keeping the columns the windows read); each window adds a stage keyed by its
partition; each layer above becomes a stateless map, an alias only renames the layout.
"""

from __future__ import annotations

from operators.lowering.builder import LoweringError, StageBuilder, finish_function
from operators.lowering.expr_eval import compile_expr
from operators.stages.base import StageDescription
from operators.stages.map import MapStage
from operators.stages.window import WindowFunctionSpec, WindowStage
from planner.ir.expressions import AggregateCall, Call, Column, columns
from planner.ir.logical import Filter, LogicalPlan, NamedExpr, Project, SubqueryAlias
from planner.ir.notation import print_expr
from planner.ir.reads import columns_read
from planner.ir.window import RANKING, WINDOW_COSTS, MaintainedWindow, indexed_running, window_columns

_LAYERS = (Filter, SubqueryAlias, Project, MaintainedWindow)


def is_window_query(plan: LogicalPlan) -> bool:
    """Whether ``plan`` is layers of filters, aliases and projections over a ``MaintainedWindow``."""
    while isinstance(plan, _LAYERS):
        if isinstance(plan, MaintainedWindow):
            return True
        plan = plan.child
    return False


def lower_window_query(builder: StageBuilder, plan: LogicalPlan, items: tuple[NamedExpr, ...] | None):
    """The stages of ``plan`` (``is_window_query``) and the select list ``items`` above it: a ``Body``."""
    layers = []
    while isinstance(plan, _LAYERS) and is_window_query(plan):
        layers.append(plan)
        plan = plan.child
    layer_ids = {id(layer) for layer in layers}
    body = builder.lower(plan, frozenset(columns_read(layers[0], lambda node, field: id(node) not in layer_ids)))
    last, layout = body.last, body.layout
    condition = None  # a WHERE above the windows, applied with the select list that follows it
    for layer in reversed(layers):
        match layer:
            case MaintainedWindow():
                last, layout = _add_stage(builder, _window_stage(layer, layout), last), layout + window_columns(layer.functions)
            case SubqueryAlias(alias=alias):
                layout = tuple(Column(alias, c.name) for c in layout)
            case Filter():
                condition = layer.condition if condition is None else Call("and", (condition, layer.condition))
            case Project(items=projected):
                last, layout = _project(builder, projected, condition, layout, last)
                condition = None
    if items is not None or condition is not None:
        last, layout = _project(builder, items, condition, layout, last)
    return last, layout


def _project(builder: StageBuilder, items: tuple[NamedExpr, ...] | None, condition, layout: tuple[Column, ...],
             last: int) -> tuple[int, tuple[Column, ...]]:
    """A map stage applying ``condition`` then ``items`` (either may be None) to rows of ``layout``."""
    out = layout if items is None else tuple(Column(None, item.name) for item in items)
    what = ", ".join(([f"σ {print_expr(condition)}"] if condition is not None else []) + (["π"] if items is not None else []))
    stage = MapStage("window output", finish_function(items, condition, layout), tuple(map(str, out)), StageDescription(
        operator=f"Map ({what})", inputs="window rows", state="none", key="none (stateless)",
        update_cost="O(1) per change", why="selection and projection over the window's rows are linear"))
    return _add_stage(builder, stage, last), out


def _add_stage(builder: StageBuilder, stage, upstream: int) -> int:
    index = builder.add(stage)
    builder.downstream[upstream] = (index, 0)
    return index


def _window_stage(window: MaintainedWindow, layout: tuple[Column, ...]) -> WindowStage:
    index = {c: i for i, c in enumerate(layout)}
    missing = set().union(*(columns(e) for e in window.partition_by), *(columns(k.expr) for k in window.order_by)) - set(index)
    if missing:
        raise LoweringError(f"the window reads {', '.join(map(str, sorted(missing, key=str)))}, which the query below it does not output")
    functions = tuple(_function_spec(f.expr, window, index) for f in window.functions)
    limit = None
    if window.rank_limit is not None:
        limit = (next(i for i, f in enumerate(window.functions) if f.name == window.ranked), window.rank_limit)
    partition = tuple(print_expr(e) for e in window.partition_by)
    return WindowStage(
        partition, tuple(compile_expr(e, index) for e in window.partition_by),
        tuple((compile_expr(k.expr, index), k.ascending, first) for k, first in zip(window.order_by, window.nulls_first, strict=True)),
        functions, tuple(map(str, layout + window_columns(window.functions))), _describe(window, partition), limit)


def _function_spec(expr, window: MaintainedWindow, index) -> WindowFunctionSpec:
    frame = window.frame
    match expr:
        case Call(op=op) if op in RANKING:
            return WindowFunctionSpec(op)
        case Call(op="ntile", args=(buckets,)):
            return WindowFunctionSpec("ntile", buckets=buckets.value)
        case Call(op=("lag" | "lead") as op, args=(value, offset, default)):
            return WindowFunctionSpec(op, compile_expr(value, index), offset.value, compile_expr(default, index))
        case AggregateCall(func=func, arg=arg):
            argument = None if arg is None else compile_expr(arg, index)
            running = frame.unit != "partition" and frame.preceding is None
            return WindowFunctionSpec(func, argument, frame=frame.unit, preceding=frame.preceding,
                                      indexed=running and indexed_running(expr))
    raise LoweringError(f"no window stage computes {print_expr(expr)}")


def _describe(window: MaintainedWindow, partition: tuple[str, ...]) -> StageDescription:
    names = ", ".join(dict.fromkeys(print_expr(f.expr).split("(")[0].upper() for f in window.functions))
    bound = f", rank ≤ {window.rank_limit}" if window.rank_limit is not None else ""
    state = "per partition: its rows in window order (a sorted list)"
    if any(isinstance(f.expr, Call) and f.expr.op == "dense_rank" for f in window.functions):
        state += " and its distinct ORDER BY values"
    ties = ""
    if _order_sensitive(window):
        ties = ("; ties in ORDER BY are broken by the whole row (NULLs first), where Spark leaves the order of "
                "peers unspecified: ROW_NUMBER, NTILE, LAG/LEAD and ROWS frames over peers may differ from a Spark run")
    return StageDescription(
        operator=f"MaintainedWindow[{window.strategy}] ({names}{bound})", inputs="rows of the query below", state=state,
        key=", ".join(partition) or "constant (does not scale out)", update_cost=WINDOW_COSTS[window.strategy],
        why="a change alters only a run of rows around it in window order: that run is re-read after and before "
            f"the change and only rows whose values differ are emitted{ties}")


def _order_sensitive(window: MaintainedWindow) -> bool:
    """Whether a function's values depend on the order among peers (so on how ties are broken)."""
    for function in window.functions:
        match function.expr:
            case Call(op="row_number" | "ntile" | "lag" | "lead"):
                return True
            case AggregateCall() if window.frame.unit == "rows":
                return True
    return False
