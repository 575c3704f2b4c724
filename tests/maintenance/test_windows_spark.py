"""Window functions on the Spark runner equal DuckDB after every batch: the window stage runs as a
generic keyed stage there (its per-partition index pickled per key, operators/runtime/spark_stage_processors.py)."""

from __future__ import annotations

import pytest

from tests.maintenance.checking import check_against_recomputation
from tests.maintenance.test_windows import CATALOG, ORDERS_QUERIES, _orders_stream

# slow: each starts streaming queries on the Spark runner (a minute or more on 2 cores); the same views
# run against the reference on the local runners in `make test`, and here in `make test-all`
pytestmark = [pytest.mark.spark, pytest.mark.slow]


@pytest.fixture(scope="module")
def spark():
    from operators.runtime.spark_session import make_spark_session

    return make_spark_session(app="spark-ivm-windows")


@pytest.mark.parametrize("name", ["top 2 per customer", "rank below 3 over ties and NULLs", "lag and lead",
                                  "running sums, RANGE over ties"])
def test_window_on_spark_equals_recomputation(spark, tmp_path, name):
    check_against_recomputation(ORDERS_QUERIES[name], CATALOG, _orders_stream(seed=11, steps=200), batch_size=40,
                                engine="spark", spark=spark, work_dir=str(tmp_path), informative_at_least=0.9)


def test_ntile_equals_spark_sql(spark, tmp_path):
    """NTILE's buckets as Spark's NTile assigns them (the local runner against ``spark.sql`` itself, not DuckDB)."""
    from tests.maintenance.checking import check_against_spark

    check_against_spark(ORDERS_QUERIES["NTILE per customer and over everything"], CATALOG,
                        _orders_stream(seed=12, steps=200), 25, spark, str(tmp_path), informative_at_least=0.9)
