"""Lower one window function specification to a ``WindowStage`` keyed by its partition, described
with its strategy's cost (the layers around the windows: ``layers.py``).
"""

from __future__ import annotations

from operators.lowering.builder import LoweringError
from operators.lowering.expr_eval import compile_expr
from operators.stages.base import StageDescription
from operators.stages.window import WindowFunctionSpec, WindowStage
from planner.ir.expressions import AggregateCall, Call, Column, columns
from planner.ir.notation import print_expr
from planner.ir.window import RANKING, WINDOW_COSTS, MaintainedWindow, indexed_running, window_columns


def window_stage(window: MaintainedWindow, layout: tuple[Column, ...]) -> WindowStage:
    """The stage maintaining ``window`` over rows of ``layout``, keyed by its partition."""
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
