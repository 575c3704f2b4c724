"""Spark's aggregate functions maintained by spark-ivm equal ``spark.sql`` itself (the reference
DuckDB only stands in for): after every batch of the random insert/delete stream of
test_aggregate_functions.py, on the local runner and on the Spark runner (whose stages cross
pickles), and with the result types Spark gives."""

from __future__ import annotations

import pytest

from planner.ir.expressions import type_of
from planner.sql.statements import parse_sql
from tests.maintenance.checking import check_against_spark
from tests.maintenance.test_aggregate_functions import CATALOG, sale_stream

# slow: each starts streaming queries on the Spark runner (a minute or more on 2 cores); the same views
# run against the reference on the local runners in `make test`, and here in `make test-all`
pytestmark = [pytest.mark.spark, pytest.mark.slow]

QUERIES = {
    "count_if and the bool_and/bool_or family": """
        select g, count_if(paid) as ci, every(paid) as ev, some(qty > 1) as so, any(status = 'void') as an,
               bool_and(score > 0) as ba, bool_or(paid) filter (where qty > 0) as bo
        from sale group by g""",
    "FILTER, max_by/min_by and count(DISTINCT a, b) together": """
        select g, count(*) filter (where status = 'paid') as n, sum(amount) filter (where paid) as s,
               max_by(score, rank) as ms, min_by(status, label) filter (where qty > 0) as ml,
               count(distinct status, qty) as d, count(status, day) as c, min(score) as lo, max(paid) as hi
        from sale group by g""",
    "global, over a join": """
        select count_if(city = 'oslo') as o, max_by(city, at) as c, bool_and(paid) as b,
               count(distinct city, status) as d
        from sale, shop where shop_id = id""",
}


@pytest.fixture(scope="module")
def spark():
    from operators.runtime.spark_session import make_spark_session

    return make_spark_session(app="spark-ivm-aggregates")


@pytest.mark.parametrize("name", list(QUERIES))
def test_aggregates_equal_spark_after_every_batch(spark, name, tmp_path):
    view = check_against_spark(QUERIES[name], CATALOG, sale_stream(seed=len(name), size=400), 40, spark,
                               str(tmp_path), informative_at_least=0.6)
    assert view.result()


def test_the_spark_runner_maintains_them(spark, tmp_path):
    sql = QUERIES["FILTER, max_by/min_by and count(DISTINCT a, b) together"]
    view = check_against_spark(sql, CATALOG, sale_stream(seed=2, size=240), 60, spark, str(tmp_path),
                               engine="spark", informative_at_least=0.5)
    assert view.result()


TYPED = ["count_if(paid)", "every(paid)", "bool_or(qty > 1)", "max_by(amount, day)", "min_by(day, status)",
         "max_by(score, rank)", "count(distinct status, day)", "count(status, day)", "count(*) filter (where paid)",
         "sum(amount) filter (where paid)", "avg(qty) filter (where paid)", "avg(amount) filter (where qty > 1)",
         "min(paid)", "max(at) filter (where paid)", "min_by(paid, label)"]


def test_result_types_are_sparks(spark):
    table = CATALOG.table("sale")
    schema = ", ".join(f"{c.name} {str(c.type).upper()}" for c in table.columns)
    spark.createDataFrame([], schema).createOrReplaceTempView("sale")
    frame = spark.sql("select " + ", ".join(f"{sql} as v{i}" for i, sql in enumerate(TYPED)) + " from sale")
    ours = [str(type_of(item.expr)) for item in parse_sql(f"select {', '.join(TYPED)} from sale", CATALOG).items]
    theirs = [field.dataType.simpleString() for field in frame.schema.fields]
    assert ours == theirs


def test_a_global_min_max_on_the_spark_runner_equals_spark(spark, tmp_path):
    """A global MIN/MAX of every ordered type runs with its values in pages on the Spark runner
    (operators/stages/aggregate_pages.py): NULLs, NaN and infinities, duplicates, the table emptied
    and refilled; equal to spark.sql after every micro-batch."""
    sql = """select min(score) as lo, max(score) as hi, min(amount) as a, max(day) as d, min(label) as l,
                    max_by(label, rank) as m, count(*) as n, sum(qty) as q
             from sale where status is distinct from 'void'"""
    view = check_against_spark(sql, CATALOG, sale_stream(seed=5, size=300), 30, spark, str(tmp_path),
                               engine="spark", informative_at_least=0.5)
    assert view.result()
