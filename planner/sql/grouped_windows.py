"""Window functions over a grouped query block, planned as the block's aggregate in a derived table
with the windows applied outside it, the form the planner maintains (a window over a grouped view).

Spark evaluates a grouped block's windows over its aggregated rows: the analyzer
(``ExtractWindowExpressions``) moves every grouping expression and aggregate the select list reads
into the ``Aggregate`` and puts the ``Window`` and the rest of the select list above it. This is
the same split written as SQL:

    SELECT k, COUNT(*) AS n, SUM(COUNT(*)) OVER (ORDER BY k) AS running FROM t GROUP BY k
    = SELECT _grouped.k AS k, _grouped.n AS n, SUM(_grouped._v0) OVER (ORDER BY _grouped.k) AS running
      FROM (SELECT k AS k, COUNT(*) AS n, COUNT(*) AS _v0 FROM t GROUP BY k) _grouped

Law: a window function reads, per aggregated row, only window-free expressions of that row (its
arguments, PARTITION BY and ORDER BY; windows do not nest), and each such expression is valid in the
grouped block exactly when Spark accepts the original. So every maximal window-free subexpression of
the select list and ORDER BY that reads a column or an aggregate is computed by the grouped block as
a column of its own (``_v<i>``, or the select item of the same text), and the rest (the windows,
constants, and what combines them) is evaluated above, over the block's rows in the same order:
π_{f(w(g(R)))}(γ(R)) = π_{f(w(x))}(π_{g AS x}(γ(R))). WHERE, GROUP BY and HAVING stay inside (they
are evaluated before windows); DISTINCT, ORDER BY and LIMIT go outside (after them).
"""

from __future__ import annotations

from sqlglot import exp

from planner.sql.errors import UnsupportedSqlError
from planner.sql.windows import window_calls

_ALIAS = "_grouped"
#: where a GROUP BY ordinal may stand (``GROUP BY 1``, ``ROLLUP(1, 2)``, ``GROUPING SETS ((1), ())``)
_ORDINAL_PLACES = (exp.Group, exp.Rollup, exp.Cube, exp.GroupingSets, exp.Tuple, exp.Paren)
#: clauses of the block that are evaluated after its windows, so they move to the outer block
_AFTER_WINDOWS = ("distinct", "order", "limit")


def windows_outside_grouping(select: exp.Select) -> exp.Select | None:
    """``select`` rewritten as the law above when it has window functions and groups or aggregates;
    None for any other block (its windows, if any, range over plain rows)."""
    if not window_calls(select) or not _is_grouped(select):
        return None
    if any(isinstance(item, exp.Star) or (isinstance(item, exp.Column) and isinstance(item.this, exp.Star))
           for item in select.expressions):
        raise UnsupportedSqlError(f"SELECT * with window functions over a grouped query block is not supported: "
                                  f"name the columns: {select.sql(dialect='spark')[:120]}")
    names = [_output_name(item, position) for position, item in enumerate(select.expressions)]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise UnsupportedSqlError(
            f"window functions over a grouped query block whose select list repeats the column name "
            f"{', '.join(repeated)}: give each column its own alias")
    lifted = _Lifted(select, names)
    values = [item.unalias().copy() for item in select.expressions]
    for value, name in zip(values, names, strict=True):  # first, so that the windows reuse them
        if not value.find(exp.Window):
            lifted.named(value, name)
    outer_items = [exp.alias_(lifted.over(value) if value.find(exp.Window) else _grouped_column(name), name)
                   for value, name in zip(values, names, strict=True)]
    outer = exp.Select(expressions=outer_items, from_=exp.From(this=exp.Subquery(
        this=lifted.inner(), alias=exp.TableAlias(this=exp.to_identifier(lifted.alias)))))
    for clause in _AFTER_WINDOWS:
        if select.args.get(clause):
            outer.set(clause, select.args[clause].copy())
    if order := outer.args.get("order"):
        for ordered in order.expressions:
            if not names_output(ordered.this, names):
                ordered.set("this", lifted.over(ordered.this))
    return outer


def _is_grouped(select: exp.Select) -> bool:
    """GROUP BY, HAVING, or an aggregate of this block that is not itself a window function."""
    if select.args.get("group") or select.args.get("having"):
        return True
    functions = {id(_function_of(w)) for w in window_calls(select)}
    return any(id(node) not in functions and node.find_ancestor(exp.Select) is select
               for item in select.expressions for node in item.find_all(exp.AggFunc))


