"""Window functions of a SELECT list → ``Window`` nodes under the select list (planner/ir/window.py).

Spark's analyzer does the same (``ExtractWindowExpressions``): every ``f(...) OVER (...)`` of the
select list is computed by a ``Window`` operator below the projection, one per window
specification, and the select list reads each one as a column (``_w0``, ``_w1``...). The rules
enforced here are Spark's: ranking and offset functions need an ORDER BY and take no frame; an
aggregate without ORDER BY ranges over the whole partition, with ORDER BY by default over RANGE
BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW (peers share a value).
"""

from __future__ import annotations

from sqlglot import exp

from catalog.types import INT, NULL
from planner.ir.expressions import Call, Column, Expr, Literal, type_of
from planner.ir.logical import LogicalPlan, NamedExpr, SortKey
from planner.ir.window import Window, WindowFrame
from planner.sql.errors import UnsupportedSqlError
from planner.sql.expressions import ExpressionConverter
from planner.sql.typing import cast

_RANKING: dict[type[exp.Expression], str] = {exp.RowNumber: "row_number", exp.Rank: "rank", exp.DenseRank: "dense_rank"}
_BUCKETS: dict[type[exp.Expression], str] = {exp.Ntile: "ntile"}
_OFFSETS: dict[type[exp.Expression], str] = {exp.Lag: "lag", exp.Lead: "lead"}
_WINDOW_AGGREGATES = ("sum", "count", "avg", "min", "max")


def window_calls(select: exp.Select) -> list[exp.Window]:
    """The ``OVER`` expressions of ``select``'s own select list (not of its subqueries)."""
    return [node for item in select.expressions for node in item.find_all(exp.Window)
            if node.find_ancestor(exp.Select) is select]


def plan_windows(select: exp.Select, plan: LogicalPlan, over: ExpressionConverter) -> tuple[LogicalPlan, dict[str, Column]]:
    """``plan`` under a ``Window`` per window specification of the select list, and the column each
    window expression reads as (keyed by its Spark SQL text)."""
    specs: dict[tuple, list[NamedExpr]] = {}
    columns: dict[str, Column] = {}
    for node in window_calls(select):
        text = node.sql(dialect="spark")
        if text in columns:
            continue
        if node.args.get("alias"):
            raise UnsupportedSqlError(f"named windows (WINDOW w AS ...) are not supported: {text}")
        partition = tuple(over.convert(p) for p in node.args.get("partition_by") or ())
        order_node = node.args.get("order")
        ordered = tuple(order_node.expressions) if order_node else ()
        order = tuple(SortKey(over.convert(o.this), not o.args.get("desc")) for o in ordered)
        nulls_first = tuple(bool(o.args.get("nulls_first")) for o in ordered)
        function = _function(node, over, bool(order))
        frame = _frame(node, function, bool(order))
        name = f"_w{len(columns)}"
        specs.setdefault((partition, order, nulls_first, frame), []).append(NamedExpr(name, function))
        columns[text] = Column(None, name, function.dtype)
    for (partition, order, nulls_first, frame), functions in specs.items():
        plan = Window(partition, order, nulls_first, frame, tuple(functions), plan)
    return plan, columns


def _function(node: exp.Window, over: ExpressionConverter, ordered: bool) -> Expr:
    """The IR of the function a window computes, typed as Spark types it."""
    text = node.sql(dialect="spark")
    function = node.this
    if isinstance(function, exp.Filter):
        raise UnsupportedSqlError(f"an aggregate with FILTER (WHERE ...) in a window is not supported: {text}")
    if isinstance(function, exp.IgnoreNulls | exp.RespectNulls):
        raise UnsupportedSqlError(f"IGNORE NULLS / RESPECT NULLS in a window function is not supported: {text}")
    name = _RANKING.get(type(function)) or _BUCKETS.get(type(function)) or _OFFSETS.get(type(function))
    if name is not None and not ordered:
        # Spark: "Window function row_number() requires window to be ordered"
        raise UnsupportedSqlError(f"window function {name}() requires the window to be ordered (ORDER BY), as in Spark: {text}")
    if type(function) in _RANKING:
        return Call(name, (), INT)
    if type(function) in _BUCKETS:
        return _ntile(function, text)
    if type(function) in _OFFSETS:
        return _offset(name, function, over, text)
    unsupported = UnsupportedSqlError(
        f"window function {function.key} is not supported: only ROW_NUMBER, RANK, DENSE_RANK, NTILE, LAG, LEAD and "
        f"SUM/COUNT/AVG/MIN/MAX OVER (...) are: {text}")
    try:
        converted = over.convert(function)
    except UnsupportedSqlError as err:
        raise unsupported from err
    if getattr(converted, "func", None) not in _WINDOW_AGGREGATES:
        raise unsupported
    if converted.distinct:
        # Spark: "DISTINCT window functions are not supported"
        raise UnsupportedSqlError(f"DISTINCT window functions are not supported (nor in Spark): {text}")
    return converted


