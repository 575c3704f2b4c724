"""EXPLAIN's section on window functions: each window's strategy and what one change costs.

The headline ("Strategy:") speaks of the join below the windows; a window sits above it and has a
cost of its own, which depends on its functions and on the top-N bound (planner/ir/window.py).
"""

from __future__ import annotations

from planner.compiler import CompiledQuery
from planner.ir.notation import print_expr
from planner.ir.window import WINDOW_COSTS, MaintainedWindow


def windows_json(compiled: CompiledQuery) -> list[dict]:
    """Per maintained window, outermost first: its functions, specification, strategy and cost."""
    found = []
    for node in compiled.plan.walk():
        if isinstance(node, MaintainedWindow):
            found.append({
                "strategy": node.strategy,
                "functions": [print_expr(f.expr) for f in node.functions],
                "partition_by": [print_expr(e) for e in node.partition_by],
                "order_by": [f"{print_expr(k.expr)} {'ASC' if k.ascending else 'DESC'} NULLS {'FIRST' if first else 'LAST'}"
                             for k, first in zip(node.order_by, node.nulls_first, strict=True)],
                "rank_limit": node.rank_limit,
                "update_cost": WINDOW_COSTS[node.strategy],
            })
    return found


def windows_text(compiled: CompiledQuery) -> list[str]:
    """One ``Window:`` line per maintained window."""
    lines = []
    for window in windows_json(compiled):
        over = " ".join(part for part in (
            f"PARTITION BY {', '.join(window['partition_by'])}" if window["partition_by"] else "",
            f"ORDER BY {', '.join(window['order_by'])}" if window["order_by"] else "") if part)
        bound = f" (top {window['rank_limit']} per partition)" if window["rank_limit"] is not None else ""
        lines.append(f"Window: {', '.join(window['functions'])} OVER ({over}): {window['strategy']}{bound}, "
                     f"{window['update_cost']}")
    return lines
