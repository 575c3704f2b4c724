"""The SQL front end: TPC-H queries become naive logical plans with every column resolved."""

from __future__ import annotations

import datetime
import shutil
import subprocess
import sys
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest
import sqlglot

from catalog.schema import UnknownColumnError, UnknownTableError
from catalog.tpch import TPCH_TABLES, tpch_catalog
from operators.lowering.expr_eval import compile_expr
from planner.ir.expressions import AggregateCall, Call, Column, Expr, Literal, Subquery, conjuncts, walk
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
from planner.sql.calls import DIALECT
from planner.sql.errors import AmbiguousColumnError, UnsupportedSqlError
from planner.sql.spark_names import spark_name
from planner.sql.statements import parse_sql

QUERY_DIR = Path(__file__).resolve().parents[2] / "examples" / "tpch"
QUERY_FILES = sorted(QUERY_DIR.glob("q*.sql"))


def tpch(number: int) -> LogicalPlan:
    return parse_sql((QUERY_DIR / f"q{number:02d}.sql").read_text(), tpch_catalog())


def plan_of(sql: str) -> LogicalPlan:
    return parse_sql(sql, tpch_catalog())


def node_expressions(node: LogicalPlan) -> Iterator[Expr]:
    match node:
        case Filter(condition=condition) | Join(condition=condition) if condition is not None:
            yield condition
        case Project(items=items):
            yield from (item.expr for item in items)
        case Aggregate(group_by=group_by, aggregates=aggregates):
            yield from (item.expr for item in (*group_by, *aggregates))
        case Sort(keys=keys):
            yield from (key.expr for key in keys)


def subqueries(plan: LogicalPlan) -> list[Subquery]:
    """Subquery expressions of ``plan``'s own nodes (not those nested inside them)."""
    return [
        e
        for node in plan.walk()
        for top in node_expressions(node)
        for e in walk(top)
        if isinstance(e, Subquery)
    ]


def all_plans(plan: LogicalPlan) -> Iterator[LogicalPlan]:
    """``plan`` and, recursively, the plans of every subquery in it."""
    yield plan
    for sub in subqueries(plan):
        yield from all_plans(sub.plan)


def scans(plan: LogicalPlan) -> list[Scan]:
    return [node for node in plan.walk() if isinstance(node, Scan)]


def column_refs(plan: LogicalPlan) -> set[Column]:
    return {
        e
        for node in plan.walk()
        for top in node_expressions(node)
        for e in walk(top)
        if isinstance(e, Column)
    }


def column_conditions(sub: Subquery) -> set[Expr]:
    """Every subexpression of the subquery's WHERE conditions."""
    return {e for n in sub.plan.walk() if isinstance(n, Filter) for e in walk(n.condition)}


def output_columns(plan: LogicalPlan) -> set[Column]:
    """Every (alias, column) some Scan or SubqueryAlias of ``plan`` outputs."""
    out: set[Column] = set()
    for node in plan.walk():
        if isinstance(node, Scan):
            out |= set(node.output)
        elif isinstance(node, SubqueryAlias):
            inner = node.child
            while not isinstance(inner, Project | SetOperation):
                inner = inner.children[0]
            names = [item.name for item in inner.items] if isinstance(inner, Project) else []
            out |= {Column(node.alias, name) for name in names}
    return out


@pytest.mark.parametrize("path", QUERY_FILES, ids=lambda p: p.stem)
def test_every_tpch_query_parses_with_every_qualified_column_bound(path: Path) -> None:
    plan = parse_sql(path.read_text(), tpch_catalog())
    visible = set().union(*(output_columns(p) for p in all_plans(plan)))
    for sub_plan in all_plans(plan):
        qualified = {c for c in column_refs(sub_plan) if c.table is not None}
        assert qualified <= visible, f"{path.stem}: unbound columns {qualified - visible}"


def test_all_22_tpch_queries_are_present() -> None:
    assert [p.stem for p in QUERY_FILES] == [f"q{n:02d}" for n in range(1, 23)]


