"""The Spark runner's JVM delta strategy (``operators/runtime/delta_sql``) equals ``spark.sql`` after
every micro-batch, on streams with deletes, updates, dangling foreign keys and empty results."""

from __future__ import annotations

from pathlib import Path

import pytest

from catalog.tpch import tpch_catalog
from tests.maintenance.checking import check_against_spark

pytestmark = pytest.mark.spark

TPCH = Path(__file__).parents[2] / "examples" / "tpch"


@pytest.fixture(scope="module")
def spark():
    from operators.runtime.spark_session import make_spark_session

    return make_spark_session(app="spark-ivm-tests")


@pytest.mark.parametrize("query, kind", [("q03", "random"), ("q03", "window")])
def test_tpch_delta_strategy_equals_spark_sql(spark, tpch_streams, query, kind, tmp_path):
    view = check_against_spark((TPCH / f"{query}.sql").read_text(), tpch_catalog(), tpch_streams[kind],
                               batch_size=40_000, spark=spark, work_dir=str(tmp_path), engine="spark",
                               spark_strategy="jvm", informative_at_least=0.5)
    assert view.runner.delta_plan is not None
