"""The empty database on the Spark runner: a set operation over global aggregates holds both rows
before any change, the rows the aggregates send it at start coming through the query's first
micro-batch (operators/runtime/spark_start.py), and equals DuckDB after every batch of a stream
that ends with its tables empty again."""

from __future__ import annotations

import pytest

from planner.workloads.random_changes import emptied, random_changes
from tests.maintenance.checking import check_against_recomputation
from tests.maintenance.test_empty_database import SHOP

# slow: each starts streaming queries on the Spark runner (a minute or more on 2 cores); the same views
# run against the reference on the local runners in `make test`, and here in `make test-all`
pytestmark = [pytest.mark.spark, pytest.mark.slow]


@pytest.fixture(scope="module")
def spark():
    from operators.runtime.spark_session import make_spark_session

    return make_spark_session(app="spark-ivm-empty-database-tests")


def test_a_union_all_of_global_aggregates_on_spark(spark, tmp_path):
    sql = "select 'c' as kind, count(*) as n from customers union all select 'o', count(*) from orders"
    updates = emptied(random_changes(SHOP, ("customers", "orders"), seed=4, size=40, domain=5))
    view = check_against_recomputation(sql, SHOP, updates, batch_size=25, engine="spark", spark=spark,
                                       work_dir=str(tmp_path), informative_at_least=0.9)
    assert view.result() == [("c", 0), ("o", 0)]
