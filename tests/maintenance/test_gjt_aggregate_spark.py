"""A GJT aggregate read off the root's ring payload on the Spark runner (the ring ``GjtStage`` and
``PayloadAggregateStage`` pickled into transformWithState), equal to recomputation after every batch."""

from __future__ import annotations

import pytest

from tests.maintenance.checking import check_against_recomputation
from tests.maintenance.test_gjt_aggregate import CATALOG, TAKEN, random_stream

pytestmark = pytest.mark.spark


def test_ring_read_aggregate_on_spark(tmp_path):
    from operators.runtime.spark_session import make_spark_session

    spark = make_spark_session(app="spark-ivm-tests")
    check_against_recomputation(TAKEN["keyed (equality + inequality)"], CATALOG, random_stream(seed=5, size=150),
                                batch_size=50, engine="spark", spark=spark, work_dir=str(tmp_path),
                                informative_at_least=0.6)
