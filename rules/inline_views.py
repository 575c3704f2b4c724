"""Inline derived tables and WITH views that only select, project and join (Q7, Q8, Q9 style).

``(SELECT e1 AS a, ... FROM ... WHERE ...) AS v`` used in FROM is the same as putting its FROM and
WHERE in place of ``v`` and reading ``v.a`` as ``e1``, except on the side an outer join pads: there
``v.a`` is NULL on a padded row while ``e1`` (a constant, a COALESCE) need not be, so such a derived
table stays whole (an outer join's side of its own, rules/outer_join.py). After inlining, the outer query is one
select-project-join block that normalization flattens like any other.
"""

from __future__ import annotations

import attrs

from planner.ir.expressions import AggregateCall, Column, Expr, Subquery, transform
from planner.ir.logical import (
    Aggregate,
    Distinct,
    Filter,
    Join,
    Limit,
    LogicalPlan,
    NamedExpr,
    Project,
    SetOperation,
    Sort,
    SortKey,
    SubqueryAlias,
)
from planner.ir.maintenance import ViewAtom
from planner.ir.scalar_product import ScalarProduct
from planner.ir.window import Window
from planner.optimizer.context import OptimizerContext
from planner.optimizer.executor import Rule

_BLOCKING = (Aggregate, Distinct, Limit, Sort, SetOperation, SubqueryAlias, Window, ScalarProduct)


def _blocks_inlining(node: LogicalPlan) -> bool:
    """Whether ``node`` aggregates, sorts, limits or sets apart its rows; a view already maintained
    (a grouped derived table, Q15's revenue0) is a relation like a table, whatever its plan holds."""
    if isinstance(node, ViewAtom):
        return False
    return isinstance(node, _BLOCKING) or any(_blocks_inlining(child) for child in node.children)


def _substitute(value, mapping: dict[Column, Expr]):
    match value:
        # (x1, ..., xn)[c := e] = (x1[c := e], ..., xn[c := e])
        case tuple():
            return tuple(_substitute(v, mapping) for v in value)
        # (e AS n)[c := e'] = e[c := e'] AS n: the name is not a reference
        case NamedExpr(name, expr):
            new = _substitute(expr, mapping)
            return value if new is expr else NamedExpr(name, new)
        # the order of e[c := e'] is e's order read on the substituted row
        case SortKey(expr, ascending):
            new = _substitute(expr, mapping)
            return value if new is expr else SortKey(new, ascending)
        # a plan keeps its own scope and a constant holds no column: x[c := e] = x
        case LogicalPlan() | str() | int() | bool() | None:
            return value
    return transform(value, lambda e: _substitute_expr(e, mapping))


def _substitute_expr(expr: Expr, mapping: dict[Column, Expr]) -> Expr:
    if isinstance(expr, Column):
        return mapping.get(expr, expr)
    if isinstance(expr, Subquery):
        # a correlated subquery may read the view's columns too
        plan = expr.plan.transform_up(lambda n: _substitute_fields(n, mapping))
        return expr if plan is expr.plan else attrs.evolve(expr, plan=plan)
    return expr


def _substitute_fields(node: LogicalPlan, mapping: dict[Column, Expr]) -> LogicalPlan:
    changes = {}
    for field in attrs.fields(type(node)):
        if field.name in node.child_fields:
            continue
        old = getattr(node, field.name)
        new = _substitute(old, mapping)
        if new != old:
            changes[field.name] = new
    return attrs.evolve(node, **changes) if changes else node


class InlineDerivedTables(Rule):
    """Replace ``SubqueryAlias(v, Project(items, spj))`` by ``spj`` and ``v.a`` by a's expression.

    Preconditions: the inner block has no aggregate, DISTINCT, ORDER BY, LIMIT or set operation.

    >>> from planner.optimizer.testing import assert_rewrite
    >>> assert_rewrite(InlineDerivedTables(), '''
    ... Aggregate group_by=[v.y AS y] aggregates=[sum(v.vol) AS _a0]
    ...   SubqueryAlias alias=v
    ...     Project items=[extract_year(o.d) AS y, o.p * 2 AS vol]
    ...       Scan table=orders alias=o columns=[d, p]
    ... ''', '''
    ... Aggregate group_by=[extract_year(o.d) AS y] aggregates=[sum(o.p * 2) AS _a0]
    ...   Scan table=orders alias=o columns=[d, p]
    ... ''', None)

    Keeps ``apply``: ``v.a`` is replaced wherever the whole plan reads it, above the derived table
    too, and whether an outer join pads it with NULLs is decided by the operators above it.
    """

    def apply(self, plan: LogicalPlan, ctx: OptimizerContext) -> LogicalPlan:
        padded = _null_supplied(plan)
        for node in plan.walk():
            match node:
                # π_{e AS a}(Q) AS v, then v.a everywhere  ≡  Q, then e everywhere
                case SubqueryAlias(alias, Project(items, inner)) if not _blocks_inlining(inner):
                    # on a padded row v.a is NULL where e need not be (``1 AS one``, ``coalesce(x, 0)``)
                    if id(node) in padded and not all(isinstance(item.expr, Column) for item in items):
                        continue
                    return _inline(plan, node, inner, {Column(alias, item.name): item.expr for item in items})
        return plan