def test_q3_is_a_filter_over_three_cross_joined_scans_under_a_three_key_aggregate() -> None:
    plan = tpch(3)
    assert isinstance(plan, Limit) and plan.count == 10
    sort, project = plan.child, plan.child.child
    assert sort.keys == (SortKey(Column(None, "revenue"), False), SortKey(Column(None, "o_orderdate"), True))
    aggregate = project.child
    assert isinstance(aggregate, Aggregate)
    assert [g.name for g in aggregate.group_by] == ["l_orderkey", "o_orderdate", "o_shippriority"]
    assert aggregate.group_by[0].expr == Column("lineitem", "l_orderkey")
    assert project.items[1] == NamedExpr("revenue", Column(None, "_a0"))
    where = aggregate.child
    assert isinstance(where, Filter)
    assert [(s.table, s.alias) for s in scans(where)] == [(t, t) for t in ("customer", "orders", "lineitem")]
    assert all(isinstance(j, Join) and j.kind == "cross" for j in (where.child, where.child.left))
    equalities = {c for c in walk(where.condition) if isinstance(c, Call) and c.op == "="}
    assert Call("=", (Column("customer", "c_custkey"), Column("orders", "o_custkey"))) in equalities
    assert Call("=", (Column("lineitem", "l_orderkey"), Column("orders", "o_orderkey"))) in equalities


def test_scans_list_all_catalog_columns_in_order() -> None:
    (scan,) = scans(tpch(6))
    assert scan.columns == tpch_catalog().table("lineitem").column_names


def test_q1_folds_date_minus_interval_and_names_aggregates_in_order() -> None:
    project = tpch(1).child
    aggregate = project.child
    assert aggregate.child.condition == Call(
        "<=", (Column("lineitem", "l_shipdate"), Literal(datetime.date(1998, 9, 2), "date"))
    )
    assert [a.name for a in aggregate.aggregates] == [f"_a{i}" for i in range(8)]
    assert aggregate.aggregates[-1].expr == AggregateCall("count", None)
    assert project.items[2] == NamedExpr("sum_qty", Column(None, "_a0"))


def test_q7_reads_nation_twice_under_distinct_aliases() -> None:
    nations = [s for s in scans(tpch(7)) if s.table == "nation"]
    assert sorted(s.alias for s in nations) == ["n1", "n2"]


def test_q7_derived_table_columns_are_qualified_by_its_alias() -> None:
    aggregate = tpch(7).child.child
    assert isinstance(aggregate.child, SubqueryAlias) and aggregate.child.alias == "shipping"
    assert aggregate.group_by[2] == NamedExpr("l_year", Column("shipping", "l_year"))


def test_q15_view_is_a_cte_read_through_subquery_alias_revenue0() -> None:
    plan = tpch(15)
    aliases = [n for p in all_plans(plan) for n in p.walk() if isinstance(n, SubqueryAlias)]
    assert [a.alias for a in aliases] == ["revenue0", "revenue0"]
    (scalar,) = subqueries(plan)
    assert scalar.kind == "scalar"
    assert scalar.plan.child.aggregates[0].expr == AggregateCall("max", Column("revenue0", "total_revenue"))


def test_q13_is_a_left_join_with_the_comment_filter_in_on() -> None:
    joins = [n for n in tpch(13).walk() if isinstance(n, Join)]
    assert [j.kind for j in joins] == ["left"]
    assert Call("not like", (Column("orders", "o_comment"), Literal("%special%requests%", "string"))) in set(
        walk(joins[0].condition)
    )


def test_q17_correlated_subquery_refers_to_the_outer_part_alias() -> None:
    (scalar,) = subqueries(tpch(17))
    assert [s.alias for s in scans(scalar.plan)] == ["lineitem"]
    assert Call("=", (Column("lineitem", "l_partkey"), Column("part", "p_partkey"))) in set(
        walk(scalar.plan.child.child.condition)
    )


def test_q20_innermost_subquery_correlates_with_the_partsupp_of_its_parent() -> None:
    (in_suppliers,) = subqueries(tpch(20))
    assert in_suppliers.kind == "in" and in_suppliers.operand == Column("supplier", "s_suppkey")
    in_parts, availability = subqueries(in_suppliers.plan)
    assert in_parts.operand == Column("partsupp", "ps_partkey")
    refs = column_refs(availability.plan)
    assert {Column("partsupp", "ps_partkey"), Column("partsupp", "ps_suppkey")} <= refs
    assert "partsupp" not in {s.alias for s in scans(availability.plan)}


