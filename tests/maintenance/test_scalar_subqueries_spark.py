"""Spark as the reference for scalar subqueries as one-row views: ``spark.sql`` over the same tables
returns what the maintained view holds, and raises SCALAR_SUBQUERY_TOO_MANY_ROWS exactly where the
view rejects the batch with that error."""

from __future__ import annotations

from collections import Counter

import pytest

from catalog.ddl import catalog_from_ddl
from operators.runtime.stream import Update, batches
from operators.stages.scalar import ScalarSubqueryTooManyRowsError
from planner.view import MaintainedView
from tests.maintenance.test_scalar_subqueries_local import DDL, FRANCE_TWICE, QUERIES, _random_stream

pytestmark = pytest.mark.spark



@pytest.fixture(scope="module")
def spark():
    from operators.runtime.spark_session import make_spark_session

    return make_spark_session(app="spark-ivm-scalar-tests")


def _spark_result(spark, tables: dict[str, list[tuple]], sql: str) -> list[tuple]:
    """``spark.sql(sql)`` over ``tables`` (registered as temporary views; the DDL's types are INT and STRING)."""
    for name, table in catalog_from_ddl(DDL).tables.items():
        schema = ", ".join(f"{c.name} {str(c.type).upper()}" for c in table.columns)
        spark.createDataFrame(tables.get(name, []), schema).createOrReplaceTempView(name)
    return [tuple(row) for row in spark.sql(sql).collect()]


def _tables(applied: list[Update]) -> dict[str, list[tuple]]:
    """The tables after ``applied`` (all valid: the view raises on invalid input)."""
    counts: dict[str, Counter] = {}
    for update in applied:
        counts.setdefault(update.table, Counter())[update.row] += update.op
    return {name: list(rows.elements()) for name, rows in counts.items()}


def _key(row: tuple) -> tuple:
    return tuple((value is not None, value) for value in row)


@pytest.mark.parametrize("name", ["= a subquery that is no aggregate", "aggregate over <> MAX", *(
    pytest.param(name, marks=pytest.mark.slow) for name in ("<> AVG", "two thresholds", "UNION of thresholds"))])
def test_the_view_equals_spark_sql_every_few_batches(spark, name):
    sql = QUERIES[name]
    applied: list[Update] = []
    with MaintainedView(sql, catalog_from_ddl(DDL)) as view:
        for number, batch in enumerate(batches(_random_stream(1), 9)):
            view.apply(batch)
            applied.extend(batch)
            if number % 8 == 7:
                assert sorted(view.result(), key=_key) == sorted(_spark_result(spark, _tables(applied), sql), key=_key), (
                    f"after batch {number}")


def test_spark_raises_the_error_the_view_rejects_a_batch_with(spark):
    sql = QUERIES["= a subquery that is no aggregate"]
    second_france = Update(4, "nation", 1, (2, "FRANCE", 1))
    with MaintainedView(sql, catalog_from_ddl(DDL)) as view:
        view.apply(FRANCE_TWICE)
        with pytest.raises(ScalarSubqueryTooManyRowsError) as ours:
            view.apply([second_france])
    # the tables as the rejected batch would have left them
    tables: dict[str, list[tuple]] = {}
    for update in [*FRANCE_TWICE, second_france]:
        tables.setdefault(update.table, []).append(update.row)
    with pytest.raises(Exception, match=ScalarSubqueryTooManyRowsError.error_class) as theirs:
        _spark_result(spark, tables, sql)
    assert ours.value.error_class in str(theirs.value)
