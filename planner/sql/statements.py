"""The SQL front end: Spark SQL text → logical plan, by walking sqlglot's AST.

This module plans the statements (query blocks, FROM, WITH, GROUP BY, set operations); names
resolve in ``planner.sql.scope`` and expressions convert in ``planner.sql.expressions``, so every
column is ``Column(alias, name)`` of the relation that produces it and no rule ever guesses what an
unqualified TPC-H name meant. The plan is deliberately naive (comma joins are cross joins under one
Filter, nothing pushed down or pruned) because the normalization rules own those rewrites and must
see the query as written.

>>> from catalog.tpch import tpch_catalog
>>> plan = parse_sql("select n_name from nation where n_regionkey = 1", tpch_catalog())
>>> plan.items[0], plan.child.condition
(NamedExpr(name='n_name', expr=Column(table='nation', name='n_name')), Call(op='=', args=(Column(table='nation', name='n_regionkey'), Literal(value=1, type=AtomicType(name='int')))))
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping

import attrs
import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from catalog.schema import Catalog
from catalog.types import BOOLEAN, INT
from planner.ir.expressions import (
    AggregateCall,
    Call,
    Column,
    Expr,
    Literal,
    Subquery,
    cast_target,
    conjunction,
    conjuncts,
    contains_aggregate,
    contains_subquery,
    transform,
    type_of,
    walk,
)
from planner.ir.logical import (
    Aggregate,
    Distinct,
    Filter,
    Join,
    Limit,
    LogicalPlan,
    NamedExpr,
    Project,
    Scan,
    SetOperation,
    Sort,
    SortKey,
    SubqueryAlias,
)
from planner.ir.timestamps import checked_zone_name, time_zone_of_session
from planner.sql.anti_joins import anti_joins
from planner.sql.calls import DIALECT
from planner.sql.errors import AmbiguousColumnError, UnsupportedSqlError
from planner.sql.expressions import ExpressionConverter
from planner.sql.grouped_windows import windows_outside_grouping
from planner.sql.grouping_sets import (
    branch_constants,
    grouping_id,
    grouping_sets,
    has_grouping_sets,
    reject_grouping_functions,
)
from planner.sql.scalar_subqueries import scalar_subqueries_as_joins
from planner.sql.scope import Relation, Scope, output_names, output_types
from planner.sql.spark_names import spark_name
from planner.sql.typing import typed_aggregate, typed_call
from planner.sql.union_blocks import per_branch_blocks
from planner.sql.windows import plan_windows, window_calls

_SELECT_CLAUSES = frozenset(
    {"with_", "expressions", "distinct", "from_", "joins", "where", "group", "having", "order", "limit"}
)
_SET_OPERATION_CLAUSES = frozenset({"with_", "this", "expression", "distinct", "order", "limit"})
_CLAUSE_WORDS = {
    "laterals": "LATERAL VIEW",
    "windows": "WINDOW",
    "distribute": "DISTRIBUTE BY",
    "sort": "SORT BY",
    "cluster": "CLUSTER BY",
    "pivots": "PIVOT",
    "sample": "TABLESAMPLE",
    "hint": "hints",
    "kind": "SELECT AS STRUCT/VALUE",
    "by_name": "BY NAME",
}


def parse_sql(sql: str, catalog: Catalog, time_zone: str | None = None) -> LogicalPlan:
    """The logical plan of one Spark SQL query, with every column resolved against ``catalog``;
    ``time_zone``: the session time zone its TIMESTAMP expressions are given (default UTC)."""
    try:
        tree = sqlglot.parse_one(sql, read=DIALECT)
    except ParseError as err:
        raise UnsupportedSqlError(f"cannot parse the SQL (Spark dialect): {_located(sql, err)}") from err
    except TokenError as err:  # an unterminated string or quoted name: sqlglot gives no position
        raise UnsupportedSqlError(f"cannot parse the SQL (Spark dialect): {err}") from err
    try:
        zone = None if time_zone is None else checked_zone_name(time_zone)
    except ValueError as error:
        raise UnsupportedSqlError(f"the session time zone: {error}") from None
    with time_zone_of_session(zone):
        return _Planner(catalog).query(tree, None, {})


def _located(sql: str, err: ParseError) -> str:
    """The first parse error's description and position, then the offending line with a caret under the
    token sqlglot stopped at (its ``col`` is the 1-based column where that token ends)."""
    if not err.errors:
        return str(err)
    first = err.errors[0]
    line, end, token = first["line"], first["col"], first.get("highlight") or ""
    lines = sql.splitlines() or [""]
    text = lines[min(max(line, 1), len(lines)) - 1]
    start = max(end - len(token), 0)
    caret = " " * start + "^" * max(len(token), 1)
    # "Required keyword: 'expression' missing for <class 'sqlglot.expressions.core.EQ'>" speaks sqlglot
    description = _MISSING.sub("an expression is missing", first["description"])
    return f"{description} at line {line}, column {start + 1}:\n  {text}\n  {caret}"


_MISSING = re.compile(r"Required keyword: '\w+' missing for <class '[\w.]+'>")


def _reject_other_clauses(node: exp.Expression, handled: frozenset[str]) -> None:
    for key, value in node.args.items():
        if key not in handled and value:
            word = _CLAUSE_WORDS.get(key, key.upper())
            raise UnsupportedSqlError(f"{word} is not supported: {node.sql(dialect='spark')[:120]}")


def _reject_aggregates(expr: Expr, clause: str) -> None:
    if contains_aggregate(expr):
        raise UnsupportedSqlError(f"aggregate functions are not allowed in {clause}")


def _identifier(node: exp.Expression | None) -> str:
    return node.name.lower() if node is not None else ""


def _positive_int(node: exp.Expression, clause: str) -> int:
    if not (isinstance(node, exp.Literal) and node.is_int and int(node.this) >= 0):
        raise UnsupportedSqlError(
            f"{clause} needs a non-negative integer constant, not {node.sql(dialect='spark')}"
        )
    return int(node.this)


def _ordinal(node: exp.Expression) -> int | None:
    """The 1-based position an ``ORDER BY 2`` / ``GROUP BY 2`` names, if ``node`` is such a number."""
    return int(node.this) if isinstance(node, exp.Literal) and node.is_int else None


@attrs.frozen
class _Grouping:
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
    def of(cls, keys: list[Expr], uses: list[Expr], local_aliases: frozenset[str]) -> _Grouping:
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
class _RatioAsAverage:
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


@attrs.frozen
class _Planner:
    """Plans query blocks; ``ctes`` maps the WITH names visible at a point to their plans."""

    catalog: Catalog

    def query(
        self, node: exp.Expression, outer: Scope | None, ctes: Mapping[str, LogicalPlan]
    ) -> LogicalPlan:
        """Plan a query (SELECT or set operation) whose correlated names resolve in ``outer``."""
        if isinstance(node, exp.Subquery):
            _reject_other_clauses(node, frozenset({"this"}))
            return self.query(node.this, outer, ctes)
        ctes = self._with(node, outer, ctes)
        if isinstance(node, exp.Select):
            return self._select(node, outer, ctes)
        if isinstance(node, exp.SetOperation):
            return self._set_operation(node, outer, ctes)
        raise UnsupportedSqlError(
            f"{node.key.upper()} statements are not supported; only queries (SELECT, UNION, EXCEPT, INTERSECT)"
        )

    def _with(
        self, node: exp.Expression, outer: Scope | None, ctes: Mapping[str, LogicalPlan]
    ) -> Mapping[str, LogicalPlan]:
        with_ = node.args.get("with_")
        if not with_:
            return ctes
        if with_.args.get("recursive"):
            raise UnsupportedSqlError("WITH RECURSIVE is not supported: a recursive view has no fixed plan")
        visible = dict(ctes)
        for cte in with_.expressions:
            name = cte.alias.lower()
            plan = self.query(cte.this, outer, visible)
            visible[name] = _renamed(plan, cte.args["alias"], f"WITH {name}", self.catalog)
        return visible

    def _set_operation(
        self, node: exp.SetOperation, outer: Scope | None, ctes: Mapping[str, LogicalPlan]
    ) -> LogicalPlan:
        _reject_other_clauses(node, _SET_OPERATION_CLAUSES)
        word = node.key.upper()
        distinct = bool(node.args.get("distinct"))
        if isinstance(node, exp.Union):
            kind = "union" if distinct else "union_all"
        elif distinct:
            kind = node.key
        else:
            raise UnsupportedSqlError(f"{word} ALL is not supported: only {word} (DISTINCT) has a plan node")
        left = self.query(node.this, outer, ctes)
        right = self.query(node.expression, outer, ctes)
        left_names, right_names = output_names(left), output_names(right)
        if len(left_names) != len(right_names):
            raise UnsupportedSqlError(
                f"{word}: the left query has {len(left_names)} columns but the right one has {len(right_names)}"
            )
        plan: LogicalPlan = SetOperation(kind, left, right)
        if order := node.args.get("order"):
            outputs = [NamedExpr(name, Column(None, name)) for name in left_names]
            plan = Sort(tuple(self._sort_key(o, outputs, None) for o in order.expressions), plan)
        if limit := node.args.get("limit"):
            plan = Limit(_positive_int(limit.expression, "LIMIT"), plan)
        return plan

    def _select(
        self, select: exp.Select, outer: Scope | None, ctes: Mapping[str, LogicalPlan]
    ) -> LogicalPlan:
        _reject_other_clauses(select, _SELECT_CLAUSES)
        if (blocks := per_branch_blocks(select, self, outer, ctes)) is not None:
            plans = [self._select(block, outer, ctes) for block in blocks]
            return functools.reduce(lambda union, plan: SetOperation("union_all", union, plan), plans)
        if (windowed := windows_outside_grouping(select)) is not None:
            return self._select(windowed, outer, ctes)
        plan, scope, tests = self._from(select, outer, ctes)
        if where := select.args.get("where"):
            condition = ExpressionConverter(self, scope, ctes, "WHERE").convert(where.this)
            _reject_aggregates(condition, "WHERE")
            reject_grouping_functions([condition], "WHERE")
            tests += conjuncts(condition)
        plan, tests, padded = anti_joins(plan, tests, self.catalog)
        joins = plan
        if tests:
            plan = Filter(conjunction(tests), plan)

        windows: dict[str, Column] = {}
        if window_calls(select):
            plan, windows = plan_windows(select, plan, ExpressionConverter(self, scope, ctes, "OVER"))
        items = [NamedExpr(i.name, padded.substitute(i.expr)) for i in self._select_items(select, scope, ctes, windows)]
        if not windows and not select.args.get("group") and not select.args.get("having") \
                and not any(contains_aggregate(i.expr) for i in items):
            joined, items = scalar_subqueries_as_joins(plan, items, scope.aliases)
            plan = joins = joined if joined is not plan else plan
        by_alias = {item.name: item.expr for item in items}
        group = select.args.get("group")
        keys, sets = (
            self._group_keys(group, items, ExpressionConverter(self, scope, ctes, "GROUP BY", by_alias))
            if group
            else ([], None)
        )
        having_node = select.args.get("having")
        having = (
            ExpressionConverter(self, scope, ctes, "HAVING", by_alias).convert(having_node.this)
            if having_node
            else None
        )
        order = select.args.get("order")
        order_by = ExpressionConverter(self, scope, ctes, "ORDER BY", windows=windows)
        sort_keys = [self._sort_key(o, items, order_by) for o in order.expressions] if order else []

        ratio = _RatioAsAverage(self.catalog, plan)
        items = [NamedExpr(i.name, ratio.rewrite(i.expr)) for i in items]
        having = ratio.rewrite(having) if having is not None else None
        sort_keys = [SortKey(ratio.rewrite(k.expr), k.ascending) for k in sort_keys]
        uses = [item.expr for item in items] + ([having] if having else []) + [k.expr for k in sort_keys]
        distinct = select.args.get("distinct")
        if sets is None:
            reject_grouping_functions(uses, "SELECT, HAVING or ORDER BY")
        if windows and (sets is not None or group or having or any(contains_aggregate(e) for e in uses)):
            raise UnsupportedSqlError(
                "window functions over a grouped or aggregated query block are not supported: "
                "aggregate in a derived table and apply the window outside it")
        if sets is not None:
            plan, items, sort_keys = _grouping_sets_plan(
                _Grouping.of(keys, uses, scope.aliases), keys, sets, uses, plan, items, having, sort_keys, bool(distinct))
        elif group or having or any(contains_aggregate(e) for e in uses):
            grouping = _Grouping.of(keys, uses, scope.aliases)
            plan = Aggregate(grouping.group_by, grouping.aggregates, plan)
            if having is not None:
                plan = Filter(grouping.rewrite(having, "HAVING"), plan)
            items = [NamedExpr(i.name, grouping.rewrite(i.expr, "SELECT")) for i in items]
            sort_keys = [SortKey(grouping.rewrite(k.expr, "ORDER BY"), k.ascending) for k in sort_keys]

        sort_keys, hidden = _hidden_sort_columns(sort_keys, items, bool(distinct))
        if sets is None:  # a grouping sets' union already has these columns, in this order
            plan = Project(tuple(items) + hidden, plan)
        if distinct:
            if distinct.args.get("on"):
                raise UnsupportedSqlError("SELECT DISTINCT ON is not supported; use GROUP BY")
            plan = Distinct(plan)
        if sort_keys:
            plan = Sort(tuple(sort_keys), plan)
        if limit := select.args.get("limit"):
            plan = Limit(_positive_int(limit.expression, "LIMIT"), plan)
        if hidden:
            # The sort columns ride along to the result and are dropped when it is read (Spark
            # sorts by them and projects them away the same way).
            plan = Project(tuple(NamedExpr(i.name, Column(None, i.name, type_of(i.expr))) for i in items), plan)
        padded.refuse_reads(plan, joins)
        return plan

    def _from(
        self, select: exp.Select, outer: Scope | None, ctes: Mapping[str, LogicalPlan]
    ) -> tuple[LogicalPlan, Scope, list[Expr]]:
        """Left-deep joins of the FROM list, the scope its visible relations form, and the tests its
        semi and anti joins became (``_semi_join_test``), which hold above the joins like WHERE."""
        from_ = select.args.get("from_")
        if from_ is None:
            raise UnsupportedSqlError(
                "SELECT without FROM is not supported: every query block must read a relation"
            )
        plan, relation = self._relation(from_.this, outer, ctes)
        scope = Scope((), outer).with_relation(relation)
        tests: list[Expr] = []
        for join in select.args.get("joins") or []:
            right, relation = self._relation(join.this, outer, ctes)
            joined_scope = scope.with_relation(relation)
            kind = _join_kind(join)
            condition = None
            if kind in ("right", "full") and tests:
                # the test holds above the joins only while every later join keeps the tested rows
                raise UnsupportedSqlError(
                    f"a LEFT SEMI or LEFT ANTI JOIN before a {kind.upper()} OUTER JOIN is not supported: "
                    "write it as EXISTS / NOT EXISTS in a derived table")
            if using := _using_names(join, scope, relation):
                if kind in ("right", "full"):
                    raise UnsupportedSqlError(
                        f"{kind.upper()} OUTER JOIN with USING or NATURAL is not supported: write the join with "
                        "ON (and coalesce(l.k, r.k) for the merged column)")
                if join.args.get("on"):
                    raise UnsupportedSqlError(f"a join has both USING/NATURAL and ON: {join.sql(dialect='spark')[:120]}")
                joined_scope, pairs = joined_scope.with_using(using, "JOIN ... USING")
                condition = conjunction([Call("=", pair) for pair in pairs])
            elif on := join.args.get("on"):
                condition = ExpressionConverter(self, joined_scope, ctes, "JOIN ... ON").convert(on)
                _reject_aggregates(condition, "JOIN ... ON")
                if condition == Literal(True, "bool"):
                    condition = None  # sqlglot reads a bare JOIN as JOIN ... ON TRUE
                if contains_subquery(condition):
                    raise UnsupportedSqlError(
                        "subqueries in JOIN ... ON are not supported; move them to WHERE"
                    )
            if condition is None:
                if kind not in ("inner", "cross"):
                    raise UnsupportedSqlError(
                        f"a {kind} join needs an ON condition: {join.sql(dialect='spark')}"
                    )
                kind = "cross"
            elif kind == "cross":
                kind = "inner"
            if kind in ("semi", "anti"):
                # The right side of a semi or anti join is visible in ON only.
                tests.append(_semi_join_test(kind, condition, right))
            else:
                plan = Join(kind, condition, plan, right)
                scope = joined_scope
        return plan, scope, tests

    def _relation(
        self, node: exp.Expression, outer: Scope | None, ctes: Mapping[str, LogicalPlan]
    ) -> tuple[LogicalPlan, Relation]:
        """The plan of one FROM item and the relation it adds to the scope."""
        alias_node = node.args.get("alias")
        alias = _identifier(alias_node.this) if alias_node else ""
        if isinstance(node, exp.Table) and isinstance(node.this, exp.Identifier):
            _reject_other_clauses(node, frozenset({"this", "alias"}))
            name = node.name.lower()
            alias = alias or name
            if name in ctes:
                plan = SubqueryAlias(alias, _renamed(ctes[name], alias_node, f"FROM {name}", self.catalog))
                return plan, self._derived(alias, plan)
            if alias_node is not None and alias_node.args.get("columns"):
                raise UnsupportedSqlError(f"FROM: column aliases on the base table {name} are not supported")
            table = self.catalog.table(name)
            scan = Scan(name, alias, table.column_names)
            return scan, attrs.evolve(self._derived(alias, scan), unsupported=table.unsupported_columns, table=name)
        if isinstance(node, exp.Subquery):
            if not alias:
                raise UnsupportedSqlError(
                    f"FROM: a derived table needs an alias: {node.sql(dialect='spark')[:120]}"
                )
            _reject_other_clauses(node, frozenset({"this", "alias"}))
            # Derived tables see the enclosing query's scope, not their FROM siblings (no LATERAL).
            inner = self.query(node.this, outer, ctes)
            plan = SubqueryAlias(alias, _renamed(inner, alias_node, f"FROM {alias}", self.catalog))
            return plan, self._derived(alias, plan)
        function = node.args.get("this")  # FROM range(10): a table-valued function
        what = f"table-valued {spark_name(function)}" if isinstance(function, exp.Func) else node.key.upper()
        raise UnsupportedSqlError(f"{what} in FROM is not supported: {node.sql(dialect='spark')[:120]}")

    def _derived(self, alias: str, plan: LogicalPlan) -> Relation:
        """The relation ``plan`` adds to a FROM under ``alias``: its column names and their types."""
        return Relation(alias, output_names(plan), output_types(plan, self.catalog))

    def _select_items(
        self, select: exp.Select, scope: Scope, ctes: Mapping[str, LogicalPlan], windows: Mapping[str, Column]
    ) -> list[NamedExpr]:
        expressions = ExpressionConverter(self, scope, ctes, "SELECT", windows=windows)
        items: list[NamedExpr] = []
        for position, node in enumerate(select.expressions):
            if isinstance(node, exp.Star):
                scope.refuse_unsupported(None, "SELECT")
                items.extend(NamedExpr(column.name, column) for column in scope.star_columns())
            elif isinstance(node, exp.Column) and isinstance(node.this, exp.Star):
                qualifier = node.table.lower()
                if qualifier not in scope.aliases:
                    raise UnsupportedSqlError(f"SELECT {qualifier}.*: no relation {qualifier} in FROM")
                scope.refuse_unsupported(qualifier, "SELECT")
                items.extend(NamedExpr(column.name, column) for column in scope.qualified_star(qualifier))
            elif isinstance(node, exp.Alias):
                items.append(NamedExpr(node.alias.lower(), expressions.convert(node.this)))
            else:
                expr = expressions.convert(node)
                items.append(NamedExpr(expr.name if isinstance(expr, Column) else f"_c{position}", expr))
        return items

    def _group_keys(
        self, group: exp.Group, items: list[NamedExpr], expressions: ExpressionConverter
    ) -> tuple[list[Expr], list[tuple[Expr, ...]] | None]:
        """The GROUP BY keys, and the grouping sets of a ROLLUP/CUBE/GROUPING SETS (None without)."""
        _reject_other_clauses(group, frozenset({"expressions", "rollup", "cube"}))

        def key_of(node: exp.Expression) -> Expr:
            position = _ordinal(node)
            key = (
                _item_at(items, position, "GROUP BY").expr
                if position is not None
                else expressions.convert(node)
            )
            _reject_aggregates(key, "GROUP BY")
            reject_grouping_functions([key], "GROUP BY")
            return key

        if has_grouping_sets(group):
            return grouping_sets(group, key_of)
        return [key_of(node) for node in group.expressions], None

    def _sort_key(
        self, ordered: exp.Ordered, items: list[NamedExpr], expressions: ExpressionConverter | None
    ) -> SortKey:
        """A key on an output column when ORDER BY names one (by name, position or expression), else on the input."""
        ascending = not ordered.args.get("desc")
        if bool(ordered.args.get("nulls_first")) != ascending:
            raise UnsupportedSqlError(
                "ORDER BY: only the default null order (NULLS FIRST ascending, NULLS LAST descending) is supported"
            )
        node = ordered.this
        position = _ordinal(node)
        if position is not None:
            return SortKey(Column(None, _item_at(items, position, "ORDER BY").name), ascending)
        if isinstance(node, exp.Column) and not node.table:
            named = [item for item in items if item.name == node.name.lower()]
            if len(named) > 1:
                raise AmbiguousColumnError(
                    f"ORDER BY {node.name}: the select list has {len(named)} columns of that name"
                )
            if named:
                return SortKey(Column(None, named[0].name), ascending)
        if expressions is None:
            raise UnsupportedSqlError(
                f"ORDER BY {node.sql(dialect='spark')}: a set operation can only be sorted by its output columns"
            )
        expr = expressions.convert(node)
        named = [item for item in items if item.expr == expr]
        return SortKey(Column(None, named[0].name) if named else expr, ascending)


def _grouping_sets_plan(grouping: _Grouping, keys: list[Expr], sets: list[tuple[Expr, ...]], uses: list[Expr],
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
        branch_keys, hidden = _hidden_sort_columns(branch_keys, branch_items, distinct)
        branches.append(Project(tuple(branch_items) + hidden, plan))
        if len(branches) == 1:
            outputs = [NamedExpr(i.name, Column(None, i.name, type_of(i.expr))) for i in branch_items]
            sorted_by = branch_keys
    union = branches[0]
    for branch_plan in branches[1:]:
        union = SetOperation("union_all", union, branch_plan)
    return union, outputs, sorted_by


def _using_names(join: exp.Join, scope: Scope, right: Relation) -> tuple[str, ...]:
    """The columns a ``JOIN ... USING (...)`` names, or for a ``NATURAL JOIN`` the names both sides
    have (in the left side's order, as Spark); () for any other join."""
    if using := join.args.get("using"):
        return tuple(_identifier(name) for name in using)
    if (join.args.get("method") or "").upper() != "NATURAL":
        return ()
    left_names = dict.fromkeys(column.name for column in scope.star_columns())
    # No common name: Spark reads the NATURAL JOIN as a cross join, and so do we (() means no USING).
    return tuple(name for name in left_names if name in right.columns)


def _hidden_sort_columns(
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


def _semi_join_test(kind: str, condition: Expr, right: LogicalPlan) -> Subquery:
    """``L LEFT SEMI JOIN R ON c`` as the test ``EXISTS (SELECT 1 FROM R WHERE c)`` on L's rows, and
    the anti join as ``NOT EXISTS``: R ⋉_c S = σ_{∃s ∈ S: c}(R), R ▷_c S = σ_{∄s ∈ S: c}(R), the
    form the planner maintains (``rules/decorrelate.py``), as Spark plans EXISTS as these joins.
    ``c``'s references to the left side are the subquery's correlation. The test reads only the
    left side's columns, and every later join keeps that side's rows (a RIGHT or FULL OUTER JOIN
    after it is refused in ``_from``), so it holds above all the joins, as WHERE does."""
    one = Project((NamedExpr("_c0", Literal(1, INT)),), Filter(condition, right))
    return Subquery("exists", one, negated=kind == "anti", dtype=BOOLEAN)


def _join_kind(join: exp.Join) -> str:
    side, kind = join.side.upper(), join.kind.upper()
    method = (join.args.get("method") or "").upper()
    if method and method != "NATURAL":
        raise UnsupportedSqlError(f"{method} joins are not supported: {join.sql(dialect='spark')[:120]}")
    if kind in ("SEMI", "ANTI", "CROSS"):
        return kind.lower()
    return side.lower() if side in ("LEFT", "RIGHT", "FULL") else "inner"


def _renamed(plan: LogicalPlan, alias: exp.TableAlias | None, clause: str, catalog: Catalog) -> LogicalPlan:
    """``plan`` with its outputs renamed by an alias column list (``AS c_orders (c_custkey, c_count)``)."""
    names = [_identifier(c) for c in alias.args.get("columns") or []] if alias else []
    if not names:
        return plan
    current = output_names(plan)
    if len(names) != len(current):
        raise UnsupportedSqlError(
            f"{clause}: {len(names)} column names given for a query with {len(current)} columns"
        )
    typed = zip(names, current, output_types(plan, catalog), strict=True)
    return Project(tuple(NamedExpr(new, Column(None, old, dtype)) for new, old, dtype in typed), plan)


def _item_at(items: list[NamedExpr], position: int, clause: str) -> NamedExpr:
    if not 1 <= position <= len(items):
        raise UnsupportedSqlError(f"{clause} {position}: the select list has {len(items)} columns")
    return items[position - 1]
