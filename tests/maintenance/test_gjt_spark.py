"""An inequality join on the Spark runner, both ways, equal to recomputation after every batch: a GJT
split into a REDUCT stage keyed by s.f feeding the ENUMERATE stage (two chained GjtStages), and the
forced materializing fallback (constant-key binary joins filtered by their inequality)."""

from __future__ import annotations

import pytest

from tests.maintenance.checking import check_against_recomputation
from tests.maintenance.test_gjt_local import CATALOG, QUERIES, random_stream

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def spark():
    from operators.runtime.spark_session import make_spark_session

    return make_spark_session(app="spark-ivm-tests")


@pytest.mark.parametrize("strategy", [None, "binary"], ids=["gjt", "binary fallback"])
def test_inequality_join_on_spark(spark, tmp_path, strategy):
    check_against_recomputation(QUERIES["subtree below N keyed by f=i"], CATALOG, random_stream(seed=5, size=150),
                                batch_size=50, engine="spark", spark=spark, work_dir=str(tmp_path),
                                informative_at_least=0.6, join_strategy=strategy)