def _ntile(function: exp.Ntile, text: str) -> Expr:
    """``ntile(n)``: the bucket count a positive INT constant (Spark: "Buckets expression must be
    foldable / positive"; ``ntile()`` is Spark's ``ntile(1)``); non-literal constants are refused."""
    buckets = function.this
    if buckets is None:
        return Call("ntile", (Literal(1, INT),), INT)
    if not (isinstance(buckets, exp.Literal) and buckets.is_int and 0 < int(buckets.this) <= 2**31 - 1):
        raise UnsupportedSqlError(f"ntile: the number of buckets must be a positive integer constant (as in Spark): {text}")
    return Call("ntile", (Literal(int(buckets.this), INT),), INT)


def _offset(name: str, function: exp.Expression, over: ExpressionConverter, text: str) -> Expr:
    """``lag(x[, offset[, default]])``: the offset a positive integer constant, the default cast to x's type."""
    value = over.convert(function.this)
    offset_node = function.args.get("offset")
    offset = 1
    if offset_node is not None:
        if not (isinstance(offset_node, exp.Literal) and offset_node.is_int and int(offset_node.this) > 0):
            raise UnsupportedSqlError(f"{name}: the offset must be a positive integer constant: {text}")
        offset = int(offset_node.this)
    default_node = function.args.get("default")
    default = over.convert(default_node) if default_node is not None else Literal(None, NULL)
    value_type = type_of(value)
    if value_type is not None and type_of(default) not in (value_type, NULL, None):
        default = cast(default, value_type, f"the default of {name}")
    return Call(name, (value, Literal(offset, INT), default), value_type)


def _frame(node: exp.Window, function: Expr, ordered: bool) -> WindowFrame:
    """The frame an aggregate ranges over (``WindowFrame``); ranking and offset functions take none."""
    spec = node.args.get("spec")
    text = node.sql(dialect="spark")
    if not isinstance(function, Call) or function.op not in (*_RANKING.values(), *_BUCKETS.values(), *_OFFSETS.values()):
        if spec is None:
            return WindowFrame("range") if ordered else WindowFrame("partition")
        return _explicit_frame(spec, ordered, text)
    if spec is not None:
        # Spark: "Cannot specify window frame for row_number function"
        raise UnsupportedSqlError(f"a window frame cannot be given to {function.op}() (as in Spark): {text}")
    return WindowFrame("rows")


def _explicit_frame(spec: exp.WindowSpec, ordered: bool, text: str) -> WindowFrame:
    """ROWS/RANGE BETWEEN UNBOUNDED PRECEDING (or ROWS n PRECEDING) AND CURRENT ROW, or the whole
    partition (UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING); anything else is refused."""
    unit = spec.args.get("kind", "").lower()
    start, side = str(spec.args.get("start") or "").upper(), str(spec.args.get("start_side") or "").lower()
    end = str(spec.args.get("end") or "CURRENT ROW").upper()
    end_side = str(spec.args.get("end_side") or "").lower()
    if start == "UNBOUNDED" and side == "preceding" and end == "UNBOUNDED" and end_side == "following":
        return WindowFrame("partition")
    if ordered and end == "CURRENT ROW" and side == "preceding":
        if start == "UNBOUNDED" and unit in ("rows", "range"):
            return WindowFrame(unit)
        preceding = spec.args.get("start")
        if unit == "rows" and isinstance(preceding, exp.Literal) and preceding.is_int:
            return WindowFrame("rows", int(preceding.this))
    raise UnsupportedSqlError(
        "window frame not supported: only ROWS/RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW, "
        "ROWS BETWEEN n PRECEDING AND CURRENT ROW (with ORDER BY) and UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING "
        f"are: {text}")
