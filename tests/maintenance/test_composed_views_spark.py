"""Derived tables of windows and set operations read as relations, against ``spark.sql`` itself
(DuckDB stands in for it in test_composed_views.py): a LAG grouped on the Spark runner, whose window
and aggregate stage states cross pickles between micro-batches, and a grouped UNION ALL and a
windowed derived table joined to a table on the local runner."""

from __future__ import annotations

import pytest

from tests.maintenance.checking import check_against_spark
from tests.maintenance.test_composed_views import CATALOG, QUERIES, composed_stream

# slow: a Spark session (and, on the Spark runner, a streaming query: a minute or more on 2 cores); the
# same views run against DuckDB on both local runners in `make test`
pytestmark = [pytest.mark.spark, pytest.mark.slow]


@pytest.fixture(scope="module")
def spark():
    from operators.runtime.spark_session import make_spark_session

    return make_spark_session(app="spark-ivm-composed-views")


@pytest.mark.parametrize("name", ["UNION ALL under GROUP BY", "latest order per customer joined to customers"])
def test_composed_views_equal_spark_after_every_batch(spark, name, tmp_path):
    view = check_against_spark(QUERIES[name], CATALOG, composed_stream(7, 200), 20, spark, str(tmp_path),
                               informative_at_least=0.7)
    assert view.result()


def test_the_spark_runner_maintains_a_grouped_lag(spark, tmp_path):
    view = check_against_spark(QUERIES["LAG then WHERE IS NOT NULL then GROUP BY"], CATALOG, composed_stream(8, 160), 40,
                               spark, str(tmp_path), engine="spark", informative_at_least=0.7)
    assert view.result()
