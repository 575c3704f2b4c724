"""Derived tables of window functions or set operations read as relations (rules/derived_rows.py):
grouped, joined and filtered, equal to recomputation (DuckDB) after every batch.

The streams insert and delete orders, move them between customers (a partition change) with NULL
customers and amounts (NULLs in the PARTITION BY and ORDER BY), keep duplicate rows in a table without
a key (sales), and insert, delete and update customers, so groups, partitions and join partners empty
and refill. The windows order by a unique key where Spark leaves the order of peers unspecified.
"""

from __future__ import annotations

import json
import random

import pytest

from catalog.ddl import catalog_from_ddl
from operators.runtime.stream import Update
from planner.compiler import UnsupportedQueryError, compile_query
from planner.explain import explain_json, explain_text
from planner.view import MaintainedView
from tests.maintenance.checking import check_against_recomputation

DDL = """
CREATE TABLE orders (id INT, cust INT, amount INT, PRIMARY KEY (id));
CREATE TABLE sales (cat INT, qty INT);
CREATE TABLE customers (id INT, name STRING, region INT, PRIMARY KEY (id));
"""
CATALOG = catalog_from_ddl(DDL)


def composed_stream(seed: int, steps: int = 300, customers: int = 4) -> list[Update]:
    """Orders (keyed; moved between customers), sales (a bag: duplicates, one copy deleted) and
    customers (keyed; deleted, re-inserted under another name and region), interleaved."""
    rng = random.Random(seed)
    updates: list[Update] = []
    orders: dict[int, tuple] = {}
    sales: list[tuple] = []
    people: dict[int, tuple] = {}

    def emit(table: str, op: int, row: tuple) -> None:
        updates.append(Update(len(updates) + 1, table, op, row))

    def order(key: int) -> tuple:
        cust = None if rng.random() < 0.08 else rng.randint(1, customers)
        return key, cust, None if rng.random() < 0.12 else rng.randint(0, 6)

    for step in range(steps):
        table = rng.choices(("orders", "sales", "customers"), (6, 3, 1))[0]
        if table == "orders":
            if rng.random() < 0.55 or not orders:
                orders[step] = order(step)
                emit("orders", 1, orders[step])
            elif rng.random() < 0.6:
                emit("orders", -1, orders.pop(rng.choice(list(orders))))
            else:  # moves to another customer (another partition), another amount
                key = rng.choice(list(orders))
                emit("orders", -1, orders[key])
                orders[key] = order(key)
                emit("orders", 1, orders[key])
        elif table == "sales":
            if rng.random() < 0.6 or not sales:
                row = (None if rng.random() < 0.1 else rng.randint(1, 3), rng.randint(0, 4))
                sales.append(row)
                emit("sales", 1, row)
                if rng.random() < 0.2:  # a duplicate row
                    sales.append(row)
                    emit("sales", 1, row)
            else:
                emit("sales", -1, sales.pop(rng.randrange(len(sales))))
        else:
            key = rng.randint(1, customers)
            if key in people:
                emit("customers", -1, people.pop(key))
            if rng.random() < 0.8:
                people[key] = (key, rng.choice(("ann", "bo", "cy")), rng.randint(1, 3))
                emit("customers", 1, people[key])
    return updates


_GAPS = "select cust, amount, lag(amount) over (partition by cust order by id) prev from orders"
_LATEST = "select id, cust, amount, row_number() over (partition by cust order by amount desc, id desc) rn from orders"
_BOTH = "select cust as k, amount as a from orders union all select cat, qty from sales"

