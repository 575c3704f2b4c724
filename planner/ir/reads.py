"""Which columns a plan reads: what column pruning keeps and what join stages pass on."""

from __future__ import annotations

from collections.abc import Callable

import attrs

from planner.ir.expressions import Column, Expr, columns, deep_columns
from planner.ir.fk_graph import FkEdge
from planner.ir.logical import LogicalPlan, NamedExpr, SortKey
from planner.ir.maintenance import Correlation, JoinSelect, SubqueryAggregate


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
