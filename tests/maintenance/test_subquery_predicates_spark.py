"""The subquery predicates of rules/not_in.py, rules/exists_inequality.py and rules/outer_join_subqueries.py
against ``spark.sql`` itself (DuckDB stands in for it in their fast tests: this checks that DuckDB's
NOT IN reads NULLs as Spark's does), and the null-aware NOT IN on the Spark runner, whose
uncorrelated view is keyed by a constant."""

from __future__ import annotations

import pytest

from catalog.ddl import catalog_from_ddl
from tests.maintenance import test_exists_inequality, test_null_aware_not_in, test_outer_joins
from tests.maintenance.checking import check_against_spark

# slow: a Spark session (and, on the Spark runner, a streaming query: a minute or more on 2 cores)
pytestmark = [pytest.mark.spark, pytest.mark.slow]

CASES = {
    "NOT IN, uncorrelated, both sides nullable": (
        test_null_aware_not_in.QUERIES["uncorrelated, both sides nullable"], test_null_aware_not_in.DDL,
        lambda: test_null_aware_not_in.not_in_stream(6, 240), 0.3),
    "NOT IN, correlated": (test_null_aware_not_in.QUERIES["correlated"], test_null_aware_not_in.DDL,
                           lambda: test_null_aware_not_in.not_in_stream(7, 240), 0.3),
    "EXISTS a later order": (test_exists_inequality.QUERIES["EXISTS a later order of the same customer"],
                             test_exists_inequality.DDL, lambda: test_exists_inequality._stream(5)[1], 0.5),
    "NOT EXISTS over a FULL JOIN's padded side": (
        test_outer_joins.QUERIES["NOT EXISTS correlated with a FULL JOIN's padded side"][0], test_outer_joins.DDL,
        lambda: test_outer_joins.outer_stream(6, 200), 0.4),
    "NOT IN over a FULL JOIN's padded side": (
        test_outer_joins.QUERIES["NOT IN over the padded side (null-aware), correlated"][0], test_outer_joins.DDL,
        lambda: test_outer_joins.outer_stream(7, 200), 0.4),
}


@pytest.fixture(scope="module")
def spark():
    from operators.runtime.spark_session import make_spark_session

    return make_spark_session(app="spark-ivm-subquery-predicates")


@pytest.mark.parametrize("name", list(CASES))
def test_subquery_predicates_equal_spark_after_every_batch(spark, name, tmp_path):
    sql, ddl, stream, informative = CASES[name]
    view = check_against_spark(sql, catalog_from_ddl(ddl), stream(), 20, spark, str(tmp_path),
                               informative_at_least=informative)
    assert view.result()


def test_the_spark_runner_maintains_a_null_aware_not_in(spark, tmp_path):
    sql, ddl, stream, informative = CASES["NOT IN, uncorrelated, both sides nullable"]
    view = check_against_spark(sql, catalog_from_ddl(ddl), stream(), 40, spark, str(tmp_path), engine="spark",
                               informative_at_least=informative)
    assert view.result()