def test_q22_not_exists_correlates_with_the_outer_customer() -> None:
    derived = next(n for n in tpch(22).walk() if isinstance(n, SubqueryAlias))
    scalar, not_exists = subqueries(derived)
    assert scalar.kind == "scalar"
    assert {c for c in column_refs(scalar.plan) if c.table} <= output_columns(scalar.plan), "uncorrelated"
    assert not_exists.kind == "exists" and not_exists.negated
    assert Call("=", (Column("orders", "o_custkey"), Column("customer", "c_custkey"))) in column_conditions(
        not_exists
    )


def test_q21_exists_and_not_exists_use_their_own_lineitem_aliases() -> None:
    exists, not_exists = subqueries(tpch(21))
    assert (exists.negated, not_exists.negated) == (False, True)
    assert Call("<>", (Column("l2", "l_suppkey"), Column("l1", "l_suppkey"))) in column_conditions(exists)
    assert Call("<>", (Column("l3", "l_suppkey"), Column("l1", "l_suppkey"))) in column_conditions(not_exists)


def test_q16_not_in_subquery_and_count_distinct() -> None:
    plan = tpch(16)
    (not_in,) = subqueries(plan)
    assert (not_in.kind, not_in.negated, not_in.operand) == ("in", True, Column("partsupp", "ps_suppkey"))
    aggregate = plan.child.child
    assert aggregate.aggregates[0].expr == AggregateCall(
        "count", Column("partsupp", "ps_suppkey"), distinct=True
    )


def test_q11_having_becomes_a_filter_between_aggregate_and_project() -> None:
    project = tpch(11).child
    having = project.child
    assert isinstance(having, Filter) and isinstance(having.child, Aggregate)
    assert having.condition.args[0] == Column(None, "_a0")
    assert having.condition.args[1].kind == "scalar"


def test_unknown_table_is_reported_by_name() -> None:
    with pytest.raises(UnknownTableError, match="'nations'"):
        plan_of("select n_name from nations")


def test_unknown_column_names_the_column_and_the_clause() -> None:
    with pytest.raises(UnknownColumnError, match="n_nme in WHERE"):
        plan_of("select n_name from nation where n_nme = 'FRANCE'")
    with pytest.raises(UnknownColumnError, match=r"n1\.r_name in SELECT"):
        plan_of("select n1.r_name from nation n1")


def test_ambiguous_column_names_both_candidates() -> None:
    with pytest.raises(AmbiguousColumnError, match=r"n1\.n_name and n2\.n_name"):
        plan_of("select n_name from nation n1, nation n2")


def test_window_functions_plan_a_window_under_the_select_list() -> None:
    plan = plan_of("select n_name, sum(n_nationkey) over (partition by n_regionkey) as s from nation")
    window = plan.child
    assert (window.node_name, window.frame.unit, window.functions[0].name) == ("Window", "partition", "_w0")
    assert plan.items[1].expr == Column(None, "_w0")


def test_window_functions_outside_the_select_list_are_refused_naming_the_clause() -> None:
    with pytest.raises(UnsupportedSqlError, match=r"window functions \(OVER\) in WHERE are not supported"):
        plan_of("select n_name from nation where rank() over (order by n_name) = 1")


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("select n_name from nation left semi join region on n_regionkey = r_regionkey "
         "right join supplier on s_nationkey = n_nationkey", "LEFT SEMI or LEFT ANTI JOIN before a RIGHT OUTER JOIN"),
        ("select n_name from nation, lateral (select 1) x", "LATERAL in FROM"),
        ("select n_name from nation qualify n_nationkey > 1", "QUALIFY"),
        (
            "select n_regionkey, n_name from nation group by n_regionkey",
            "n_name in SELECT is neither in GROUP BY",
        ),
        ("select n_name from nation where count(*) > 1", "aggregate functions are not allowed in WHERE"),
        ("select n_name from nation except all select r_name from region", "EXCEPT ALL"),
        ("select n_name from nation n, nation n", "alias 'n' is used twice"),
        ("select soundex(n_name) from nation", "function soundex in SELECT"),
        ("select rand() from nation", "rand in SELECT cannot be maintained"),
        ("select n_name[1] from nation", r"n_name\[1\] in SELECT is not supported"),
        ("select n_name from range(10)", r"table-valued function range in FROM is not supported"),
        ("insert into nation select * from nation", "INSERT statements are not supported"),
        (
            "select n_name from nation where n_nationkey in (select * from region)",
            "IN in WHERE must select exactly one",
        ),
    ],
)
def test_unsupported_sql_is_rejected_naming_the_clause(sql: str, message: str) -> None:
    with pytest.raises(UnsupportedSqlError, match=message):
        plan_of(sql)


