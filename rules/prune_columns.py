"""Keep in each atom only the columns the plan above reads, plus its primary key.

Stages carry whole subtree rows from leaves to the root, so every column dropped here is memory
saved in every stage's state. The primary key stays so that projected atoms keep set semantics.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from planner.context import OptimizerContext
from planner.expressions import Column, Expr, columns, deep_columns
from planner.maintenance import Atom, Correlation, FkEdge, JoinSelect, SubqueryAggregate
from planner.plan import LogicalPlan, NamedExpr, SortKey
from planner.rule_executor import Rule


def _referenced(value) -> set[Column]:
    """Every column mentioned by a node field (expressions, named expressions, sort keys, edges)."""
    match value:
        case tuple() | list():
            return set().union(*(_referenced(v) for v in value)) if value else set()
        case NamedExpr(expr=expr) | SortKey(expr=expr):
            return columns(expr)
        case FkEdge(referencing, cols, referenced, key):
            return {Column(referencing, c) for c in cols} | {Column(referenced, k) for k in key}
        case SubqueryAggregate(correlation=correlation):
            # the inner relation is read from its own source route; this keeps the outer side
            # (and, harmlessly, inner columns when an outer atom shares the subquery's alias)
            return set() if correlation is None else columns(correlation)
        case Correlation(outer=outer):
            return {outer}
        case JoinSelect(row=row, value=value):
            return {row, value}
        case LogicalPlan():
            return set()
        case None | str() | int() | bool():
            return set()
    # deep: an outer column read only by a correlated subquery must stay too
    return deep_columns(value) if _is_expr(value) else set()


def columns_read(plan: LogicalPlan, skip: Callable[[LogicalPlan, str], bool] = lambda node, field: False) -> set[Column]:
    """Every column the nodes of ``plan`` read in their own fields (not their children), except the
    fields ``skip(node, field_name)`` names."""
    used: set[Column] = set()
    for node in plan.walk():
        for field in attrs.fields(type(node)):
            if field.name not in node.child_fields and not skip(node, field.name):
                used |= _referenced(getattr(node, field.name))
    return used


def _is_expr(value) -> bool:
    return isinstance(value, Expr.__args__)  # type: ignore[attr-defined]


class PruneAtomColumns(Rule):
    """Drop atom columns nothing reads.

    >>> from catalog.tpch import tpch_catalog
    >>> from planner.context import OptimizerContext
    >>> from planner.testing import assert_rewrite
    >>> assert_rewrite(PruneAtomColumns(), '''
    ... Project items=[o.o_orderdate AS d]
    ...   ForeignKeyJoin root=o edges=[] residual=None
    ...     Atom table=orders alias=o columns=[o_orderkey, o_custkey, o_orderdate] predicate=None
    ... ''', '''
    ... Project items=[o.o_orderdate AS d]
    ...   ForeignKeyJoin root=o edges=[] residual=None
    ...     Atom table=orders alias=o columns=[o_orderkey, o_orderdate] predicate=None
    ... ''', OptimizerContext(tpch_catalog()))
    """

    def apply(self, plan: LogicalPlan, ctx: OptimizerContext) -> LogicalPlan:
        # an atom's selection runs on the full source row, before projection
        used = columns_read(plan, skip=lambda node, field: isinstance(node, Atom) and field == "predicate")

        def prune(node: LogicalPlan) -> LogicalPlan:
            if not isinstance(node, Atom):
                return node
            key = set(ctx.catalog.table(node.table).primary_key)
            kept = tuple(c for c in node.columns if c in key or Column(node.alias, c) in used)
            # π_used(R) loses nothing the plan reads; the key keeps R a set
            return node if kept == node.columns else Atom(node.table, node.alias, kept, node.predicate)

        return plan.transform_up(prune)