def _null_supplied(plan: LogicalPlan) -> set[int]:
    """The derived tables an outer join pads with NULLs (the right side of a LEFT JOIN, ...)."""
    found = set()
    for node in plan.walk():
        if isinstance(node, Join) and node.kind in ("left", "right", "full"):
            sides = {"left": (node.right,), "right": (node.left,), "full": (node.left, node.right)}[node.kind]
            found |= {id(side) for side in sides if isinstance(side, SubqueryAlias)}
    return found


class MergeProjectionIntoDerivedTable(Rule):
    """Read a derived table that its query only projects, whatever it holds, as its own select list:
    ``π_f(π_g(Q) AS v) = π_{f∘g}(Q)`` (a global total read as ``(SELECT t * 0.0001 FROM (SELECT
    sum(x) AS t ...) v)``, or ``SELECT * FROM (<query>) v``).

    Preconditions: the derived table's plan ends in its select list (a Project).

    >>> from planner.optimizer.testing import assert_rewrite
    >>> assert_rewrite(MergeProjectionIntoDerivedTable(), '''
    ... Project items=[v.t * 0.5 AS _c0]
    ...   SubqueryAlias alias=v
    ...     Project items=[_a0 AS t]
    ...       Aggregate group_by=[] aggregates=[sum(o.p) AS _a0]
    ...         Scan table=orders alias=o columns=[p]
    ... ''', '''
    ... Project items=[_a0 * 0.5 AS _c0]
    ...   Aggregate group_by=[] aggregates=[sum(o.p) AS _a0]
    ...     Scan table=orders alias=o columns=[p]
    ... ''', None)
    """

    def rewrite(self, node: LogicalPlan, ctx: OptimizerContext) -> LogicalPlan:
        match node:
            # π_f(π_g(Q) AS v) = π_{f∘g}(Q): v's columns read as g's expressions
            case Project(items=outer, child=SubqueryAlias(alias=alias, child=Project(items=items, child=inner))):
                mapping = {Column(alias, item.name): item.expr for item in items}
                return Project(_substitute(outer, mapping), inner)
        return node


def _inline(plan: LogicalPlan, view: SubqueryAlias, inner: LogicalPlan, mapping: dict[Column, Expr]) -> LogicalPlan:
    replaced = plan.transform_up(lambda n: inner if n is view else n)
    return replaced.transform_up(lambda n: _substitute_fields(n, mapping))


class MaintainDerivedAggregateAsView(Rule):
    """A derived table that groups (``(SELECT k, agg ... GROUP BY k) AS v``) becomes a view atom keyed by
    its group columns, joined like a table (TPC-H Q13's c_orders, Q15's revenue0). A global aggregate
    (no GROUP BY) has exactly one row: a view keyed by the empty key (a window over it, a filter on it).

    Preconditions: every group-by column is in the select list (it becomes the view's key).

    >>> from planner.optimizer.testing import assert_rewrite
    >>> assert_rewrite(MaintainDerivedAggregateAsView(), '''
    ... Aggregate group_by=[v.n AS n] aggregates=[count(*) AS _a0]
    ...   SubqueryAlias alias=v
    ...     Project items=[k AS k, _a0 AS n]
    ...       Aggregate group_by=[o.o_custkey AS k] aggregates=[count(*) AS _a0]
    ...         Scan table=orders alias=o columns=[o_custkey]
    ... ''', '''
    ... Aggregate group_by=[v.n AS n] aggregates=[count(*) AS _a0]
    ...   ViewAtom alias=v key=[k] columns=[k, n] anti=False
    ...     Project items=[k AS k, _a0 AS n]
    ...       Aggregate group_by=[o.o_custkey AS k] aggregates=[count(*) AS _a0]
    ...         Scan table=orders alias=o columns=[o_custkey]
    ... ''', None)
    """

    def rewrite(self, node: LogicalPlan, ctx: OptimizerContext) -> LogicalPlan:
        match node:
            # SELECT DISTINCT a, b ... = SELECT a, b ... GROUP BY a, b: keyed by all its columns
            case SubqueryAlias(alias=alias, child=Distinct(child=Project(items=items, child=body))):
                grouped = _distinct_as_group_by(items, body)
                return ViewAtom(alias, tuple(item.name for item in items), tuple(item.name for item in items),
                                False, grouped)
            # a grouped subquery has one row per group key (a global one, one row): a relation with that primary key
            case SubqueryAlias(alias=alias, child=Project(items=items, child=grouped) as inner):
                aggregate = grouped.child if isinstance(grouped, Filter) else grouped
                if not isinstance(aggregate, Aggregate):
                    return node
                projected = {item.expr: item.name for item in items}
                key = tuple(projected.get(Column(None, g.name)) for g in aggregate.group_by)
                if None not in key:
                    return ViewAtom(alias, key, tuple(item.name for item in items), False, inner)
        return node


def _distinct_as_group_by(items: tuple[NamedExpr, ...], body: LogicalPlan) -> Project:
    """``SELECT DISTINCT items FROM body`` as ``π_items γ_{items; count(*)}(body)``: one row per
    distinct value, the group, which is the view's key (NULLs group together as DISTINCT keeps one)."""
    group_by = tuple(NamedExpr(f"_d{i}", item.expr) for i, item in enumerate(items))
    aggregate = Aggregate(group_by, (NamedExpr("_n", AggregateCall("count", None)),), body)
    return Project(tuple(NamedExpr(item.name, Column(None, g.name)) for item, g in zip(items, group_by, strict=True)),
                   aggregate)
