"""Window functions over a grouped query block (planner/sql/grouped_windows.py) equal recomputation
(DuckDB) after every batch: a share of the total, a running total over the groups, the top N groups
per partition, with HAVING, ORDER BY ... LIMIT, a GROUP BY ordinal and a global aggregate.

The streams empty and refill groups, put NULLs in group keys (a NULL group is a row like any other)
and delete single copies of duplicate rows (``sales`` has no key).
"""

from __future__ import annotations

import pytest

from planner.sql.errors import UnsupportedSqlError
from planner.view import MaintainedView
from tests.maintenance.checking import check_against_recomputation
from tests.maintenance.test_windows import CATALOG, _orders_stream, _sales_stream

ORDERS_QUERIES = {
    "share of the total": "select cust, count(*) as n, count(*) * 1.0 / sum(count(*)) over () as share, "
                          "round(100.0 * sum(amount) / sum(sum(amount)) over (), 1) as pct from orders group by cust",
    "running total over the groups": "select amount, count(*) as n, sum(count(*)) over (order by amount) as running "
                                     "from orders group by amount",
    "HAVING, then a rank, ORDER BY and LIMIT": "select cust, sum(amount) as s, rank() over (order by sum(amount) desc) as r "
                                               "from orders group by cust having count(*) > 1 order by r, cust limit 3",
    "LAG over the groups, GROUP BY ordinal": "select cust, max(price) as m, lag(max(price)) over (order by cust) as prev "
                                             "from orders group by 1",
    "partitioned running count": "select cust, amount, count(*), sum(count(*)) over (partition by cust order by amount "
                                 "rows between unbounded preceding and current row) as upto from orders group by cust, amount",
    "global aggregate": "select count(*) as n, sum(count(*)) over () as total, count(*) over () as rows from orders",
}


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "generic"])
@pytest.mark.parametrize("name", list(ORDERS_QUERIES))
def test_window_over_groups_equals_recomputation(name, compiled):
    check_against_recomputation(ORDERS_QUERIES[name], CATALOG, _orders_stream(seed=len(name)), 7,
                                informative_at_least=0.9, compiled=compiled)


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "generic"])
def test_top_groups_per_category_over_a_bag(compiled):
    """The top-N pattern over a grouped block's rank: a product's total moving re-ranks its category."""
    sql = ("select * from (select cat, prod, sum(qty) as total, rank() over (partition by cat order by sum(qty) desc) as r "
           "from sales group by cat, prod) x where r <= 2")
    check_against_recomputation(sql, CATALOG, _sales_stream(7), 3, informative_at_least=0.9, compiled=compiled)


def test_the_rank_bound_reaches_the_window():
    """The rewrite keeps the top-N shape: the window emits only the rows ranked within the bound."""
    from planner.compiler import compile_query
    from planner.explain import explain_text

    sql = ("select * from (select cat, prod, row_number() over (partition by cat order by sum(qty) desc, prod) as rn "
           "from sales group by cat, prod) x where rn <= 2")
    assert "top_n (top 2 per partition)" in explain_text(compile_query(sql, CATALOG))


@pytest.mark.parametrize("sql, words", [
    ("select cust, count(*) as n, sum(amount) as n, rank() over (order by count(*)) from orders group by cust",
     "repeats the column name n"),
    ("select *, rank() over (order by id) from orders group by id, cust, amount, price", "SELECT *"),
    ("select cust, rank() over (order by amount) from orders group by cust", "neither in GROUP BY nor inside an aggregate"),
])
def test_what_the_grouped_block_cannot_compute_is_refused(sql, words):
    with pytest.raises(UnsupportedSqlError, match=words):
        MaintainedView(sql, CATALOG)