def where_of(sql: str) -> Expr:
    return next(n for n in plan_of(sql).walk() if isinstance(n, Filter)).condition


@pytest.mark.parametrize(
    ("predicate", "expected"),
    [
        ("o_orderdate < date '1995-01-31' + interval '1' month", Literal(datetime.date(1995, 2, 28), "date")),
        ("o_orderdate < date '1996-02-29' + interval '1' year", Literal(datetime.date(1997, 2, 28), "date")),
        ("o_orderdate < date '1995-03-01' - interval '1' day", Literal(datetime.date(1995, 2, 28), "date")),
        (
            "o_orderdate < interval '2' months + date '1995-11-15'",
            Literal(datetime.date(1996, 1, 15), "date"),
        ),
        ("o_orderdate < cast('1995-01-01' as date)", Literal(datetime.date(1995, 1, 1), "date")),
    ],
)
def test_date_constants_are_folded(predicate: str, expected: Literal) -> None:
    assert where_of(f"select o_orderkey from orders where {predicate}").args[1] == expected


@pytest.mark.parametrize(
    ("day", "op", "amount", "unit", "expected"),
    [
        ("2024-01-31", "+", 1, "month", datetime.date(2024, 2, 29)),
        ("2023-03-31", "-", 1, "month", datetime.date(2023, 2, 28)),
        ("2024-02-29", "+", 1, "year", datetime.date(2025, 2, 28)),
        ("1995-03-15", "-", 90, "day", datetime.date(1994, 12, 15)),
    ],
)
def test_folded_and_evaluated_date_arithmetic_agree(
    day: str, op: str, amount: int, unit: str, expected: datetime.date
) -> None:
    """Constant folding and row evaluation share one date ± interval (Spark's month-end clamping)."""
    sql = f"select o_orderkey from orders where o_orderdate < date '{day}' {op} interval '{amount}' {unit}"
    column = Column("o", "o_orderdate")
    evaluated = compile_expr(Call(op, (column, Literal((amount, unit), f"interval {unit}"))), {column: 0})
    assert where_of(sql).args[1] == Literal(expected, "date")
    assert evaluated((datetime.date.fromisoformat(day),)) == expected


def test_expression_forms_map_to_calls() -> None:
    o = "orders"
    condition = where_of(
        "select o_orderkey from orders where case o_orderstatus when 'F' then 1 else 0 end = 1"
        " and o_totalprice not between -1 and 2.5 and o_clerk not in ('a', 'b') and o_comment is not null"
        " and extract(year from o_orderdate) = year(o_orderdate) and substring(o_clerk, 1, 2) = 'Cl'"
    )
    status, price, clerk, comment, year, prefix = conjuncts(condition)
    when = Call("=", (Column(o, "o_orderstatus"), Literal("F", "string")))
    assert status.args[0] == Call("case", (when, Literal(1, "int"), Literal(0, "int")))
    assert price == Call(
        "not",
        # the constants are cast to the column's DECIMAL(15,2) at plan time, as Spark's analyzer does
        (Call("between", (Column(o, "o_totalprice"), Literal(Decimal("-1.00"), "decimal(15,2)"),
                          Literal(Decimal("2.50"), "decimal(15,2)"))),),
    )
    assert clerk == Call("not in", (Column(o, "o_clerk"), Literal("a", "string"), Literal("b", "string")))
    assert comment == Call("is not null", (Column(o, "o_comment"),))
    assert year.args[0] == year.args[1] == Call("extract_year", (Column(o, "o_orderdate"),))
    assert prefix.args[0] == Call("substring", (Column(o, "o_clerk"), Literal(1, "int"), Literal(2, "int")))


