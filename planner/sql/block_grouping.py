"""A query block's grouping: the GROUP BY keys and aggregates and how SELECT, HAVING and ORDER BY read
them above the ``Aggregate`` (``Grouping``), ROLLUP/CUBE/GROUPING SETS as a union of aggregates
(``grouping_sets_plan``), ``sum(x) / count(*)`` read as ``avg(x)`` (``RatioAsAverage``), and ORDER BY
keys outside the select list carried as hidden columns (``hidden_sort_columns``); then the select
list, DISTINCT, ORDER BY and LIMIT over the grouped plan (``presented``)."""

from __future__ import annotations

import attrs
from sqlglot import exp

from catalog.schema import Catalog
from planner.ir.expressions import (
    AggregateCall,
    Call,
    Column,
    Expr,
    Literal,
    Subquery,
    cast_target,
    transform,
    type_of,
    walk,
)
from planner.ir.logical import (
    Aggregate,
    Distinct,
    Filter,
    Limit,
    LogicalPlan,
    NamedExpr,
    Project,
    Scan,
    SetOperation,
    Sort,
    SortKey,
)
from planner.sql.errors import UnsupportedSqlError
from planner.sql.grouping_sets import branch_constants, grouping_id
from planner.sql.typing import typed_aggregate, typed_call


@attrs.frozen
class Grouping:
    """The GROUP BY keys and the aggregates of one query block, and how expressions read them.

    Above the ``Aggregate`` only its outputs exist, so every expression of SELECT, HAVING and ORDER
    BY is rewritten to refer to a group key or an aggregate by output name.
    """

    group_by: tuple[NamedExpr, ...]
    aggregates: tuple[NamedExpr, ...]
    local_aliases: frozenset[str]
    #: expressions read as others, first: one grouping set's absent keys and grouping() constants
    replaced: tuple[tuple[Expr, Expr], ...] = ()

    @classmethod
    def of(cls, keys: list[Expr], uses: list[Expr], local_aliases: frozenset[str]) -> Grouping:
        group_by: list[NamedExpr] = []
        generated = 0
        for key in keys:
            if any(item.expr == key for item in group_by):
                continue
            if isinstance(key, Column) and all(item.name != key.name for item in group_by):
                group_by.append(NamedExpr(key.name, key))
            else:
                group_by.append(NamedExpr(f"_g{generated}", key))
                generated += 1
        calls: dict[AggregateCall, None] = {}
        for expr in uses:
            calls.update((e, None) for e in walk(expr) if isinstance(e, AggregateCall))
        aggregates = tuple(NamedExpr(f"_a{i}", call) for i, call in enumerate(calls))
        return cls(tuple(group_by), aggregates, local_aliases)

    def rewrite(self, expr: Expr, clause: str) -> Expr:
        for old, new in self.replaced:
            if old == expr:
                return new
        for item in (*self.group_by, *self.aggregates):
            if item.expr == expr:
                return Column(None, item.name, type_of(item.expr))
        match expr:
            case Column(table=table) if table in self.local_aliases:
                raise UnsupportedSqlError(
                    f"column {expr} in {clause} is neither in GROUP BY nor inside an aggregate"
                )
            case Call(args=args):
                new_args = tuple(self.rewrite(arg, clause) for arg in args)
                if any(n is not o for n, o in zip(new_args, args, strict=True)):
                    return attrs.evolve(expr, args=new_args)
            case Subquery(operand=operand) if operand is not None:
                new_operand = self.rewrite(operand, clause)
                if new_operand is not operand:
                    return attrs.evolve(expr, operand=new_operand)
        return expr


_COUNTS = (AggregateCall("sum", Literal(1, "int")), AggregateCall("count", None))
_NOT_NULL_IF_ARGS_ARE = frozenset({"+", "-", "*", "neg"})
# Integer and floating types, today's families and Spark's names (the typed catalog of issue 9);
# a DECIMAL average has another result scale than the division, so DECIMAL is not among them.
_AVERAGE_EXACT_TYPES = frozenset({"int", "bigint", "double"})


def _uncast(expr: Expr) -> Expr:
    """``expr`` without the implicit cast typing put around it (a count read as a double)."""
    return expr.args[0] if isinstance(expr, Call) and cast_target(expr.op) is not None else expr


@attrs.frozen
class RatioAsAverage:
    """``sum(x) / sum(1)`` and ``sum(x) / count(*)`` read as ``avg(x)``, so the one-aggregate forms
    the planner maintains (a correlated nested aggregate, a scalar threshold) accept them.

    The law holds when x is never NULL (avg divides by count(x), the others by every row; both are
    NULL over no rows) and x is not DECIMAL (Spark gives avg and the division different result
    scales). Nullability and types come from the catalog columns of the FROM's tables.
    """

    catalog: Catalog
    source: LogicalPlan

    def rewrite(self, expr: Expr) -> Expr:
        return transform(expr, self._average)

    def _average(self, expr: Expr) -> Expr:
        match expr:
            # sum(x) / count(*) = avg(x) when no x is NULL
            case Call("/", (AggregateCall("sum", arg, False), count)) if _uncast(count) in _COUNTS and self._exact(arg):
                return typed_aggregate("avg", arg, False, "SELECT")
            # (c * sum(x)) / count(*) = c * avg(x): SQL reads 0.2 * sum(x) / sum(1) left to right
            case Call("/", (Call("*", (Literal() as c, AggregateCall("sum", arg, False))), count)) if (
                _uncast(count) in _COUNTS and self._exact(arg)
            ):
                return typed_call("*", (c, typed_aggregate("avg", arg, False, "SELECT")), "SELECT")
        return expr

    def _exact(self, expr: Expr | None) -> bool:
        match expr:
            case Literal(value=value, type=kind):
                return value is not None and kind in ("int", "float")
            case Column(table=alias, name=name):
                scan = next((n for n in self.source.walk() if isinstance(n, Scan) and n.alias == alias), None)
                if scan is None:
                    return False
                column = self.catalog.table(scan.table).column(name)
                return not column.nullable and str(column.type) in _AVERAGE_EXACT_TYPES
            case Call(op, args) if op in _NOT_NULL_IF_ARGS_ARE:
                return all(self._exact(arg) for arg in args)
        return False


