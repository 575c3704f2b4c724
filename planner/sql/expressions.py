"""SQL expressions → IR expressions: one clause's sqlglot expressions converted and resolved.

Names resolve in the clause's ``Scope``; nested queries (EXISTS, IN, scalar subqueries) are planned
by the statement planner handed in as a ``QueryPlanner``, so this module does not import the
statement layer above it. Date ± interval constants are folded here (``planner.ir.dates``) so the
rules compare plain date literals.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Protocol

import attrs
from sqlglot import exp

from catalog import types
from catalog.ddl import column_type
from catalog.schema import Catalog, UnknownColumnError
from catalog.types import BOOLEAN, DATE, INTEGRAL, NULL, STRING, IntervalType
from planner.ir.dates import INTERVAL_UNITS, shift_date
from planner.ir.expressions import AggregateCall, Column, Expr, Literal, Subquery, contains_aggregate
from planner.ir.functions import ArgumentCountError, UnsupportedArgumentError, lookup
from planner.ir.logical import LogicalPlan
from planner.sql.aggregates import SYNONYMS, aggregate_call, approximate_refusal, order_dependent_refusal
from planner.sql.calls import as_written, spark_call
from planner.sql.errors import UnsupportedSqlError
from planner.sql.grouping_sets import grouping_call
from planner.sql.scope import Scope, output_names, output_types
from planner.sql.spark_names import spark_name
from planner.sql.typing import explicit_cast, literal_of_number, try_cast, typed_aggregate, typed_call

_BINARY_OPS: dict[type[exp.Expression], str] = {
    exp.Add: "+",
    exp.Sub: "-",
    exp.Mul: "*",
    exp.Div: "/",
    exp.EQ: "=",
    exp.NEQ: "<>",
    exp.LT: "<",
    exp.LTE: "<=",
    exp.GT: ">",
    exp.GTE: ">=",
    exp.And: "and",
    exp.Or: "or",
}
_AGGREGATES: dict[type[exp.Expression], str] = {
    exp.Sum: "sum",
    exp.Count: "count",
    exp.Avg: "avg",
    exp.Min: "min",
    exp.Max: "max",
    exp.Stddev: "stddev",
    exp.StddevSamp: "stddev_samp",
    exp.StddevPop: "stddev_pop",
    exp.Variance: "variance",  # sqlglot reads var_samp as variance too: the same function in Spark
    exp.VariancePop: "var_pop",
    exp.Median: "median",
    exp.Quantile: "percentile",
    exp.CountIf: "count_if",
    exp.LogicalAnd: "bool_and",
    exp.LogicalOr: "bool_or",
    exp.ArgMax: "max_by",
    exp.ArgMin: "min_by",
}
# Approximate aggregates, refused (planner/sql/aggregates.py), with the exact form to suggest.
_APPROXIMATE: dict[type[exp.Expression], str] = {
    exp.ApproxDistinct: "count(DISTINCT x)",
    exp.ApproxQuantile: "percentile(x, p)",
}
# Aggregates whose value is that of whichever row the engine meets first (Spark: non-deterministic).
_ORDER_DEPENDENT = (exp.First, exp.Last, exp.AnyValue)
# Spark's aggregates that sqlglot leaves as anonymous functions, by their (lower-case) name.
_ANONYMOUS_AGGREGATES = {"std": "std"}
_WITHIN_GROUP = {exp.PercentileCont: "percentile_cont", exp.PercentileDisc: "percentile_disc"}
# Spark's year(d), month(d), day(d) are EXTRACT in disguise.
_DATE_PART_FUNCTIONS: dict[type[exp.Expression], str] = {exp.Year: "year", exp.Month: "month", exp.Day: "day"}
_EXTRACT_UNITS = frozenset({"year", "quarter", "month", "week", "day"})
# (EXTRACT(SECOND ...) is a decimal(8,6) with the fraction, not second(): not supported)
_EXTRACT_FUNCTIONS = {"hour": "hour", "minute": "minute", "dayofweek": "dayofweek", "dow": "dayofweek"}
_INTERVAL_UNITS = {
    "day": "day",
    "days": "day",
    "month": "month",
    "months": "month",
    "year": "year",
    "years": "year",
    "hour": "hour",
    "hours": "hour",
    "minute": "minute",
    "minutes": "minute",
    "second": "second",
    "seconds": "second",
}


def _arithmetic(op: str, left: Expr, right: Expr, clause: str) -> Expr:
    """``left op right``, folding date ± interval constants so rules compare plain date literals."""
    # (``types.DATE``, dotted: a bare name in a pattern would capture any type instead of comparing)
    match op, left, right:
        case "+" | "-", Literal(value=day, type=types.DATE), Literal(value=(amount, unit), type=IntervalType()) if (
            unit in INTERVAL_UNITS
        ):
            return Literal(shift_date(day, amount if op == "+" else -amount, unit), DATE)
        case "+", Literal(type=IntervalType()), Literal(type=types.DATE):
            return _arithmetic(op, right, left, clause)
    return typed_call(op, (left, right), clause)


class QueryPlanner(Protocol):
    """What converting a subquery needs from the statement planner: plan a nested query, and the
    catalog (a subquery's type is its output column's)."""

    catalog: Catalog

    def query(
        self, node: exp.Expression, outer: Scope | None, ctes: Mapping[str, LogicalPlan]
    ) -> LogicalPlan: ...


@attrs.frozen
class ExpressionConverter:
    """Converts the sqlglot expressions of one clause to the IR, resolving names in ``scope``.

    ``aliases`` are select-list names that GROUP BY and HAVING may use when no input column has
    the name (Spark's group-by-alias behaviour).
    """

    planner: QueryPlanner
    scope: Scope
    ctes: Mapping[str, LogicalPlan]
    clause: str
    aliases: Mapping[str, Expr] = attrs.field(factory=dict)
    #: the select list's window expressions (by Spark SQL text) → the column their ``Window`` adds
    windows: Mapping[str, Column] = attrs.field(factory=dict)

    def convert(self, node: exp.Expression) -> Expr:
        """The IR expression of ``node``; UnsupportedSqlError names what has no IR form."""
        convert, call = self.convert, self._call
        match node:
            case exp.Paren():
                return convert(node.this)
            case exp.Column():
                return self._column(node)
            case exp.Literal():
                return _literal(node)
            case exp.Boolean():
                return Literal(node.this, BOOLEAN)
            case exp.Null():
                return Literal(None, NULL)
            case exp.Interval():
                return self._interval(node)
            case exp.Add() | exp.Sub():
                return _arithmetic(_BINARY_OPS[type(node)], convert(node.this), convert(node.expression), self.clause)
            case exp.Mod():
                return call("%", convert(node.this), convert(node.expression))
            case exp.IntDiv():
                return call("div", convert(node.this), convert(node.expression))
            case _ if type(node) in _BINARY_OPS:
                return call(_BINARY_OPS[type(node)], convert(node.this), convert(node.expression))
            case exp.Neg():
                return self._negate(node.this)
            case exp.Not():
                return self._not(node.this)
            case exp.Like():
                return self._like(node, negated=False)
            case exp.Is():
                return self._is_null(node, negated=False)
            case exp.In():
                return self._in(node, negated=False)
            case exp.Exists():
                return Subquery("exists", self._subquery(node.this, "EXISTS", single_column=False), dtype=BOOLEAN)
            case exp.Subquery() if (value := _constant_subquery(node)) is not None:
                # (SELECT e) without FROM is one row whose value is e: the subquery is e itself
                return convert(value)
            case exp.Subquery():
                plan = self._subquery(node, "a scalar subquery")
                return Subquery("scalar", plan, dtype=output_types(plan, self.planner.catalog)[0])
            case exp.Between():
                return call("between", convert(node.this), convert(node.args["low"]), convert(node.args["high"]))
        return self._function(node)

    def _call(self, op: str, *args: Expr) -> Expr:
        """``op(args)`` typed as Spark types it, with its implicit casts (planner/sql/typing.py)."""
        return typed_call(op, args, self.clause)

    def _function(self, node: exp.Expression) -> Expr:
        """CASE, casts, date parts, aggregates, then every other function by its Spark name."""
        match node:
            case exp.Case():
                return self._case(node)
            case exp.Cast() | exp.TryCast():
                return self._cast(node)
            case exp.Extract():
                return self._extract(node.this.name.lower(), node.expression)
            case _ if type(node) in _DATE_PART_FUNCTIONS:
                return self._extract(_DATE_PART_FUNCTIONS[type(node)], as_written(node.this))
            case exp.Filter():
                return self._aggregate(node.this, node.expression.this)
            case exp.Any() if not isinstance(node.this.unnest(), exp.Query | exp.Subquery):  # any(p): bool_or
                return self._aggregate(node)
            case exp.Anonymous() if node.name.lower() in SYNONYMS:
                return self._aggregate(node)
            case _ if isinstance(node.this if isinstance(node, exp.IgnoreNulls | exp.RespectNulls) else node, _ORDER_DEPENDENT):
                raise order_dependent_refusal(node.sql(dialect="spark"), self.clause)
            case _ if type(node) in _APPROXIMATE:
                raise approximate_refusal(node.sql(dialect="spark"), _APPROXIMATE[type(node)], self.clause)
            case exp.All() | exp.Any():
                # Checked on pyspark 4.3: spark.sql fails with PARSE_SYNTAX_ERROR on every quantified
                # subquery comparison, so there is no Spark answer to maintain.
                raise UnsupportedSqlError(
                    f"ALL / ANY / SOME subquery comparisons in {self.clause} are refused: Spark SQL 4 does not "
                    "parse them (PARSE_SYNTAX_ERROR); write x = ANY (q) as x IN (q), x <> ALL (q) as x NOT IN (q), "
                    "and x > ALL (q) as a comparison with (select max(...)) with the empty and NULL cases spelled "
                    f"out: {node.sql(dialect='spark')[:120]}"
                )
            case exp.Window() if (window := self.windows.get(node.sql(dialect="spark"))) is not None:
                return window
            case exp.Window():
                raise UnsupportedSqlError(
                    f"window functions (OVER) in {self.clause} are not supported: only in the SELECT list of a "
                    f"query block without GROUP BY or aggregates: {node.sql(dialect='spark')}"
                )
            case _ if type(node) in _AGGREGATES:
                return self._aggregate(node)
            case exp.Anonymous() if node.name.lower() in _ANONYMOUS_AGGREGATES:
                return self._aggregate(node)
            case exp.Anonymous() if node.name.lower() == "percentile":
                raise UnsupportedSqlError(
                    f"percentile in {self.clause} takes a column and one percentage here; its frequency "
                    f"argument and an array of percentages are not supported: {node.sql(dialect='spark')}"
                )
            case exp.WithinGroup() if type(node.this) in _WITHIN_GROUP:
                return self._within_group(node)
            case exp.NullSafeEQ() | exp.NullSafeNEQ():  # a <=> b, a IS [NOT] DISTINCT FROM b
                same = self._registered(exp.EqualNull(this=node.this, expression=node.expression))
                return same if isinstance(node, exp.NullSafeEQ) else self._call("not", same)
            case exp.Grouping() | exp.GroupingId():
                return grouping_call(node, self.convert)
            case exp.Func() | exp.DPipe():
                return self._registered(node)
        raise UnsupportedSqlError(f"{spark_name(node)} in {self.clause} is not supported: {node.sql(dialect='spark')}")

    def _registered(self, node: exp.Expression) -> Expr:
        """A call of a function in the registry (planner/ir/functions), found by its Spark name."""
        name, arg_nodes = spark_call(node)
        function = lookup(name)
        if function is None:
            raise UnsupportedSqlError(
                f"function {name} in {self.clause} is not supported: {node.sql(dialect='spark')} "
                "(docs/supported-functions.md lists the supported functions)"
            )
        if function.refusal is not None:
            raise UnsupportedSqlError(f"{name} in {self.clause} cannot be maintained: {function.refusal}")
        try:
            function.check_arity(len(arg_nodes))
        except ArgumentCountError as error:
            raise UnsupportedSqlError(f"{self.clause}: {error}: {node.sql(dialect='spark')}") from None
        args = [self.convert(a) for a in arg_nodes]
        if function.rewrite is not None:
            try:
                return function.rewrite(self._call, *args)
            except UnsupportedArgumentError as error:
                raise UnsupportedSqlError(f"{self.clause}: {error}") from None
        return self._call(function.name, *args)

    def _negate(self, node: exp.Expression) -> Expr:
        """``-x``; a negated number is folded into a negative literal."""
        operand = self.convert(node)
        if isinstance(operand, Literal) and isinstance(operand.value, int) and operand.type in INTEGRAL:
            return literal_of_number(str(-operand.value))  # -2147483648 is an int again
        if isinstance(operand, Literal) and isinstance(operand.value, float | Decimal):
            return Literal(-operand.value, operand.type)
        return self._call("neg", operand)

    def _column(self, node: exp.Column) -> Column:
        if node.args.get("db") or node.args.get("catalog"):
            raise UnsupportedSqlError(
                f"{self.clause}: columns qualified by a database are not supported: {node.sql()}"
            )
        if isinstance(node.this, exp.Star):
            raise UnsupportedSqlError(
                f"{node.sql()} in {self.clause} is not supported; * is allowed in SELECT and count(*)"
            )
        qualifier = node.table.lower() or None
        name = node.name.lower()
        scope: Scope | None = self.scope
        while scope is not None:
            column = scope.lookup(qualifier, name, self.clause)
            if column is not None:
                return column
            if scope is self.scope and qualifier is None and name in self.aliases:
                return self.aliases[name]
            scope = scope.parent
        shown = f"{qualifier}.{name}" if qualifier else name
        aliases = ", ".join(r.alias for r in self.scope.relations)
        raise UnknownColumnError(f"unknown column {shown} in {self.clause} (relations in scope: {aliases})")

    def _interval(self, node: exp.Interval) -> Literal:
        amount, unit = node.this.name, node.args.get("unit")
        unit_name = unit.name if isinstance(unit, exp.Var) else ""
        if not unit_name and len(amount.split()) == 2:
            amount, unit_name = amount.split()
        if unit_name.lower() not in _INTERVAL_UNITS or not amount.lstrip("-").isdigit():
            raise UnsupportedSqlError(
                f"interval {node.sql(dialect='spark')} in {self.clause} is not supported: "
                "only whole numbers of years, months, days, hours, minutes or seconds"
            )
        unit = _INTERVAL_UNITS[unit_name.lower()]
        return Literal((int(amount), unit), IntervalType(unit))

    def _not(self, node: exp.Expression) -> Expr:
        match node:
            case exp.Paren():
                return self._not(node.this)
            case exp.Like():
                return self._like(node, negated=True)
            case exp.Is():
                return self._is_null(node, negated=True)
            case exp.In():
                return self._in(node, negated=True)
            case exp.Exists():
                return Subquery(
                    "exists", self._subquery(node.this, "NOT EXISTS", single_column=False), negated=True, dtype=BOOLEAN
                )
        return self._call("not", self.convert(node))

    def _like(self, node: exp.Like, negated: bool) -> Expr:
        negated ^= bool(node.args.get("negate"))
        if node.args.get("escape") is not None:
            raise UnsupportedSqlError(f"LIKE ... ESCAPE in {self.clause} is not supported: {node.sql(dialect='spark')}")
        return self._call("not like" if negated else "like", self.convert(node.this), self.convert(node.expression))

    def _is_null(self, node: exp.Is, negated: bool) -> Expr:
        if not isinstance(node.expression, exp.Null):
            raise UnsupportedSqlError(
                f"{node.sql(dialect='spark')} in {self.clause} is not supported; only IS [NOT] NULL"
            )
        negated ^= bool(node.args.get("negate"))
        return self._call("is not null" if negated else "is null", self.convert(node.this))

    def _in(self, node: exp.In, negated: bool) -> Expr:
        operand = self.convert(node.this)
        if query := node.args.get("query"):
            return Subquery("in", self._subquery(query, "IN"), operand=operand, negated=negated, dtype=BOOLEAN)
        if node.args.get("unnest") or node.args.get("field"):
            raise UnsupportedSqlError(f"{node.sql(dialect='spark')} in {self.clause} is not supported")
        return self._call("not in" if negated else "in", operand, *(self.convert(v) for v in node.expressions))

    def _subquery(self, node: exp.Expression, what: str, single_column: bool = True) -> LogicalPlan:
        """The plan of a nested query; its unresolved names are correlated references into this scope."""
        plan = self.planner.query(node, self.scope, self.ctes)
        if single_column and len(output_names(plan)) != 1:
            raise UnsupportedSqlError(
                f"{what} in {self.clause} must select exactly one column, not {len(output_names(plan))}"
            )
        return plan

    def _case(self, node: exp.Case) -> Expr:
        # CASE x WHEN v THEN r is the searched CASE WHEN x = v THEN r.
        subject = self.convert(node.this) if node.this else None
        args: list[Expr] = []
        for branch in node.args["ifs"]:
            condition = self.convert(branch.this)
            args += [
                self._call("=", subject, condition) if subject is not None else condition,
                self.convert(branch.args["true"]),
            ]
        if (default := node.args.get("default")) is not None:
            args.append(self.convert(default))
        return self._call("case", *args)

    def _cast(self, node: exp.Cast) -> Expr:
        target = column_type(node.to)
        if target is None:
            raise UnsupportedSqlError(f"cast to {node.to.sql(dialect='spark')} in {self.clause} is not supported")
        operand = self.convert(node.this)
        # sqlglot reads every Spark CAST as a TryCast; only TRY_CAST is marked safe
        return (try_cast if node.args.get("safe") else explicit_cast)(operand, target, self.clause)

    def _extract(self, unit: str, date: exp.Expression) -> Expr:
        if unit in _EXTRACT_FUNCTIONS:  # EXTRACT(HOUR FROM ts) is hour(ts)
            return self._registered(exp.Anonymous(this=_EXTRACT_FUNCTIONS[unit], expressions=[date]))
        if unit not in _EXTRACT_UNITS:
            raise UnsupportedSqlError(f"EXTRACT({unit.upper()} ...) in {self.clause} is not supported")
        return self._call(f"extract_{unit}", self.convert(date))

    def _aggregate(self, node: exp.Expression, condition: exp.Expression | None = None) -> Expr:
        """An aggregate call, ``condition`` its FILTER (WHERE ...): planner/sql/aggregates.py."""
        written = node.sql(dialect="spark")
        if type(node) in _AGGREGATES:
            func = _AGGREGATES[type(node)]
        elif isinstance(node, exp.Anonymous) and node.name.lower() in _ANONYMOUS_AGGREGATES:
            func = _ANONYMOUS_AGGREGATES[node.name.lower()]
        elif isinstance(node, exp.Anonymous | exp.Any):
            func = SYNONYMS[node.name.lower() if isinstance(node, exp.Anonymous) else "any"]
        elif isinstance(node, _ORDER_DEPENDENT):
            raise order_dependent_refusal(written, self.clause)
        else:
            raise UnsupportedSqlError(f"FILTER applies to aggregate functions, not to {written} in {self.clause}")
        distinct, written_args = _aggregate_arguments(node)
        args = tuple(None if isinstance(a, exp.Star) else self.convert(a) for a in written_args)
        filter_expr = None if condition is None else self.convert(condition)
        parameters = ()
        if func == "median":
            parameters = (0.5, False)
        elif func == "percentile":
            parameters = (self._percentage(node.args["quantile"], node), False)
        return aggregate_call(func, args, distinct, filter_expr, self.clause, written, parameters)

    def _within_group(self, node: exp.WithinGroup) -> AggregateCall:
        """``percentile_cont(p) WITHIN GROUP (ORDER BY x [DESC])`` and ``percentile_disc``."""
        func = _WITHIN_GROUP[type(node.this)]
        order = node.expression
        keys = order.expressions if isinstance(order, exp.Order) else []
        if len(keys) != 1 or isinstance(keys[0].this, exp.Distinct):
            raise UnsupportedSqlError(
                f"{func} in {self.clause} orders by exactly one expression (as in Spark): {node.sql(dialect='spark')}"
            )
        arg = self.convert(keys[0].this)
        if contains_aggregate(arg):
            raise UnsupportedSqlError(f"nested aggregate functions in {self.clause} are not supported: {node.sql()}")
        parameters = (self._percentage(node.this.this, node), bool(keys[0].args.get("desc")))
        return typed_aggregate(func, arg, False, self.clause, parameters=parameters)

    def _percentage(self, node: exp.Expression, call: exp.Expression) -> float:
        """A percentile's percentage: a constant in [0, 1], as Spark's analyzer requires."""
        if isinstance(node, exp.Array):
            raise UnsupportedSqlError(
                f"{call.sql(dialect='spark')} in {self.clause}: an array of percentages (an ARRAY result) is not "
                "supported; write one percentile per percentage"
            )
        value = self.convert(node)
        if not (isinstance(value, Literal) and isinstance(value.value, int | float | Decimal)
                and not isinstance(value.value, bool)):
            raise UnsupportedSqlError(
                f"{call.sql(dialect='spark')} in {self.clause}: the percentage must be one numeric constant "
                "(Spark: NON_FOLDABLE_INPUT; an array of percentages is not supported here)"
            )
        if not 0 <= value.value <= 1:
            raise UnsupportedSqlError(
                f"{call.sql(dialect='spark')} in {self.clause}: the percentage must be between 0.0 and 1.0 "
                f"(Spark: VALUE_OUT_OF_RANGE), not {value.value}"
            )
        return float(value.value)


def _aggregate_arguments(node: exp.Expression) -> tuple[bool, list[exp.Expression]]:
    """Whether an aggregate call is DISTINCT, and its arguments as written (``*`` an ``exp.Star``)."""
    match node:
        case exp.Anonymous():
            first, rest = node.expressions[0] if node.expressions else None, node.expressions[1:]
        case exp.Any():
            first, rest = node.this.unnest(), []
        case _:
            first, rest = node.this, [node.expression] if node.args.get("expression") else node.expressions
    if isinstance(first, exp.Distinct):
        return True, [*first.expressions, *rest]
    return False, [first, *rest] if first is not None else list(rest)


def _constant_subquery(node: exp.Subquery) -> exp.Expression | None:
    """``e`` when ``node`` is ``(SELECT e)``: no FROM and no clause that could drop or repeat its one row."""
    select = node.this
    if not isinstance(select, exp.Select) or len(select.expressions) != 1:
        return None
    clauses = ("from_", "joins", "where", "group", "having", "qualify", "order", "limit", "offset", "distinct")
    if any(select.args.get(c) for c in clauses) or select.find(exp.AggFunc):
        return None
    value = select.expressions[0]
    return value.this if isinstance(value, exp.Alias) else value


def _literal(node: exp.Literal) -> Literal:
    if node.is_string:
        return Literal(node.this, STRING)
    return literal_of_number(node.this)