def test_group_by_and_order_by_accept_aliases_and_positions() -> None:
    plan = plan_of(
        "select substring(c_phone, 1, 2) as code, count(*) as n from customer"
        " group by code having n > 1 order by 2 desc, code"
    )
    sort, project = plan, plan.child
    assert sort.keys == (SortKey(Column(None, "n"), False), SortKey(Column(None, "code"), True))
    having, aggregate = project.child, project.child.child
    assert aggregate.group_by == (
        NamedExpr(
            "_g0", Call("substring", (Column("customer", "c_phone"), Literal(1, "int"), Literal(2, "int")))
        ),
    )
    assert having.condition == Call(">", (Column(None, "_a0"), Literal(1, "bigint")))  # COUNT is a bigint
    assert project.items == (NamedExpr("code", Column(None, "_g0")), NamedExpr("n", Column(None, "_a0")))


def test_order_by_an_unselected_column_sorts_on_a_hidden_column_dropped_above_the_sort() -> None:
    by_column = plan_of("select n_name from nation order by n_regionkey")
    by_count = plan_of("select n_regionkey from nation group by n_regionkey order by count(*)")
    assert by_column.items == (NamedExpr("n_name", Column(None, "n_name")),)
    assert by_column.child.keys == (SortKey(Column(None, "_sort0")),)
    assert by_column.child.child.items[1] == NamedExpr("_sort0", Column("nation", "n_regionkey"))
    assert by_count.child.keys == (SortKey(Column(None, "_sort0")),)
    assert by_count.child.child.items[1] == NamedExpr("_sort0", Column(None, "_a0"))
    assert by_count.child.child.child.aggregates == (NamedExpr("_a0", AggregateCall("count", None)),)


def test_group_keys_are_named_by_column_or_numbered_when_computed() -> None:
    sql = "select n1.n_name, n2.n_name, n1.n_regionkey + 1 from nation n1, nation n2 group by n1.n_name, n2.n_name, 3"
    aggregate = plan_of(sql).child
    assert [g.name for g in aggregate.group_by] == ["n_name", "_g0", "_g1"]
    assert aggregate.group_by[1].expr == Column("n2", "n_name")


def test_distinct_star_and_explicit_joins() -> None:
    plan = plan_of("select distinct * from nation join region on n_regionkey = r_regionkey")
    assert isinstance(plan, Distinct)
    assert [i.name for i in plan.child.items] == [
        "n_nationkey",
        "n_name",
        "n_regionkey",
        "n_comment",
        "r_regionkey",
        "r_name",
        "r_comment",
    ]
    join = plan.child.child
    assert (join.kind, join.condition) == (
        "inner",
        Call("=", (Column("nation", "n_regionkey"), Column("region", "r_regionkey"))),
    )


def test_a_join_without_on_is_a_cross_join_and_a_left_join_needs_on() -> None:
    assert plan_of("select n_name from nation join region").child == Join(
        "cross", None, *scans(plan_of("select n_name from nation, region"))
    )
    with pytest.raises(UnsupportedSqlError, match="left join needs an ON condition"):
        plan_of("select n_name from nation left join region")


def test_syntax_errors_are_reported_with_their_position() -> None:
    with pytest.raises(UnsupportedSqlError, match="cannot parse the SQL .* line 1, column"):
        plan_of("select n_name from nation where")


@pytest.mark.parametrize(("sql", "message"), [
    ("selec n_name from nation", "Invalid expression / Unexpected token at line 1, column 14:\n"
                                 "  selec n_name from nation\n"
                                 "               ^^^^"),
    ("select n_name\nfrom nation\nwhere n_nationkey = = 1", "an expression is missing at line 3, column 21:\n"
                                                             "  where n_nationkey = = 1\n"
                                                             "                      ^"),
])
def test_a_parse_error_shows_the_offending_line_with_a_caret_under_the_token(sql: str, message: str) -> None:
    with pytest.raises(UnsupportedSqlError) as error:
        plan_of(sql)
    assert str(error.value) == f"cannot parse the SQL (Spark dialect): {message}"