def grouping_sets_plan(grouping: Grouping, keys: list[Expr], sets: list[tuple[Expr, ...]], uses: list[Expr],
                        source: LogicalPlan, items: list[NamedExpr], having: Expr | None, sort_keys: list[SortKey],
                        distinct: bool) -> tuple[LogicalPlan, list[NamedExpr], list[SortKey]]:
    """A ROLLUP/CUBE/GROUPING SETS block as the UNION ALL of one aggregate per set
    (planner/sql/grouping_sets.py says why), and the select list and sort keys that read it."""
    branches: list[LogicalPlan] = []
    for members in sets:
        branch = attrs.evolve(grouping, replaced=tuple(branch_constants(keys, members, uses)))
        group_by = tuple(item for item in grouping.group_by if item.expr in members)
        if not group_by:  # (): grouped by its constant grouping id, so no rows over no input (as in Spark)
            group_by = (NamedExpr("_gid", Literal(grouping_id(keys, members), "bigint")),)
        plan: LogicalPlan = Aggregate(group_by, grouping.aggregates, source)
        if having is not None:
            plan = Filter(branch.rewrite(having, "HAVING"), plan)
        branch_items = [NamedExpr(i.name, branch.rewrite(i.expr, "SELECT")) for i in items]
        branch_keys = [SortKey(branch.rewrite(k.expr, "ORDER BY"), k.ascending) for k in sort_keys]
        branch_keys, hidden = hidden_sort_columns(branch_keys, branch_items, distinct)
        branches.append(Project(tuple(branch_items) + hidden, plan))
        if len(branches) == 1:
            outputs = [NamedExpr(i.name, Column(None, i.name, type_of(i.expr))) for i in branch_items]
            sorted_by = branch_keys
    union = branches[0]
    for branch_plan in branches[1:]:
        union = SetOperation("union_all", union, branch_plan)
    return union, outputs, sorted_by


def hidden_sort_columns(
    sort_keys: list[SortKey], items: list[NamedExpr], distinct: bool
) -> tuple[list[SortKey], tuple[NamedExpr, ...]]:
    """ORDER BY keys that are not select-list columns become hidden trailing columns ``_sort<i>``.

    The result then carries them until it is read, so both the ORDER BY of the result and a top-k
    (``ORDER BY ... LIMIT``) sort by values the select list does not show.
    """
    outputs = {Column(None, item.name) for item in items}
    keys: list[SortKey] = []
    hidden: list[NamedExpr] = []
    for key in sort_keys:
        if key.expr in outputs:
            keys.append(key)
            continue
        if distinct:
            raise UnsupportedSqlError(
                f"ORDER BY {key.expr} with SELECT DISTINCT: the sort key must be a selected column (as in Spark)"
            )
        name = next((h.name for h in hidden if h.expr == key.expr), f"_sort{len(hidden)}")
        if all(h.name != name for h in hidden):
            hidden.append(NamedExpr(name, key.expr))
        keys.append(SortKey(Column(None, name), key.ascending))
    return keys, tuple(hidden)


def presented(select: exp.Select, plan: LogicalPlan, items: list[NamedExpr], sort_keys: list[SortKey],
               union_of_sets: bool) -> LogicalPlan:
    """The select list, DISTINCT, ORDER BY and LIMIT over a block's (grouped) plan."""
    distinct = select.args.get("distinct")
    sort_keys, hidden = hidden_sort_columns(sort_keys, items, bool(distinct))
    if not union_of_sets:  # a grouping sets' union already has these columns, in this order
        plan = Project(tuple(items) + hidden, plan)
    if distinct:
        if distinct.args.get("on"):
            raise UnsupportedSqlError("SELECT DISTINCT ON is not supported; use GROUP BY")
        plan = Distinct(plan)
    if sort_keys:
        plan = Sort(tuple(sort_keys), plan)
    if limit := select.args.get("limit"):
        plan = Limit(positive_int(limit.expression, "LIMIT"), plan)
    if hidden:
        # The sort columns ride along to the result and are dropped when it is read (Spark
        # sorts by them and projects them away the same way).
        plan = Project(tuple(NamedExpr(i.name, Column(None, i.name, type_of(i.expr))) for i in items), plan)
    return plan


def positive_int(node: exp.Expression, clause: str) -> int:
    if not (isinstance(node, exp.Literal) and node.is_int and int(node.this) >= 0):
        raise UnsupportedSqlError(
            f"{clause} needs a non-negative integer constant, not {node.sql(dialect='spark')}"
        )
    return int(node.this)