QUERIES = {
    # windows under GROUP BY, joins and filters
    "LAG then WHERE IS NOT NULL then GROUP BY": f"select cust, count(*) n, avg(amount - prev) gap from ({_GAPS}) s "
                                                "where prev is not null group by cust",
    "a filter on a window output, not a rank": f"select cust, count(*) n, sum(amount) s from ({_GAPS}) s "
                                               "where amount > prev group by cust",
    "latest order per customer joined to customers": f"select c.name, x.amount from ({_LATEST}) x "
                                                     "join customers c on c.id = x.cust where x.rn = 1",
    "WITH view of ranks grouped by a joined column": f"with r as ({_LATEST}) select c.region, count(*) n, max(r.amount) m "
                                                     "from r join customers c on c.id = r.cust where r.rn <= 2 group by c.region",
    "DISTINCT over the latest orders": f"select distinct amount from ({_LATEST}) x where rn = 1",
    "a global aggregate over a running sum": "select count(*) n, max(s) m from (select sum(amount) over "
                                             "(partition by cust order by id) s from orders) x",
    # set operations under GROUP BY, joins and filters
    "UNION ALL under GROUP BY": f"select k, sum(a) s, count(*) n from ({_BOTH}) x group by k",
    "UNION under GROUP BY": "select k, count(*) n from (select cust as k, amount as a from orders union "
                            "select cat, qty from sales) x group by k",
    "COUNT(DISTINCT) over a UNION ALL": f"select count(distinct a) d, count(a) n from ({_BOTH}) x",
    "INTERSECT and EXCEPT grouped": "select k, count(*) n from (select cust as k from orders intersect select cat from sales "
                                    "except select region from customers) x group by k",
    "UNION ALL of a table and a join under GROUP BY": "select k, sum(a) s from (select cat as k, qty as a from sales "
                                                      "union all select c.region, o.amount from orders o join customers c "
                                                      "on c.id = o.cust) x group by k",
    "a UNION ALL branch that is a GROUP BY": "select k, sum(n) s from (select cust as k, count(*) n from orders "
                                             "group by cust union all select cat, sum(qty) from sales group by cat) x "
                                             "where n > 1 group by k",
    "UNION ALL joined to a table": f"select c.name, x.a from ({_BOTH}) x join customers c on c.id = x.k where x.a > 2",
    "IN over a UNION": "select id, name from customers c where c.id in (select cust from orders union select cat from sales)",
    "a UNION ALL joined to itself": f"select count(*) n from ({_BOTH}) x join ({_BOTH}) y on x.k = y.k",
    # what other strategies read of a derived table's rows
    "a correlated aggregate over a UNION ALL's rows": f"select k, a from ({_BOTH}) x "
                                                     "where a > (select avg(amount) from orders o where o.cust = x.k)",
    "HAVING against a scalar over a UNION ALL": f"select k, sum(a) s from ({_BOTH}) x group by k "
                                                "having sum(a) > (select count(*) from customers)",
    "LEFT JOIN chain through the latest order": f"select c.id, l.amount, o.cust from customers c left join ({_LATEST}) l "
                                                "on l.cust = c.id and l.rn = 1 left join orders o on o.id = l.id",
    "DISTINCT over a UNION ALL": f"select distinct k from ({_BOTH}) x",
    "ORDER BY LIMIT over a UNION ALL": f"select k, a from ({_BOTH}) x order by a desc, k limit 3",
    "a window over a UNION ALL": "select k, a, row_number() over (partition by k order by a) rn from (select cust as k, "
                                 "id as a from orders union all select region, id + 100 from customers) x",
}

#: The default set's representatives (a few seconds); the slow sweep runs every query on longer streams.
FAST = ("LAG then WHERE IS NOT NULL then GROUP BY", "UNION ALL under GROUP BY", "latest order per customer joined to customers")


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "generic"])
@pytest.mark.parametrize("name", FAST)
def test_composed_view_equals_recomputation(name, compiled):
    view = check_against_recomputation(QUERIES[name], CATALOG, composed_stream(len(name), steps=120), 12,
                                       informative_at_least=0.7, compiled=compiled)
    assert view.result()


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("name", list(QUERIES))
def test_composed_view_equals_recomputation_on_random_streams(name, seed):
    """Every query, several streams, batches of one change (the first 150) and of several, on both runners."""
    updates = composed_stream(100 * seed + len(name), steps=500, customers=3 + seed)
    for batch_size, compiled in ((1, True), (7, False), (25, True)):
        view = check_against_recomputation(QUERIES[name], CATALOG, updates[:150] if batch_size == 1 else updates,
                                           batch_size, informative_at_least=0.5, compiled=compiled)
        assert view.result()


def test_the_window_emits_only_rows_whose_gap_changes():
    """The GROUP BY sees the window's changes: an order appended to a partition changes one group's count."""
    sql = f"select cust, count(*) n from ({_GAPS}) s where prev is not null group by cust"
    with MaintainedView(sql, CATALOG) as view:
        view.apply([Update(i, "orders", 1, (i, 1, i)) for i in range(1, 4)])
        assert view.result() == [(1, 2)]
        assert dict(view.apply([Update(4, "orders", 1, (4, 2, 0))])) == {}  # a first row has no LAG
        assert dict(view.apply([Update(5, "orders", -1, (2, 1, 2))])) == {(1, 2): -1, (1, 1): 1}


def test_explain_names_the_composition_and_its_cost():
    compiled = compile_query(QUERIES["LAG then WHERE IS NOT NULL then GROUP BY"], CATALOG)
    text = " ".join(explain_text(compiled).split())
    assert "derived table s (window) read as a relation" in text
    assert "Derived table s: window rows" in text and "O(log n + offset)" in text and "O(1) per join change" in text
    derived = json.loads(explain_json(compiled))["derived_tables"]
    assert [(d["alias"], d["computes"]) for d in derived] == [("s", "window")]
    joined = compile_query(QUERIES["UNION ALL joined to a table"], CATALOG)
    text = " ".join(explain_text(joined).split())
    assert "Derived table x: UNION ALL rows" in text and "O(matching rows on the other side)" in text


def test_the_top_n_bound_reaches_into_a_joined_window():
    """``rn = 1`` outside the derived table still bounds the window (top N): only the first rows leave it."""
    compiled = compile_query(QUERIES["latest order per customer joined to customers"], CATALOG)
    assert [w["strategy"] for w in json.loads(explain_json(compiled))["windows"]] == ["top_n"]


def test_a_set_operation_still_refused_is_named():
    """EXISTS over a UNION ALL correlated in each branch has no view to join on: the refusal says so."""
    sql = ("select name from customers c where exists (select 1 from orders o where o.cust = c.id "
           "union all select 1 from sales s where s.cat = c.id)")
    with pytest.raises(UnsupportedQueryError, match="EXISTS over a UNION ALL, correlated inside its branches"):
        MaintainedView(sql, CATALOG)
