"""``QUALIFY``: a query block's window results filtered, planned as the block in a derived table with
the filter outside it, the form the planner maintains (a window's rows filtered, the top-N pattern).

Spark 4 evaluates ``QUALIFY`` after the block's windows and before its ``DISTINCT``, ``ORDER BY`` and
``LIMIT`` (like ``HAVING`` after ``GROUP BY``). Written as SQL:

    SELECT c, o, ROW_NUMBER() OVER (PARTITION BY c ORDER BY d DESC) AS r FROM t QUALIFY r = 1
    = SELECT c, o, r FROM (SELECT c, o, ROW_NUMBER() OVER (...) AS r FROM t) _qualified WHERE r = 1

Law: σ_q(π_{items}(R)) = π_{items}(σ_q'(π_{items, h}(R))), where ``h`` are the window calls and the
other row values ``q`` reads that the select list does not already name (hidden columns
``_qualify<i>``) and ``q'`` is ``q`` reading them by name. The hidden columns are computed by the
inner block over the same rows, so every row keeps its values; the outer block drops them.
``DISTINCT``, ``ORDER BY`` and ``LIMIT`` move to the outer block (they come after ``QUALIFY``); an
ORDER BY key that is not an output column is a hidden column too.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from planner.ir.logical import LogicalPlan
from planner.sql.errors import UnsupportedSqlError
from planner.sql.grouped_windows import names_output
from planner.sql.scope import output_names
from planner.sql.windows import window_calls

_ALIAS = "_qualified"
_HIDDEN = "_qualify"
#: clauses of the block that are evaluated after QUALIFY, so they move to the outer block
_AFTER_QUALIFY = ("distinct", "order", "limit")


def qualify_as_filter(select: exp.Select, plan_block: Callable[[exp.Select], LogicalPlan]) -> exp.Select:
    """``select`` (which has a QUALIFY clause) rewritten by the law above; ``plan_block`` plans the
    inner block, whose output column names the outer block selects."""
    if not window_calls(select) and not select.args["qualify"].find(exp.Window):
        raise UnsupportedSqlError("QUALIFY without a window function is refused, as Spark does: "
                                  "[QUALIFY_REQUIRES_WINDOW_FUNCTION] the QUALIFY clause requires at least one window "
                                  "function in the SELECT list or the QUALIFY condition")
    inner = select.copy()
    for clause in ("qualify", *_AFTER_QUALIFY):
        inner.set(clause, None)
    hidden = _Hidden(inner)
    visible = [name for name in output_names(plan_block(inner.copy())) if not name.startswith(_HIDDEN)]
    repeated = sorted({name for name in visible if visible.count(name) > 1})
    if repeated:
        raise UnsupportedSqlError(f"QUALIFY over a select list that repeats the column name {', '.join(repeated)}: "
                                  "give each column its own alias")
    condition = _read_by_name(select.args["qualify"].this.copy(), visible, hidden)
    outer = exp.Select(
        expressions=[exp.column(name) for name in visible],
        from_=exp.From(this=exp.Subquery(this=hidden.select, alias=exp.TableAlias(this=exp.to_identifier(_ALIAS)))),
        where=exp.Where(this=condition),
    )
    for clause in _AFTER_QUALIFY:
        if select.args.get(clause):
            outer.set(clause, select.args[clause].copy())
    if order := outer.args.get("order"):
        for ordered in order.expressions:
            if not names_output(ordered.this, visible):
                ordered.set("this", hidden.column(ordered.this))
    return outer


class _Hidden:
    """The inner block, growing a hidden column per value the outer block reads that it does not name."""

    def __init__(self, select: exp.Select):
        self.select = select
        self.columns: dict[str, str] = {}  # a value's Spark SQL text → its hidden column

    def column(self, value: exp.Expression) -> exp.Column:
        text = value.sql(dialect="spark")
        if text not in self.columns:
            self.columns[text] = f"{_HIDDEN}{len(self.columns)}"
            self.select.append("expressions", exp.alias_(value.copy(), self.columns[text]))
        return exp.column(self.columns[text])


def _read_by_name(condition: exp.Expression, visible: list[str], hidden: _Hidden) -> exp.Expression:
    """``condition`` with each window call, and each column that is not an output name, read from
    the inner block (windows first: their arguments stay inside them)."""
    def lifted(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Window):
            return hidden.column(node)
        if isinstance(node, exp.Column) and not names_output(node, visible):
            return hidden.column(node)
        return node

    if isinstance(condition, exp.Window | exp.Column):
        return lifted(condition)
    return condition.transform(lifted, copy=False)

