"""A projection kept factorized on a view tree (rules/factorized_output.py) on the Spark runner equals
recomputation after every batch: the push mode's delta-enumerated changes feed the result table."""

from __future__ import annotations

import pytest

from tests.maintenance.checking import check_against_recomputation
from tests.maintenance.test_factorized_output import QUERIES
from tests.maintenance.test_gjt_local import CATALOG, random_stream

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def spark():
    from operators.runtime.spark_session import make_spark_session

    return make_spark_session(app="spark-ivm-tests")


def test_factorized_view_tree_on_spark(spark, tmp_path):
    sql = QUERIES["three atoms on one variable"]
    view = check_against_recomputation(sql, CATALOG, random_stream(seed=4, size=240, nulls=0.1), batch_size=60,
                                       engine="spark", spark=spark, work_dir=str(tmp_path), informative_at_least=0.75)
    assert view.result()
