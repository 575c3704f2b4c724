"""Views given as Spark DataFrames: planned from Catalyst's analyzed plan (planner/sql/catalyst.py).

The TPC-H tables are registered, empty, in a throwaway database with their keys in ``ivm.*``
properties, and the catalog is loaded from the session. Each query shape is a function of a table
lookup, so the same DataFrame code builds both the view (over the catalog tables) and, after every
batch of a change stream, the recomputation it must equal (over the tables as the stream defines
them, handed to Spark as DataFrames): ``df.collect()`` is the reference, not our own SQL. Every
test but the Spark Connect one starts a Spark session (``-m spark``).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date

import pytest
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.window import Window

from catalog.spark import catalog_from_spark
from catalog.tpch import tpch_catalog
from operators.runtime.spark_session import make_spark_session
from operators.runtime.stream import batches
from planner.compiler import compile_plan, compile_query
from planner.sql.catalyst import dataframe_sql, logical_plan_from_dataframe
from planner.sql.errors import UnsupportedDataFrameError, UnsupportedSqlError
from planner.sql.statements import parse_sql
from planner.view import MaintainedView
from planner.workloads.oracle import DuckDBOracle, Reference, StreamTables, assert_matches_reference
from planner.workloads.tpch_streams import make_stream
from tests.catalog.test_spark_catalog import create_table, spark_columns, tpch_properties

DB = "ivm_test_catalyst"
Tables = Callable[[str], DataFrame]
CUTOFF = date(1995, 3, 15)


@pytest.fixture(scope="module")
def spark(tmp_path_factory):
    session = make_spark_session(app="test-catalyst-frontend")
    warehouse = tmp_path_factory.mktemp("warehouse")
    session.sql(f"CREATE DATABASE {DB} LOCATION '{warehouse / DB}'")
    for table in tpch_catalog().tables.values():
        create_table(session, f"{DB}.{table.name}", spark_columns(table), tpch_properties(table))
    yield session
    session.sql(f"DROP DATABASE {DB} CASCADE")


@pytest.fixture(scope="module")
def catalog(spark):
    return catalog_from_spark(spark, database=DB)


def catalog_tables(spark) -> Tables:
    return lambda name: spark.table(f"{DB}.{name}")


def q3(table: Tables) -> DataFrame:
    """TPC-H Q3 as DataFrame code, its ORDER BY made total so the top 10 has no ties to break."""
    c, o, li = table("customer").alias("c"), table("orders").alias("o"), table("lineitem").alias("l")
    return (
        c.filter(c.c_mktsegment == "BUILDING")
        .join(o, c.c_custkey == o.o_custkey)
        .join(li, li.l_orderkey == o.o_orderkey)
        .filter((o.o_orderdate < F.lit(CUTOFF)) & (li.l_shipdate > F.lit(CUTOFF)))
        .groupBy(li.l_orderkey, o.o_orderdate, o.o_shippriority)
        .agg(F.sum(li.l_extendedprice * (1 - li.l_discount)).alias("revenue"))
        .orderBy(F.desc("revenue"), "o_orderdate", "l_orderkey")
        .limit(10)
    )


Q3_SQL = """
SELECT l.l_orderkey, o.o_orderdate, o.o_shippriority, sum(l.l_extendedprice * (1 - l.l_discount)) AS revenue
FROM customer c JOIN orders o ON c.c_custkey = o.o_custkey JOIN lineitem l ON l.l_orderkey = o.o_orderkey
WHERE c.c_mktsegment = 'BUILDING' AND o.o_orderdate < DATE '1995-03-15' AND l.l_shipdate > DATE '1995-03-15'
GROUP BY l.l_orderkey, o.o_orderdate, o.o_shippriority
ORDER BY revenue DESC, o_orderdate, l_orderkey
LIMIT 10
"""


def busy_nations(table: Tables) -> DataFrame:
    """Orders per nation of the ordering customer, over derived columns and with a HAVING."""
    o, c, n = table("orders"), table("customer"), table("nation")
    return (
        o.withColumn("net", o.o_totalprice * F.lit(0.9))
        .join(c, o.o_custkey == c.c_custkey)
        .join(n, c.c_nationkey == n.n_nationkey)
        .groupBy(n.n_name)
        .agg(F.count(F.lit(1)).alias("orders"), F.sum("net").alias("net"))
        .filter(F.col("orders") > 40)
    )


def finished_customers_outside_the_middle_east(table: Tables) -> DataFrame:
    """Semi and anti joins with filtered right sides."""
    c, o, n = table("customer"), table("orders"), table("nation")
    return (
        c.join(o.filter(o.o_orderstatus == "F"), c.c_custkey == o.o_custkey, "left_semi")
        .join(n.filter(n.n_regionkey == 4), c.c_nationkey == n.n_nationkey, "left_anti")
        .select("c_custkey", "c_name", "c_nationkey")
    )


def open_orders_and_rich_customers(table: Tables) -> DataFrame:
    """A left outer join of two filtered tables: customers under the threshold read as NULL."""
    o, c = table("orders"), table("customer")
    return (
        o.filter(o.o_orderstatus == "O")
        .join(c.filter(c.c_acctbal > 5000), o.o_custkey == c.c_custkey, "left")
        .select("o_orderkey", "o_totalprice", "c_name")
    )


def open_orders_full_join_rich_customers(table: Tables) -> DataFrame:
    """A full outer join of two filtered tables: each filter stays below the join (a derived table),
    where a WHERE above it or a condition in ON would keep or drop other padded rows."""
    o, c = table("orders"), table("customer")
    return (
        o.filter(o.o_orderstatus == "O")
        .join(c.filter(c.c_acctbal > 9000), o.o_custkey == c.c_custkey, "full_outer")
        .select("o_orderkey", "c_custkey", "c_name")
    )


def customers_with_finished_orders_and_no_debt(table: Tables) -> DataFrame:
    """A set difference (``subtract`` is EXCEPT DISTINCT)."""
    o, c = table("orders"), table("customer")
    finished = o.filter(o.o_orderstatus == "F").select(o.o_custkey.alias("custkey"))
    return finished.subtract(c.filter(c.c_acctbal < 0).select("c_custkey"))


@pytest.fixture(scope="module")
def stream(tpch_sf001_tables):
    return make_stream(tpch_sf001_tables, tpch_catalog(), "random", seed=11)


@pytest.mark.spark
@pytest.mark.parametrize(
    "shape",
    [
        q3,
        busy_nations,
        finished_customers_outside_the_middle_east,
        open_orders_and_rich_customers,
        open_orders_full_join_rich_customers,
        customers_with_finished_orders_and_no_debt,
    ],
)
def test_a_dataframe_view_equals_the_dataframe_recomputed_after_every_batch(spark, catalog, stream, shape):
    sql = dataframe_sql(shape(catalog_tables(spark)), catalog)
    ordered = shape is q3
    compared = informative = 0
    with DuckDBOracle(catalog) as state, MaintainedView(sql, catalog, strict=True) as view:
        state.load_stream(StreamTables.from_updates(catalog, stream))
        for number, batch in enumerate(batches(stream, len(stream) // 3 + 1)):
            view.apply(batch)
            state.as_of(batch[-1].seq)
            rows = tuple(tuple(row) for row in shape(lambda name: spark.createDataFrame(state.table(name))).collect())
            # a total ORDER BY makes every row its own tie group, so the order is compared exactly
            groups = (1,) * len(rows) if ordered else ((len(rows),) if rows else ())
            expected = Reference(rows, groups, None)
            assert_matches_reference(view.result(), expected, f"{shape.__name__} after batch {number}\n{sql}")
            compared += 1
            informative += expected.is_informative()
    assert compared == 3 and informative == compared


@pytest.mark.spark
def test_q3_as_a_dataframe_has_the_logical_and_maintenance_plans_of_q3_as_sql(spark, catalog):
    from_dataframe = compile_plan("q3 (DataFrame)", logical_plan_from_dataframe(q3(catalog_tables(spark)), catalog),
                                  catalog)
    from_sql = compile_query(Q3_SQL, catalog)
    assert from_dataframe.logical == from_sql.logical
    assert from_dataframe.plan == from_sql.plan


@pytest.mark.spark
def test_a_dataframe_written_like_its_sql_has_the_same_logical_plan(spark, catalog):
    o, c = catalog_tables(spark)("orders"), catalog_tables(spark)("customer")
    df = (
        o.alias("o").join(c.alias("c"), F.col("o.o_custkey") == F.col("c.c_custkey"))
        .filter(F.col("c.c_acctbal") > 0)
        .groupBy("c.c_nationkey")
        .agg(F.max("o.o_totalprice").alias("top"))
        .orderBy("c_nationkey")
    )
    sql = """SELECT c.c_nationkey, max(o.o_totalprice) AS top FROM orders AS o JOIN customer AS c
             ON o.o_custkey = c.c_custkey WHERE c.c_acctbal > 0 GROUP BY c.c_nationkey ORDER BY c_nationkey"""
    assert logical_plan_from_dataframe(df, catalog) == parse_sql(sql, catalog)


@pytest.mark.spark
def test_a_view_over_a_catalog_table_is_read_through_to_its_definition(spark, catalog):
    spark.sql(f"CREATE VIEW {DB}.big_orders AS SELECT o_orderkey, o_custkey FROM {DB}.orders WHERE o_totalprice > 100")
    try:
        df = spark.table(f"{DB}.big_orders").groupBy("o_custkey").count()
        sql = "SELECT o_custkey, count(1) AS count FROM orders WHERE o_totalprice > 100 GROUP BY o_custkey"
        assert logical_plan_from_dataframe(df, catalog) == parse_sql(sql, catalog)
    finally:
        spark.sql(f"DROP VIEW {DB}.big_orders")


@pytest.mark.spark
def test_window_functions_udfs_and_partial_dropduplicates_are_refused_by_name(spark, catalog):
    o = catalog_tables(spark)("orders")
    ranked = o.withColumn("rank", F.rank().over(Window.partitionBy("o_custkey").orderBy("o_totalprice")))
    with pytest.raises(UnsupportedDataFrameError, match="with a Window node: Window"):
        logical_plan_from_dataframe(ranked, catalog)
    double = F.udf(lambda x: 2 * x, "bigint")
    with pytest.raises(UnsupportedDataFrameError, match="PythonUDF expression .a user-defined function"):
        logical_plan_from_dataframe(o.select(double("o_orderkey").alias("twice")), catalog)
    with pytest.raises(UnsupportedDataFrameError, match="Rand expression .a non-deterministic function"):
        logical_plan_from_dataframe(o.filter(F.rand() < 0.5), catalog)
    with pytest.raises(UnsupportedDataFrameError, match="Deduplicate on some of the columns"):
        logical_plan_from_dataframe(o.dropDuplicates(["o_custkey"]), catalog)


@pytest.mark.spark
def test_relations_that_are_not_catalog_tables_are_refused(spark, catalog, tmp_path):
    with pytest.raises(UnsupportedDataFrameError, match="with a Range node"):
        logical_plan_from_dataframe(spark.range(3), catalog)
    spark.range(3).write.parquet(str(tmp_path / "files"))
    with pytest.raises(UnsupportedDataFrameError, match="LogicalRelation node .a relation that is not a catalog table"):
        logical_plan_from_dataframe(spark.read.parquet(str(tmp_path / "files")), catalog)


@pytest.mark.spark
def test_sql_front_end_refusals_reach_the_user_with_the_rendered_sql(spark, catalog):
    o, c = catalog_tables(spark)("orders"), catalog_tables(spark)("customer")
    with pytest.raises(UnsupportedSqlError) as raised:
        logical_plan_from_dataframe(o.join(c, o.o_custkey == c.c_custkey, "full_outer")
                                    .select(F.soundex(c.c_name).alias("m")), catalog)
    assert "function soundex" in str(raised.value)
    assert "FULL JOIN customer" in raised.value.__notes__[0]


class NotADataFrame:
    """Neither classic (no ``_jdf``) nor Spark Connect (no ``_plan``): e.g. a pandas frame."""

    columns = ["o_orderkey"]


def test_an_object_that_is_not_a_spark_dataframe_is_refused_with_a_pointer_to_sql_text():
    with pytest.raises(UnsupportedDataFrameError, match="Spark Connect plan.*give the view as SQL text"):
        logical_plan_from_dataframe(NotADataFrame(), tpch_catalog())