def _function_of(window: exp.Window) -> exp.Expression:
    """The function a window computes, under FILTER / IGNORE NULLS (windows.py refuses those)."""
    function = window.this
    while isinstance(function, exp.Filter | exp.IgnoreNulls | exp.RespectNulls):
        function = function.this
    return function


def _output_name(item: exp.Expression, position: int) -> str:
    """The column name the planner gives a select item: its alias, its column's name, else ``_c<position>``."""
    if isinstance(item, exp.Alias):
        return item.alias.lower()
    if isinstance(item, exp.Column):
        return item.name.lower()
    return f"_c{position}"


def names_output(node: exp.Expression, names: list[str]) -> bool:
    """Whether an ORDER BY key reads the select list already: an ordinal or an output column's name."""
    if isinstance(node, exp.Literal) and node.is_int:
        return True
    return isinstance(node, exp.Column) and not node.table and node.name.lower() in names


def _grouped_column(name: str) -> exp.Column:
    return exp.column(name, table=_ALIAS)


def _constant(node: exp.Expression) -> bool:
    return not isinstance(node, exp.Column | exp.AggFunc | exp.Subquery) \
        and node.find(exp.Column, exp.AggFunc, exp.Subquery) is None


class _Lifted:
    """The grouped block's columns: each window-free expression the outer block reads, by its text."""

    def __init__(self, select: exp.Select, names: list[str]):
        self.select = select
        self.taken = set(names)
        taken_aliases = {node.alias_or_name.lower() for node in select.find_all(exp.Table, exp.Subquery)}
        self.alias = next(f"{_ALIAS}{i or ''}" for i in range(len(taken_aliases) + 1)
                          if f"{_ALIAS}{i or ''}" not in taken_aliases)
        self.columns: dict[str, str] = {}  # an expression's Spark SQL text → its column in the grouped block
        self.items: list[exp.Expression] = []  # the grouped block's select list

    def named(self, value: exp.Expression, name: str) -> None:
        """A window-free select item, computed by the grouped block under its own name."""
        self.columns.setdefault(value.sql(dialect="spark"), name)
        self.items.append(exp.alias_(value, name))

    def over(self, node: exp.Expression) -> exp.Expression:
        """``node`` (holding windows) with each maximal window-free part that reads the group read
        from the grouped block instead; ``node`` itself when it is such a part."""
        if not node.find(exp.Window):
            return self._lifted(node)
        if isinstance(node, exp.Window):
            for argument in list(_function_of(node).iter_expressions()):
                self._lift_free(argument)
            for key in node.args.get("partition_by") or []:
                self._lift_free(key)
            order = node.args.get("order")
            for ordered in order.expressions if order else []:
                self._lift_free(ordered.this)
            return node
        for child in list(node.iter_expressions()):
            if child.find(exp.Window):
                self.over(child)
            else:
                self._lift_free(child)
        return node

    def _lift_free(self, node: exp.Expression) -> None:
        """Replace window-free ``node`` in its tree by its grouped column (descending through
        DISTINCT and such, which are not values); constants stay where they are."""
        if _constant(node):
            return
        if isinstance(node, exp.Condition | exp.Subquery):
            node.replace(self._lifted(node))
            return
        for child in list(node.iter_expressions()):
            self._lift_free(child)

    def _lifted(self, node: exp.Expression) -> exp.Expression:
        if _constant(node):
            return node
        text = node.sql(dialect="spark")
        if text not in self.columns:
            name = next(f"_v{i}" for i in range(len(self.taken) + 1) if f"_v{i}" not in self.taken)
            self.taken.add(name)
            self.columns[text] = name
            self.items.append(exp.alias_(node.copy(), name))
        return _grouped_column(self.columns[text])

    def inner(self) -> exp.Select:
        """The grouped block: FROM, WHERE, GROUP BY (ordinals resolved) and HAVING, selecting the columns."""
        inner = self.select.copy()
        for clause in (*_AFTER_WINDOWS, "with_"):
            inner.set(clause, None)
        if group := inner.args.get("group"):
            for literal in list(group.find_all(exp.Literal)):
                if literal.is_int and isinstance(literal.parent, _ORDINAL_PLACES):
                    literal.replace(self._item_at(int(literal.this)))
        inner.set("expressions", self.items)
        return inner

    def _item_at(self, position: int) -> exp.Expression:
        """The select item a GROUP BY ordinal names (the planner refuses one out of range)."""
        if not 1 <= position <= len(self.select.expressions):
            raise UnsupportedSqlError(f"GROUP BY {position}: the select list has {len(self.select.expressions)} columns")
        return self.select.expressions[position - 1].unalias().copy()
