"""Window functions: the logical ``Window`` node and the ``MaintainedWindow`` node that maintains it.

``Window`` is Spark's logical operator of the same name: the child's rows, each extended by the
values of ``functions``, all evaluated over one window specification (PARTITION BY, ORDER BY and
frame); a select list with several specifications stacks several nodes. A function is an IR
expression: ``row_number()``, ``rank()``, ``dense_rank()`` as ``Call``s without arguments,
``lag(x, offset, default)`` / ``lead(...)`` as ``Call``s, and SUM/COUNT/AVG/MIN/MAX as
``AggregateCall``s over the frame.

``MaintainedWindow`` (rules/window.py) is the same specification maintained per partition on an
ordered index of the partition's rows (operators/stages/window.py). ``strategy`` names what one
change costs (``WINDOW_COSTS``); ``rank_limit`` is the top-N pattern's bound: only rows whose value
of the ranking function ``ranked`` is at most ``rank_limit`` leave the stage, so a change costs
O(log n + rows entering, leaving or re-ranked within the top N).
"""

from __future__ import annotations

import functools

import attrs

from catalog.types import DOUBLE
from planner.ir.expressions import AggregateCall, Call, Column, Expr, type_of
from planner.ir.guarantee import Guarantee
from planner.ir.logical import LogicalPlan, NamedExpr, SortKey
from planner.ir.notation import notation_value

RANKING = ("row_number", "rank", "dense_rank")
OFFSETS = ("lag", "lead")

#: What one change of a partition costs, per strategy (EXPLAIN's words; n: rows of the partition).
WINDOW_COSTS = {
    "top_n": "O(log n + rows entering, leaving or re-ranked within the top N) per change",
    "ranked": "O(log n + rank values that change) per change: O(partition) when a row enters near the front",
    "offset": "O(log n + offset) per change: the rows whose neighbour at that offset changes",
    "moving": "O(log n + frame length²) per change: the rows whose bounded frame holds the change",
    "running": "O(log n + rows whose running value changes) per change: the aggregate up to the change is read "
               "off a prefix-aggregate index (a treap with subtree sums); every later row's value may change",
    "running_scan": "O(partition) per change: a DOUBLE sum's prefix is re-read from the partition's first row "
                    "(float subtree sums would depend on the index's shape)",
    "partition_aggregate": "O(partition) per change: the aggregate is re-read, and every row of the partition "
                           "carries it",
}


@notation_value
@attrs.frozen
class WindowFrame:
    """The frame of an aggregate window function, ending at the current row.

    ``unit``: ``partition`` (no ORDER BY: every row of the partition), ``range`` (the rows up to the
    current row's last peer: Spark's default with ORDER BY) or ``rows`` (up to the current row
    itself). ``preceding``: how many rows before the current one the frame starts (``rows`` only);
    None is UNBOUNDED PRECEDING. Ranking and offset functions ignore it."""

    unit: str
    preceding: int | None = None


@attrs.frozen
class Window(LogicalPlan):
    """The child's rows with the values of ``functions`` over one window specification appended."""

    child_fields = ("child",)
    partition_by: tuple[Expr, ...]
    order_by: tuple[SortKey, ...]
    #: per ORDER BY key: whether NULLs sort first (Spark's default: first ascending, last descending)
    nulls_first: tuple[bool, ...]
    frame: WindowFrame
    functions: tuple[NamedExpr, ...]
    child: LogicalPlan

    @functools.cached_property
    def output(self) -> tuple[Column, ...]:
        return self.child.output + window_columns(self.functions)


@attrs.frozen
class MaintainedWindow(LogicalPlan):
    """A ``Window`` maintained per partition on an ordered index of its rows (module docstring)."""

    child_fields = ("child",)
    variant_field = "strategy"
    maintained = True
    strategy: str
    partition_by: tuple[Expr, ...]
    order_by: tuple[SortKey, ...]
    #: per ORDER BY key: whether NULLs sort first (Spark's default: first ascending, last descending)
    nulls_first: tuple[bool, ...]
    frame: WindowFrame
    functions: tuple[NamedExpr, ...]
    child: LogicalPlan
    #: the top-N bound: rows whose ``ranked`` function value exceeds it are not emitted
    rank_limit: int | None = None
    ranked: str | None = None

    @functools.cached_property
    def output(self) -> tuple[Column, ...]:
        return self.child.output + window_columns(self.functions)

    def own_guarantee(self) -> Guarantee:
        return Guarantee.stated(f"window ({self.strategy.replace('_', ' ')})", cost=WINDOW_COSTS[self.strategy])


def window_columns(functions: tuple[NamedExpr, ...]) -> tuple[Column, ...]:
    """The columns a window adds to its child's, in order (typed as the functions are)."""
    return tuple(Column(None, f.name, f.expr.dtype) for f in functions)


def function_name(expr: Expr) -> str:
    """``row_number``, ``lag``, ``sum``...: what a window function computes."""
    match expr:
        case Call(op=op) | AggregateCall(func=op):
            return op
    raise TypeError(f"not a window function: {expr}")


def indexed_running(expr: Expr) -> bool:
    """Whether a running aggregate can be read off a prefix-aggregate index: its subtree sums are
    exact (MIN/MAX/COUNT, or a SUM/AVG of an exact type; not of a DOUBLE, whose sums depend on the
    order they are added in)."""
    return isinstance(expr, AggregateCall) and (
        expr.func in ("min", "max", "count") or type_of(expr.arg) not in (DOUBLE, None))


def strategy_of(functions: tuple[NamedExpr, ...], frame: WindowFrame, rank_limit: int | None) -> str:
    """The costliest strategy among the functions of one window (``WINDOW_COSTS``)."""
    names = [function_name(f.expr) for f in functions]
    aggregates = any(name not in RANKING + OFFSETS for name in names)
    if aggregates and frame.unit == "partition":
        return "partition_aggregate"
    if aggregates and frame.preceding is None:
        exact = all(indexed_running(f.expr) for f in functions if function_name(f.expr) not in RANKING + OFFSETS)
        return "running" if exact else "running_scan"
    if any(name in RANKING for name in names):
        return "top_n" if rank_limit is not None else "ranked"
    return "moving" if aggregates else "offset"
