"""The triangle count (rules/heavy_light.py, IVM^ε) on the Spark runner equals DuckDB's recomputation
after every batch: the self-join of one edge table, a short skewed insert/delete stream. The
stage's state (partitioned relations and views) goes through the state store pickled."""

from __future__ import annotations

import pytest

from catalog.ddl import catalog_from_ddl
from planner.workloads.triangle import triangle_stream
from tests.maintenance.checking import check_against_recomputation
from tests.maintenance.test_heavy_light_queries import DDL, SELF_JOIN

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def spark():
    from operators.runtime.spark_session import make_spark_session

    return make_spark_session(app="spark-ivm-tests")


def test_triangle_count_on_spark(spark, tmp_path):
    updates = triangle_stream(("edges",), 240, seed=4)
    view = check_against_recomputation(SELF_JOIN, catalog_from_ddl(DDL), updates, batch_size=60, engine="spark",
                                       spark=spark, work_dir=str(tmp_path), informative_at_least=1.0)
    assert view.result() and view.result()[0][0] > 0
