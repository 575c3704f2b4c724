"""An uncorrelated ``IN`` subquery that groups by more than the value it selects (rules/decorrelate.py,
``_grouped_block``): the grouped block a view keyed by its group, the IN's view counting its rows per
value. Equal to recomputation (DuckDB) after every batch; groups cross the HAVING bound both ways.

The NULL cases guard a bug found on the way: a NULL value of the subquery was a view key that an
outer NULL met along the join, so ``NULL IN (... NULL ...)`` passed (SQL's = is never true of NULL).
"""

from __future__ import annotations

import pytest

from tests.maintenance.checking import check_against_recomputation
from tests.maintenance.test_windows import CATALOG, _orders_stream, _sales_stream

ORDERS_QUERIES = {
    "the value is a group key": "select id, cust from orders "
                                "where cust in (select cust from orders group by cust, amount having count(*) > 1)",
    "the value is an aggregate": "select id, amount from orders where amount in (select max(amount) from orders group by cust)",
    "NULL values, no grouping": "select id, cust from orders where cust in (select cust from orders where amount > 3)",
    "NULL values, grouped by the value": "select id, cust from orders "
                                         "where cust in (select cust from orders group by cust having count(*) > 1)",
    "NULL values, NOT EXISTS": "select id, cust from orders o "
                               "where not exists (select 1 from orders p where p.cust = o.cust and p.amount > 5)",
    # the same bug along a join: the derived table's NULL group is no partner of a row whose key is NULL
    "NULL keys, joined with a grouped derived table": "select o.id, x.total from orders o join (select cust, "
                                                      "sum(amount) as total from orders group by cust) x on o.cust = x.cust",
    "NULL keys, LEFT JOIN of a grouped derived table": "select o.id, x.total from orders o left join (select cust, "
                                                       "sum(amount) as total from orders group by cust) x on o.cust = x.cust",
}


@pytest.mark.parametrize("name", list(ORDERS_QUERIES))
def test_in_over_a_grouped_subquery_equals_recomputation(name):
    check_against_recomputation(ORDERS_QUERIES[name], CATALOG, _orders_stream(seed=len(name)), 7,
                                informative_at_least=0.9)


def test_in_over_a_grouped_subquery_of_a_bag():
    sql = "select cat, prod, qty from sales where prod in (select prod from sales group by cat, prod having sum(qty) > 4)"
    check_against_recomputation(sql, CATALOG, _sales_stream(11), 5, informative_at_least=0.8)