def test_an_unterminated_string_is_a_parse_error_not_a_traceback() -> None:
    with pytest.raises(UnsupportedSqlError, match="cannot parse the SQL .*Error tokenizing"):
        plan_of("select 'n_name from nation")


@pytest.mark.parametrize(("sql", "name"), [
    ("current_date()", "function current_date"), ("date_trunc('month', d)", "function date_trunc"),
    ("max_by(a, b)", "function max_by"), ("a || b", "operator ||"), ("a rlike 'x'", "operator RLIKE"),
    ("percentile_approx(x, 0.5)", "function percentile_approx"), ("foo_bar(x)", "function foo_bar"), ("x[1]", "x[1]"),
])
def test_refusals_name_a_construct_as_spark_writes_it_not_as_sqlglot_classes_it(sql: str, name: str) -> None:
    assert spark_name(sqlglot.parse_one(sql, read=DIALECT)) == name


@pytest.mark.parametrize(("sql", "message"), [
    ("select n_name from nation where n_name > date '2019-04-14' + n_name", r"operator \+ is not defined for DATE '2019-04-14' \(date\)"),
    ("select n_nationkey + 'a' from nation", r"the value 'a' of the type STRING cannot be cast to BIGINT"),
    ("select n_name from nation where n_name < date '2019-13-01'", r"the value '2019-13-01' of the type STRING cannot be cast to DATE"),
])
def test_refusals_show_values_as_sql_literals(sql: str, message: str) -> None:
    with pytest.raises(UnsupportedSqlError, match=message):
        plan_of(sql)


def test_semi_join_hides_its_right_side_from_the_select_list() -> None:
    sql = "select * from nation left semi join region on n_regionkey = r_regionkey"
    plan = plan_of(sql)
    # planned as WHERE EXISTS (SELECT 1 FROM region WHERE n_regionkey = r_regionkey)
    assert plan.child.condition.kind == "exists" and not plan.child.condition.negated
    assert [i.name for i in plan.items] == list(tpch_catalog().table("nation").column_names)


def test_derived_table_column_list_renames_outputs() -> None:
    plan = plan_of("select k from (select n_nationkey, n_name from nation) as t (k, name)")
    alias = plan.child
    assert alias.child.items == (
        NamedExpr("k", Column(None, "n_nationkey")),
        NamedExpr("name", Column(None, "n_name")),
    )
    assert plan.items == (NamedExpr("k", Column("t", "k")),)


def test_set_operations_sort_by_output_names() -> None:
    plan = plan_of("select n_name as name from nation union select r_name from region order by name limit 3")
    assert isinstance(plan, Limit) and plan.count == 3
    assert plan.child.keys == (SortKey(Column(None, "name")),)
    assert plan.child.child.kind == "union"


@pytest.fixture(scope="module")
def tpch_duckdb(tmp_path_factory: pytest.TempPathFactory):
    duckdb = pytest.importorskip("duckdb")
    generator = shutil.which("tpchgen-cli", path=str(Path(sys.executable).parent)) or shutil.which(
        "tpchgen-cli"
    )
    if generator is None:
        pytest.skip("tpchgen-cli is not installed")
    data_dir = tmp_path_factory.mktemp("tpch001")
    subprocess.run(
        [generator, "parquet", "-s", "0.01", "--output-dir", str(data_dir)], check=True, capture_output=True
    )
    connection = duckdb.connect()
    for table in TPCH_TABLES:
        connection.execute(f"create view {table} as select * from read_parquet('{data_dir / table}.parquet')")
    yield connection
    connection.close()


@pytest.mark.parametrize("path", QUERY_FILES, ids=lambda p: p.stem)
def test_tpch_query_runs_on_duckdb_with_the_planned_output_columns(path: Path, tpch_duckdb) -> None:
    sql = path.read_text()
    result = tpch_duckdb.execute(sql)
    columns = [d[0] for d in result.description]
    assert result.fetchall(), f"{path.stem} returned no rows on SF 0.01"
    plan = parse_sql(sql, tpch_catalog())
    while not isinstance(plan, Project):
        plan = plan.children[0]
    assert columns == [item.name for item in plan.items]
