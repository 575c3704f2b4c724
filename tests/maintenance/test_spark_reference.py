"""Spark itself as the reference: maintained results equal ``spark.sql(query)`` (a batch query over
the tables as the stream defines them) after every batch, ORDER BY in order, DECIMAL exact.

``make test`` runs a sample (two or three batches each, one shared session):
decimal arithmetic with AVG and ORDER BY (Q1), a top-k with ties possible at the limit (Q3), a
correlated nested aggregate (Q17 with parameters that select rows) and the order book's VWAP (an
RPAI tree). The slow set compares all 22 TPC-H queries and the order book's queries (NQ2 is
rejected by Spark itself: see its test). The view runs on the local runner here: the Spark runner
is checked against DuckDB in test_q3_spark, and against spark.sql on every query in
test_every_query_spark; here Spark is the reference, not the engine.

Where DuckDB and Spark differ, Spark wins: DuckDB types AVG of a DECIMAL and DECIMAL division as
DOUBLE, Spark as DECIMAL (scale 6, rounded half up) — ``values_agree`` accepts a DECIMAL that is
DuckDB's double rounded to its scale, and compares exactly against Spark; DuckDB puts NULLs last in
ascending order, Spark first — the DuckDB reference is set to Spark's order.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from catalog.orderbook import orderbook_catalog
from catalog.tpch import tpch_catalog
from planner.workloads.orderbook_streams import make_orderbook_stream, make_r_stream
from tests.maintenance.checking import check_against_spark

pytestmark = pytest.mark.spark

EXAMPLES = Path(__file__).parents[2] / "examples"
TPCH = EXAMPLES / "tpch"
ORDERBOOK = EXAMPLES / "orderbook"

# The stream each TPC-H query is compared on: one where its result is non-empty after at least half
# of the compared batches (the live-dimension stream keeps nation and region; Q19's parts and
# lineitems meet more often on the random stream).
STREAM_OF = {number: "live" for number in range(1, 23)} | {19: "random"}


@pytest.fixture(scope="module")
def spark():
    from operators.runtime.spark_session import make_spark_session

    return make_spark_session(app="spark-ivm-tests")


def tpch_query(name: str) -> str:
    return (TPCH / f"{name}.sql").read_text()


@pytest.mark.parametrize("name", ["q01", "q03", "variants/q17_dense"])
def test_sampled_tpch_queries_equal_spark_after_every_batch(spark, tpch_streams, name, tmp_path):
    check_against_spark(tpch_query(name), tpch_catalog(), tpch_streams["live"], 75_000, spark, str(tmp_path),
                        informative_at_least=0.5)


def test_vwap_equals_spark_after_every_batch(spark, tmp_path):
    check_against_spark((ORDERBOOK / "vwap.sql").read_text(), orderbook_catalog(), make_orderbook_stream(600, seed=8),
                        200, spark, str(tmp_path), informative_at_least=0.5)


@pytest.mark.slow
@pytest.mark.parametrize("number", range(1, 23))
def test_every_tpch_query_equals_spark_on_a_stream_where_it_is_not_empty(spark, tpch_streams, number, tmp_path):
    kind = STREAM_OF[number]
    sql = tpch_query("variants/q17_dense" if number == 17 else f"q{number:02d}")
    check_against_spark(sql, tpch_catalog(), tpch_streams[kind], 25_000 if kind == "live" else 30_000, spark,
                        str(tmp_path), informative_at_least=0.5)


@pytest.mark.slow
def test_q17_with_the_specifications_parameters_equals_spark(spark, tpch_streams, tmp_path):
    """Empty at SF 0.01 (no Brand#23 MED BOX lineitem): compared, but its variant above is the check."""
    check_against_spark(tpch_query("q17"), tpch_catalog(), tpch_streams["live"], 50_000, spark, str(tmp_path))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["vwap", "sq1", "sq2", "psp", "mst", "nq1"])
def test_order_book_queries_equal_spark(spark, name, tmp_path):
    check_against_spark((ORDERBOOK / f"{name}.sql").read_text(), orderbook_catalog(),
                        make_orderbook_stream(600, 400, seed=4), 100, spark, str(tmp_path), informative_at_least=0.5)


@pytest.mark.slow
def test_example_2_1_equals_spark(spark, tmp_path):
    """Its equality (half the total b in one group) holds now and then: 7 of 30 batches measured."""
    check_against_spark((ORDERBOOK / "ex21.sql").read_text(), orderbook_catalog(), make_r_stream(300, seed=5), 10,
                        spark, str(tmp_path), informative_at_least=0.2)


@pytest.mark.slow
def test_nq2_is_rejected_by_spark(spark):
    """NQ2's innermost subquery reads the outermost row (``b.broker_id``, two levels up), which
    Spark's analyzer does not resolve: ``spark.sql`` rejects the query that the engine maintains
    (test_nested_local). Spark is the reference, so the engine should refuse NQ2 as written too;
    until it does, this test records the disagreement instead of comparing results."""
    from pyspark.errors import AnalysisException

    spark.createDataFrame([], "t bigint, id bigint, broker_id int, volume bigint, price bigint") \
        .createOrReplaceTempView("bids")
    try:
        with pytest.raises(AnalysisException, match="UNRESOLVED_COLUMN"):
            spark.sql((ORDERBOOK / "nq2.sql").read_text()).collect()
    finally:
        spark.catalog.dropTempView("bids")
