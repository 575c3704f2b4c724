"""Outer joins against ``spark.sql`` itself (DuckDB stands in for it in test_outer_joins.py): a
three-table LEFT chain, a FULL JOIN with a condition beyond the key and a grouped LEFT JOIN of
derived tables on the local runner, and the chain on the Spark runner, whose outer-join stage
state crosses pickles between micro-batches."""

from __future__ import annotations

import pytest

from catalog.ddl import catalog_from_ddl
from tests.maintenance.checking import check_against_spark
from tests.maintenance.test_outer_joins import DDL, QUERIES, outer_stream

# slow: a Spark session (and, on the Spark runner, streaming queries: a minute or more on 2 cores); the
# same views run against DuckDB on both local runners in `make test`
pytestmark = [pytest.mark.spark, pytest.mark.slow]

NAMES = ("three-table LEFT chain", "FULL JOIN with a condition beyond the key",
         "LEFT JOIN of two grouped derived tables, WHERE on the padding", "RIGHT JOIN of a grouped derived table")


@pytest.fixture(scope="module")
def spark():
    from operators.runtime.spark_session import make_spark_session

    return make_spark_session(app="spark-ivm-outer-joins")


@pytest.mark.parametrize("name", NAMES)
def test_outer_joins_equal_spark_after_every_batch(spark, name, tmp_path):
    view = check_against_spark(QUERIES[name][0], catalog_from_ddl(DDL), outer_stream(3), 40, spark, str(tmp_path),
                               informative_at_least=0.4)
    assert view.result()


def test_the_spark_runner_maintains_a_left_chain(spark, tmp_path):
    view = check_against_spark(QUERIES["three-table LEFT chain"][0], catalog_from_ddl(DDL), outer_stream(4, 160), 40,
                               spark, str(tmp_path), engine="spark", informative_at_least=0.4)
    assert view.result()
