"""TPC-H Q3 maintained by the Spark runner (one Structured Streaming query of chained
transformWithState stages) equals DuckDB's recomputation after every micro-batch."""

from __future__ import annotations

from pathlib import Path

import pytest

from catalog.tpch import tpch_catalog
from tests.maintenance.checking import check_against_recomputation

pytestmark = pytest.mark.spark

Q3 = (Path(__file__).parents[2] / "examples" / "tpch" / "q03.sql").read_text()


@pytest.fixture(scope="module")
def spark():
    from operators.runtime.spark_session import make_spark_session

    return make_spark_session(app="spark-ivm-tests")


# the insert-only stream is in the slow set: the other two streams cover its paths and add deletes (CI time)
@pytest.mark.parametrize("kind", ["window", pytest.param("insert", marks=pytest.mark.slow), "random"])
def test_q3_on_spark_equals_recomputation_after_every_batch(spark, tpch_streams, kind, tmp_path):
    check_against_recomputation(Q3, tpch_catalog(), tpch_streams[kind], batch_size=40_000, engine="spark",
                                spark=spark, work_dir=str(tmp_path))
