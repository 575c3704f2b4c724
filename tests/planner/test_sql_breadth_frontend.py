"""Front-end forms of issue 9's SQL breadth item: NATURAL JOIN / USING name rules (Spark's, checked
with spark.sql on pyspark 4.3), GREATEST / LEAST, and the refusal of ALL / ANY / SOME subqueries."""

from __future__ import annotations

import pytest

from catalog.ddl import catalog_from_ddl
from catalog.schema import UnknownColumnError
from catalog.tpch import tpch_catalog
from operators.lowering.expr_eval import compile_expr
from planner.ir.expressions import Call, Column
from planner.ir.logical import Project
from planner.sql.errors import AmbiguousColumnError, UnsupportedSqlError
from planner.sql.scope import output_names
from planner.sql.statements import parse_sql

CATALOG = catalog_from_ddl("""
CREATE TABLE t (b INT PRIMARY KEY, a INT, c STRING);
CREATE TABLE u (a INT PRIMARY KEY, d INT, c STRING);
CREATE TABLE u2 (d INT PRIMARY KEY, a INT, c STRING);
CREATE TABLE v (a INT PRIMARY KEY, e INT);
CREATE TABLE z (z INT PRIMARY KEY);
""")


@pytest.mark.parametrize(
    ("sql", "names"),
    [
        # Spark: the join columns once, first; then the left side's others; then the right side's.
        ("select * from t join u using (a)", ("a", "b", "c", "d", "c")),
        ("select * from t natural join u", ("a", "c", "b", "d")),
        ("select * from t join u using (a) join v using (a)", ("a", "b", "c", "d", "c", "e")),
        # alias.*: its USING columns first (a right side's too, which SELECT * leaves out).
        ("select t.*, u.* from t join u using (a)", ("a", "b", "c", "a", "d", "c")),
        ("select t.*, u2.* from t natural join u2", ("a", "c", "b", "a", "c", "d")),
        ("select u2.* from t join u2 using (a)", ("a", "d", "c")),
        ("select v.*, t.* from t join u2 using (a) join v using (a)", ("a", "e", "a", "b", "c")),
        ("select * from t join u2 using (c, a)", ("c", "a", "b", "d")),
        # no common name: a cross join, as in Spark
        ("select * from t natural join z", ("b", "a", "c", "z")),
        ("select a, t.a, u.a from t left join u using (a)", ("a", "a", "a")),
        # RIGHT and FULL: the same order (checked with spark.sql), the other side's USING column hidden
        ("select * from t full join u using (a)", ("a", "b", "c", "d", "c")),
        ("select t.*, u.* from t right join u using (a)", ("a", "b", "c", "a", "d", "c")),
        ("select a, t.a, u.a from t full join u using (a)", ("a", "a", "a")),
    ],
)
def test_using_lists_the_join_columns_once_and_first(sql, names):
    assert output_names(parse_sql(sql, CATALOG)) == names


def test_an_unqualified_using_column_is_the_left_sides():
    plan = parse_sql("select a from t join u using (a)", CATALOG)
    assert isinstance(plan, Project) and plan.items[0].expr == Column("t", "a")


@pytest.mark.parametrize(("kind", "merged"), [
    ("right", Column("u", "a")),
    ("full", Call("coalesce", (Column("t", "a"), Column("u", "a")))),
])
def test_a_right_or_full_join_using_column_is_the_kept_sides_as_in_spark(kind, merged):
    """Spark's commonNaturalJoinProcessing: r.k for a RIGHT JOIN, coalesce(l.k, r.k) for a FULL JOIN."""
    plan = parse_sql(f"select a from t {kind} join u using (a)", CATALOG)
    assert isinstance(plan, Project) and plan.items[0].expr == merged and plan.items[0].name == "a"


@pytest.mark.parametrize(
    ("sql", "error", "message"),
    [
        ("select c from t join u using (a)", AmbiguousColumnError, "column c in SELECT is ambiguous"),
        ("select * from t join v using (e)", UnknownColumnError, "USING column e is not a column of the left side"),
        ("select * from t join v using (b)", UnknownColumnError, "USING column b is not a column of the right side"),
    ],
)
def test_using_errors_name_the_column(sql, error, message):
    with pytest.raises(error, match=message):
        parse_sql(sql, CATALOG)


@pytest.mark.parametrize(
    ("values", "greatest", "least"),
    [((1, None, 3), 3, 1), ((None, None, None), None, None), ((None, 2, None), 2, 2), ((5, 5, 4), 5, 4)],
)
def test_greatest_and_least_skip_nulls_as_spark(values, greatest, least):
    """Spark: NULL arguments are skipped; the result is NULL only when every argument is NULL."""
    catalog = catalog_from_ddl("CREATE TABLE w (x INT, y INT, z INT)")
    plan = parse_sql("select greatest(x, y, z), least(x, y, z) from w", catalog)
    layout = {Column("w", n): i for i, n in enumerate("xyz")}
    assert [compile_expr(item.expr, layout)(values) for item in plan.items] == [greatest, least]


def test_greatest_of_one_argument_is_refused_as_spark_does():
    with pytest.raises(UnsupportedSqlError, match="SELECT: greatest takes at least 2 arguments, not 1"):
        parse_sql("select greatest(n_nationkey) from nation", tpch_catalog())


@pytest.mark.parametrize("quantifier", ["all", "any", "some"])
@pytest.mark.parametrize("op", [">", "=", "<>"])
def test_quantified_subqueries_are_refused_because_spark_does_not_parse_them(quantifier, op):
    sql = f"select n_name from nation where n_regionkey {op} {quantifier} (select r_regionkey from region)"
    with pytest.raises(UnsupportedSqlError, match="Spark SQL 4 does not parse them"):
        parse_sql(sql, tpch_catalog())
