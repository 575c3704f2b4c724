"""VWAP (RPAI tree) and TPC-H Q17 (per-key index) on the Spark runner equal recomputation after every batch."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from catalog.orderbook import orderbook_catalog
from catalog.tpch import tpch_catalog
from planner.workloads.orderbook_streams import make_orderbook_stream
from tests.maintenance.checking import check_against_recomputation

pytestmark = pytest.mark.spark

EXAMPLES = Path(__file__).parents[2] / "examples"


@pytest.fixture(scope="module")
def spark():
    from operators.runtime.spark_session import make_spark_session

    return make_spark_session(app="spark-ivm-tests")


def test_vwap_on_spark(spark, tmp_path):
    sql = (EXAMPLES / "orderbook" / "vwap.sql").read_text()
    check_against_recomputation(sql, orderbook_catalog(), make_orderbook_stream(600, seed=8), batch_size=150,
                                engine="spark", spark=spark, work_dir=str(tmp_path))


def test_q17_variant_on_spark(spark, tpch_streams, tmp_path):
    sql = (EXAMPLES / "tpch" / "q17.sql").read_text().replace("  and p_container = 'MED BOX'\n", "")
    check_against_recomputation(sql, tpch_catalog(), tpch_streams["random"], batch_size=45_000,
                                engine="spark", spark=spark, work_dir=str(tmp_path))


@pytest.mark.slow
def test_the_rpai_stage_counts_its_key_on_spark_as_locally(spark, tmp_path):
    """The paged RPAI tree's state is counted by its meta page (``SparkRunner.state_size``): one key, as
    the local runner holds, while rows are live."""
    from planner.view import MaintainedView

    sql = (EXAMPLES / "orderbook" / "vwap.sql").read_text()
    updates = make_orderbook_stream(300, seed=2)
    with MaintainedView(sql, orderbook_catalog(), engine="spark", spark=spark, work_dir=str(tmp_path)) as view, \
            MaintainedView(sql, orderbook_catalog()) as local:
        assert Counter(view.apply(updates)) == Counter(local.apply(updates))
        sizes = {name: n for name, n in view.runner.state_size().items() if not name.startswith("validate ")}
        assert sizes == local.runner.state_size() and sum(sizes.values()) == 1
