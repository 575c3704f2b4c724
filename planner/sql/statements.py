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
from collections.abc import Mapping

import attrs
import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from catalog.schema import Catalog
from catalog.types import BOOLEAN, INT
from planner.ir.expressions import (
    Call,
    Column,
    Expr,
    Literal,
    Subquery,
    conjunction,
    conjuncts,
    contains_aggregate,
    contains_subquery,
)
from planner.ir.logical import (
    Aggregate,
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
from planner.sql.block_grouping import Grouping, RatioAsAverage, grouping_sets_plan, positive_int, presented
from planner.sql.calls import DIALECT
from planner.sql.errors import AmbiguousColumnError, UnsupportedSqlError, located_parse_error
from planner.sql.expressions import ExpressionConverter
from planner.sql.from_less import from_one_row_subquery
from planner.sql.grouped_windows import windows_outside_grouping
from planner.sql.grouping_sets import (
    grouping_sets,
    has_grouping_sets,
    reject_grouping_functions,
)
from planner.sql.qualify import qualify_as_filter
from planner.sql.scalar_subqueries import scalar_subqueries_as_joins
from planner.sql.scope import Relation, Scope, output_names, output_types
from planner.sql.spark_names import spark_name
from planner.sql.union_blocks import per_branch_blocks
from planner.sql.windows import plan_windows, window_calls

_SELECT_CLAUSES = frozenset(
    {"with_", "expressions", "distinct", "from_", "joins", "where", "group", "having", "qualify", "order", "limit"}
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
        raise UnsupportedSqlError(f"cannot parse the SQL (Spark dialect): {located_parse_error(sql, err)}") from err
    except TokenError as err:  # an unterminated string or quoted name: sqlglot gives no position
        raise UnsupportedSqlError(f"cannot parse the SQL (Spark dialect): {err}") from err
    try:
        zone = None if time_zone is None else checked_zone_name(time_zone)
    except ValueError as error:
        raise UnsupportedSqlError(f"the session time zone: {error}") from None
    with time_zone_of_session(zone):
        return _Planner(catalog).query(tree, None, {})


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


def _ordinal(node: exp.Expression) -> int | None:
    """The 1-based position an ``ORDER BY 2`` / ``GROUP BY 2`` names, if ``node`` is such a number."""
    return int(node.this) if isinstance(node, exp.Literal) and node.is_int else None


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
            plan = Limit(positive_int(limit.expression, "LIMIT"), plan)
        return plan

    def _select(
        self, select: exp.Select, outer: Scope | None, ctes: Mapping[str, LogicalPlan]
    ) -> LogicalPlan:
        _reject_other_clauses(select, _SELECT_CLAUSES)
        if not select.args.get("from_"):
            return self._select(from_one_row_subquery(select), outer, ctes)
        if select.args.get("qualify"):
            return self._select(qualify_as_filter(select, lambda inner: self._select(inner, outer, ctes)), outer, ctes)
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
        plan, items, sort_keys, union_of_sets = self._grouped(select, plan, items, scope, ctes, windows)
        plan = presented(select, plan, items, sort_keys, union_of_sets)
        padded.refuse_reads(plan, joins)
        return plan

    def _grouped(
        self, select: exp.Select, plan: LogicalPlan, items: list[NamedExpr], scope: Scope,
        ctes: Mapping[str, LogicalPlan], windows: dict[str, Column],
    ) -> tuple[LogicalPlan, list[NamedExpr], list[SortKey], bool]:
        """GROUP BY, HAVING and the aggregates of SELECT and ORDER BY over ``plan``: the plan, the select
        list and sort keys that read it, and whether grouping sets made it (their union already has the
        select list's columns)."""
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

        ratio = RatioAsAverage(self.catalog, plan)
        items = [NamedExpr(i.name, ratio.rewrite(i.expr)) for i in items]
        having = ratio.rewrite(having) if having is not None else None
        sort_keys = [SortKey(ratio.rewrite(k.expr), k.ascending) for k in sort_keys]
        uses = [item.expr for item in items] + ([having] if having else []) + [k.expr for k in sort_keys]
        if sets is None:
            reject_grouping_functions(uses, "SELECT, HAVING or ORDER BY")
        if windows and (sets is not None or group or having or any(contains_aggregate(e) for e in uses)):
            raise UnsupportedSqlError(
                "window functions over a grouped or aggregated query block are not supported: "
                "aggregate in a derived table and apply the window outside it")
        if sets is not None:
            plan, items, sort_keys = grouping_sets_plan(
                Grouping.of(keys, uses, scope.aliases), keys, sets, uses, plan, items, having, sort_keys,
                bool(select.args.get("distinct")))
        elif group or having or any(contains_aggregate(e) for e in uses):
            grouping = Grouping.of(keys, uses, scope.aliases)
            plan = Aggregate(grouping.group_by, grouping.aggregates, plan)
            if having is not None:
                plan = Filter(grouping.rewrite(having, "HAVING"), plan)
            items = [NamedExpr(i.name, grouping.rewrite(i.expr, "SELECT")) for i in items]
            sort_keys = [SortKey(grouping.rewrite(k.expr, "ORDER BY"), k.ascending) for k in sort_keys]
        return plan, items, sort_keys, sets is not None

    def _from(
        self, select: exp.Select, outer: Scope | None, ctes: Mapping[str, LogicalPlan]
    ) -> tuple[LogicalPlan, Scope, list[Expr]]:
        """Left-deep joins of the FROM list, the scope its visible relations form, and the tests its
        semi and anti joins became (``_semi_join_test``), which hold above the joins like WHERE."""
        plan, relation = self._relation(select.args["from_"].this, outer, ctes)  # _select planned a FROM-less block
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
                if join.args.get("on"):
                    raise UnsupportedSqlError(f"a join has both USING/NATURAL and ON: {join.sql(dialect='spark')[:120]}")
                joined_scope, pairs = joined_scope.with_using(using, "JOIN ... USING", kind)
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
            alias = alias or _generated_alias(node)
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
                items.extend(c if isinstance(c, NamedExpr) else NamedExpr(c.name, c) for c in scope.star_columns())
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
                # a column keeps its name, also a FULL JOIN's USING column, which is a coalesce
                name = expr.name if isinstance(expr, Column) else node.name.lower() if isinstance(node, exp.Column) else None
                items.append(NamedExpr(name or f"_c{position}", expr))
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


def _generated_alias(node: exp.Subquery) -> str:
    """The name of a derived table written without an alias: Spark's ``__auto_generated_subquery_name``,
    numbered after the first so that two such tables of one FROM stay apart (neither can be named in
    the query; their columns are read unqualified)."""
    join = node.parent if isinstance(node.parent, exp.Join) else None
    if join is None or not isinstance(join.parent, exp.Select):
        return "__auto_generated_subquery_name"
    return f"__auto_generated_subquery_name_{join.parent.args['joins'].index(join) + 1}"


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
