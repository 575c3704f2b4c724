"""Derived tables whose rows a stateful operator computes (window functions, a set operation), read
as relations of their own: a bag of rows fed by the derived table's change stream.

``(SELECT ..., LAG(ts) OVER (...) AS prev FROM t) s`` or ``(SELECT ... UNION ALL SELECT ...) x``
used in FROM cannot be inlined: its rows are not a select-project-join of the tables. Maintained on
its own, though, it emits the exact changes of its rows (a window the rows whose values change, a
set operation each side's changes with their multiplicities), and those changes are what a table's
changes are to the operators above it: a ``ViewAtom`` without a key, a bag like a table without a
primary key (F-IVM's view trees make the same step: a union is a sum of views, an aggregate over it
the aggregate of the sum). A GROUP BY over it aggregates its changes; a join joins them.

The window blocks the query's own result passes through (the top-N pattern ``SELECT ... FROM (...
ROW_NUMBER() ...) x WHERE rn <= 3``, a window over a derived table) stay as they are: they are the
query, lowered as its last stages, and need no relation in between.
"""

from __future__ import annotations

from planner.ir.logical import (
    Filter,
    Limit,
    LogicalPlan,
    Project,
    SetOperation,
    Sort,
    SubqueryAlias,
)
from planner.ir.maintenance import TopK, ViewAtom
from planner.ir.window import Window
from planner.optimizer.context import OptimizerContext
from planner.optimizer.executor import Rule

#: The operators a query's result passes through unchanged in kind (a set operation: each side is a
#: result of its own): a window below them is the result's. Not DISTINCT: it counts rows per value,
#: which it does over a relation.
_RESULT_LAYERS = (Project, Filter, Sort, Limit, TopK, SubqueryAlias, Window, SetOperation)


def computed_rows(plan: LogicalPlan) -> LogicalPlan | None:
    """The window or set operation a derived table's plan ends in, under its select list and WHERE."""
    while isinstance(plan, Project | Filter):
        plan = plan.child
    return plan if isinstance(plan, Window | SetOperation) else None


class MaintainDerivedRowsAsView(Rule):
    """``SubqueryAlias(v, Q)`` with Q ending in a window or a set operation → ``ViewAtom(v, key=None, Q)``:
    a relation without a key whose rows are Q's, fed by Q's changes.

    Preconditions: the alias is read by an operator above (a join, an aggregate, a filter of another
    block), not only passed on as the query's own result (a window there is lowered as the result's).

    >>> from planner.optimizer.testing import assert_rewrite
    >>> assert_rewrite(MaintainDerivedRowsAsView(), '''
    ... Aggregate group_by=[x.p AS p] aggregates=[sum(x.a) AS _a0]
    ...   SubqueryAlias alias=x
    ...     SetOperation[union_all]
    ...       Project items=[t.p AS p, t.a AS a]
    ...         Scan table=t alias=t columns=[p, a]
    ...       Project items=[u.p AS p, u.a AS a]
    ...         Scan table=u alias=u columns=[p, a]
    ... ''', '''
    ... Aggregate group_by=[x.p AS p] aggregates=[sum(x.a) AS _a0]
    ...   ViewAtom alias=x columns=[p, a] anti=False
    ...     SubqueryAlias alias=x
    ...       SetOperation[union_all]
    ...         Project items=[t.p AS p, t.a AS a]
    ...           Scan table=t alias=t columns=[p, a]
    ...         Project items=[u.p AS p, u.a AS a]
    ...           Scan table=u alias=u columns=[p, a]
    ... ''', None)

    Law: an operator over a relation R maps ΔR to its own change whatever maintains R; a window
    emits exactly the rows whose values change, a set operation its sides' changes (Z-set sums).

    Keeps ``apply``: whether a derived table is its query's own result depends on every operator
    above it, which the rewrite of one node, walked bottom-up, does not see.
    """

    def apply(self, plan: LogicalPlan, ctx: OptimizerContext) -> LogicalPlan:
        return _convert(plan, result=True)


def _convert(node: LogicalPlan, result: bool) -> LogicalPlan:
    """``node`` with its derived tables of computed rows as views; ``result``: the result of a query
    (the whole query, a view's, a set operation's side) passes through ``node`` unchanged in kind, so
    a window here is that result's own."""
    if isinstance(node, SubqueryAlias) and (rows := computed_rows(node.child)) is not None and not (
            result and isinstance(rows, Window)):
        # the view holds the alias: its rows keep the names the query above reads (x.p)
        return ViewAtom(node.alias, None, tuple(c.name for c in node.child.output), False, _own(node))
    if isinstance(node, ViewAtom):
        return node.with_children((_own(node.child),))
    inner = result and isinstance(node, _RESULT_LAYERS)
    return node.with_children(tuple(_convert(child, inner) for child in node.children))


def _own(plan: LogicalPlan) -> LogicalPlan:
    """A view's plan: its own derived table (under the filters pushed into it, rules/normalize.py) stays,
    its block being the view's result; what is below it is converted."""
    if isinstance(plan, Filter):
        return plan.with_children((_own(plan.child),))
    if isinstance(plan, SubqueryAlias):
        return plan.with_children((_convert(plan.child, True),))
    return _convert(plan, True)
