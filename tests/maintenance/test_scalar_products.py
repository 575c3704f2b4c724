"""Uncorrelated scalar subqueries in a select list (rules/scalar_product.py) equal recomputation
(DuckDB) after every batch: a share of the total per group, a value beside every row of a join, a
subquery that is no aggregate (empty: NULL), two subqueries, HAVING, ORDER BY ... LIMIT and a window.

The stream of test_scalar_subqueries_local.py moves every subquery's value, empties it and refills
it, and puts NULLs in the compared columns.
"""

from __future__ import annotations

import pytest

from catalog.ddl import catalog_from_ddl
from operators.runtime.stream import Update
from operators.stages.scalar import ScalarSubqueryTooManyRowsError
from planner.compiler import compile_query
from planner.explain import explain_text
from planner.ir.maintenance import ScalarProduct
from planner.sql.errors import UnsupportedSqlError
from planner.view import MaintainedView
from tests.maintenance.checking import check_against_recomputation
from tests.maintenance.test_scalar_subqueries_local import DDL, FRANCE_TWICE, _random_stream

CATALOG = catalog_from_ddl(DDL)

QUERIES = {
    "share of the total per group": "select c_nationkey, sum(c_acctbal) as total, "
    "sum(c_acctbal) * 1.0 / nullif((select sum(c_acctbal) from customer), 0) as share from customer group by c_nationkey",
    "beside every row": "select c_custkey, c_acctbal - (select avg(s_acctbal) from supplier) as above from customer",
    "a subquery that is no aggregate (empty: NULL)": "select c_custkey, "
    "(select n_nationkey from nation where n_name = 'FRANCE') as france from customer",
    "two subqueries over a join": "select c_custkey, n_name, (select max(s_acctbal) from supplier) as hi, "
    "(select min(s_acctbal) from supplier) as lo from customer, nation where c_nationkey = n_nationkey",
    "the same subquery twice, HAVING": "select c_nationkey, count(*) as n, count(*) - (select count(*) from supplier) "
    "as diff, (select count(*) from supplier) as suppliers from customer group by c_nationkey having count(*) > 1",
    "ORDER BY the value, LIMIT": "select c_custkey, c_acctbal * 100 / nullif((select max(s_acctbal) from supplier), 0) "
    "as pct from customer order by pct desc, c_custkey limit 5",
    "beside a window": "select c_custkey, sum(c_acctbal) over (partition by c_nationkey) - "
    "(select sum(s_acctbal) from supplier) as gap from customer",
    "headline tiles: no FROM": "select (select count(*) from customer) as customers, "
    "(select max(s_acctbal) from supplier) - (select min(s_acctbal) from supplier) as spread, "
    "(select n_nationkey from nation where n_name = 'FRANCE') as france",
}


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "generic"])
@pytest.mark.parametrize("name", list(QUERIES))
def test_scalar_in_select_equals_recomputation(name, compiled):
    check_against_recomputation(QUERIES[name], CATALOG, _random_stream(seed=len(name)), 9,
                                informative_at_least=0.75, compiled=compiled)


def test_a_select_without_from_needs_a_global_aggregate_to_read():
    with pytest.raises(UnsupportedSqlError, match="SELECT without FROM is supported only over scalar subqueries"):
        MaintainedView("select (select n_nationkey from nation where n_name = 'FRANCE') as france", CATALOG)


def test_a_change_of_the_value_changes_every_row_and_explain_says_so():
    sql = QUERIES["beside every row"]
    compiled = compile_query(sql, CATALOG, strict=True)
    assert [n.names for n in compiled.plan.walk() if isinstance(n, ScalarProduct)] == [("_s0",)]
    assert "O(rows of the result) when the subquery's value changes" in " ".join(explain_text(compiled).split())  # wrapped at 120 columns
    with MaintainedView(sql, CATALOG) as view:
        view.apply([Update(i, "customer", 1, (i, 1, 10 * i)) for i in range(1, 4)])
        assert sorted(view.result()) == [(1, None), (2, None), (3, None)]
        assert dict(view.apply([Update(4, "customer", 1, (4, 1, 40))])) == {(4, None): 1}
        changes = dict(view.apply([Update(5, "supplier", 1, (1, 1, 5))]))
        assert changes == {**{(i, None): -1 for i in range(1, 5)}, **{(i, 10 * i - 5.0): 1 for i in range(1, 5)}}


def test_a_subquery_returning_two_rows_rejects_the_batch_with_sparks_error():
    with MaintainedView(QUERIES["a subquery that is no aggregate (empty: NULL)"], CATALOG) as view:
        view.apply(FRANCE_TWICE)
        before = view.result()
        assert before == [(10, 1)]
        with pytest.raises(ScalarSubqueryTooManyRowsError, match=r"\[SCALAR_SUBQUERY_TOO_MANY_ROWS\]"):
            view.apply([Update(4, "nation", 1, (2, "FRANCE", 1))])
        assert view.result() == before
