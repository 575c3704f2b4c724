"""Spark's aggregate calls in the front end (planner/sql/aggregates.py): each law gives the plan of its
right-hand side, the result types are Spark's, and what Spark rejects or what cannot be maintained
is refused in one line naming it."""

from __future__ import annotations

import pytest

from catalog.ddl import catalog_from_ddl
from planner.ir.expressions import AggregateCall, type_of, walk
from planner.ir.logical import Aggregate
from planner.sql.errors import UnsupportedSqlError
from planner.sql.statements import parse_sql

CATALOG = catalog_from_ddl(
    "CREATE TABLE sale (g INT, status STRING, amount DECIMAL(10,2), day DATE, score DOUBLE, paid BOOLEAN, qty INT)")


def plan(select_list: str):
    return parse_sql(f"select g, {select_list} from sale group by g", CATALOG)


@pytest.mark.parametrize(("written", "law"), [
    ("count(*) filter (where status = 'paid')", "count(case when status = 'paid' then 1 end)"),
    ("sum(amount) filter (where paid)", "sum(case when paid then amount end)"),
    ("count(distinct status) filter (where qty > 1)", "count(distinct case when qty > 1 then status end)"),
    ("min(day) filter (where paid)", "min(case when paid then day end)"),
    ("max_by(status, day) filter (where paid)", "max_by(status, case when paid then day end)"),
    ("count_if(paid)", "count(case when paid then 1 end)"),
    ("count_if(distinct paid)", "count(distinct case when paid then 1 end)"),
    ("count(status, qty)", "count(case when status is not null and qty is not null then 1 end)"),
    ("bool_and(paid)", "case when count(paid) > 0 then count(case when not paid then 1 end) = 0 end"),
    ("bool_or(qty > 1)", "case when count(qty > 1) > 0 then count(case when qty > 1 then 1 end) > 0 end"),
    ("every(paid)", "bool_and(paid)"),
    ("some(paid)", "bool_or(paid)"),
    ("any(paid)", "bool_or(paid)"),
    ("bool_and(distinct paid)", "bool_and(paid)"),
    ("max_by(distinct status, day)", "max_by(status, day)"),
], ids=lambda text: text)
def test_an_aggregate_plans_as_its_law_says(written, law):
    assert plan(written) == plan(law)


@pytest.mark.parametrize(("written", "spark_type"), [
    ("count_if(paid)", "bigint"), ("bool_and(paid)", "boolean"), ("bool_or(score > 0)", "boolean"),
    ("max_by(amount, day)", "decimal(10,2)"), ("min_by(day, status)", "date"), ("max_by(status, score)", "string"),
    ("count(distinct status, day)", "bigint"), ("count(*) filter (where paid)", "bigint"),
    ("sum(qty) filter (where paid)", "bigint"), ("avg(amount) filter (where paid)", "decimal(14,6)"),
    ("min(paid)", "boolean"), ("max(score) filter (where qty > 0)", "double"),
])
def test_result_types_are_sparks(written, spark_type):
    item = parse_sql(f"select {written} as v from sale", CATALOG).items[0]
    assert str(type_of(item.expr)) == spark_type


def test_count_distinct_of_several_columns_keeps_them_as_further_arguments():
    aggregate = next(node for node in plan("count(distinct status, day), sum(qty)").walk() if isinstance(node, Aggregate))
    calls = [e for item in aggregate.aggregates for e in walk(item.expr) if isinstance(e, AggregateCall)]
    assert [(c.func, c.distinct, len(c.further_args)) for c in calls] == [("count", True, 1), ("sum", False, 0)]


@pytest.mark.parametrize(("written", "message"), [
    ("count_if(qty)", "count_if needs a BOOLEAN argument, not int (Spark rejects it: DATATYPE_MISMATCH)"),
    ("bool_and(status)", "bool_and needs a BOOLEAN argument, not string"),
    ("every(qty)", "bool_and needs a BOOLEAN argument"),
    ("count(*) filter (where qty)", "is not BOOLEAN (int); Spark rejects it (INVALID_AGGREGATE_FILTER.NOT_BOOLEAN)"),
    ("sum(qty) filter (where null)", "INVALID_AGGREGATE_FILTER.NOT_BOOLEAN"),
    ("sum(qty) filter (where count(*) > 1)", "nested aggregate functions"),
    ("sum(qty) filter (where g in (select g from sale))", "a subquery in the FILTER"),
    ("max_by(status)", "max_by takes 2 arguments (as in Spark), not 1"),
    ("approx_count_distinct(status)", "approximate aggregate is not a deterministic function of its input"),
    ("approx_count_distinct(status)", "write the exact count(DISTINCT x)"),
    ("percentile_approx(score, 0.5)", "write the exact percentile(x, p)"),
    ("approx_percentile(score, 0.5)", "PERCENTILE_APPROX(score, 0.5) in SELECT is refused"),
])
def test_refusals_name_the_construct(written, message):
    with pytest.raises(UnsupportedSqlError, match="^[^\n]*$") as refused:
        parse_sql(f"select {written} from sale", CATALOG)
    assert message in str(refused.value)
