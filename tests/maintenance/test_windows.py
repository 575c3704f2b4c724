"""Window functions maintained under inserts and deletes equal recomputation (DuckDB) after every batch.

The streams insert, delete and move rows between partitions (a delete and an insert of the same key
with another partition value), empty partitions, and put NULLs and ties in the ORDER BY. ROW_NUMBER,
LAG/LEAD and ROWS frames number peers in an order Spark leaves unspecified, so their queries order
by a key that is unique (ties broken by ``id``); RANK, DENSE_RANK and RANGE frames are compared over
ties. DuckDB agrees with Spark here once sqlglot spells Spark's default NULL order out for it.
"""

from __future__ import annotations

import json
import random
from decimal import Decimal

import pytest

from catalog.ddl import catalog_from_ddl
from operators.runtime.stream import Update
from planner.sql.errors import UnsupportedSqlError
from planner.view import MaintainedView
from tests.maintenance.checking import check_against_recomputation

DDL = """
CREATE TABLE orders (id INT, cust INT, amount INT, price DECIMAL(7,2), PRIMARY KEY (id));
CREATE TABLE sales (cat INT, prod INT, qty INT);
"""


def _orders_stream(seed: int, steps: int = 500, customers: int = 5) -> list[Update]:
    """Orders inserted, deleted and moved between customers; few customers, so partitions empty and
    refill, and a small amount domain with NULLs, so ORDER BY amount has ties and NULLs."""
    rng = random.Random(seed)
    present: dict[int, tuple] = {}
    updates: list[Update] = []
    next_id = 0

    def emit(op: int, row: tuple) -> None:
        updates.append(Update(len(updates) + 1, "orders", op, row))

    def new_row(key: int) -> tuple:
        amount = None if rng.random() < 0.15 else rng.randint(0, 9)
        cust = None if rng.random() < 0.05 else rng.randint(1, customers)
        price = None if rng.random() < 0.1 else rng.randint(0, 20000) / 100
        return key, cust, amount, None if price is None else Decimal(f"{price:.2f}")

    for _ in range(steps):
        action = rng.random()
        if action < 0.55 or not present:
            next_id += 1
            present[next_id] = new_row(next_id)
            emit(1, present[next_id])
        elif action < 0.85:
            key = rng.choice(list(present))
            emit(-1, present.pop(key))
        else:  # a row moves to another partition (and changes its amount)
            key = rng.choice(list(present))
            emit(-1, present[key])
            present[key] = new_row(key)
            emit(1, present[key])
    return updates


def _sales_stream(seed: int, steps: int = 400) -> list[Update]:
    """A table without a key (bag semantics): duplicate rows, deletes of one copy."""
    rng = random.Random(seed)
    present: list[tuple] = []
    updates: list[Update] = []
    for _ in range(steps):
        if rng.random() < 0.65 or not present:
            row = (rng.randint(1, 3), rng.randint(1, 8), None if rng.random() < 0.1 else rng.randint(1, 5))
            present.append(row)
            updates.append(Update(len(updates) + 1, "sales", 1, row))
        else:
            row = present.pop(rng.randrange(len(present)))
            updates.append(Update(len(updates) + 1, "sales", -1, row))
    return updates


CATALOG = catalog_from_ddl(DDL)

ORDERS_QUERIES = {
    "latest order per customer": "select id, cust, amount from (select o.*, row_number() over "
                                 "(partition by cust order by amount desc, id desc) as rn from orders o) x where rn = 1",
    "top 2 per customer": "select * from (select id, cust, amount, row_number() over "
                          "(partition by cust order by amount, id) rn from orders) t where rn <= 2",
    "rank below 3 over ties and NULLs": "with r as (select id, cust, amount, rank() over (partition by cust order by amount desc) "
                                        "as rnk from orders) select * from r where rnk < 3",
    "dense rank top 2, NULLs last": "select * from (select id, cust, amount, dense_rank() over "
                                    "(partition by cust order by amount asc nulls last) dr from orders) x where 2 >= dr",
    "every row's rank": "select id, rank() over (partition by cust order by amount) r, dense_rank() over "
                        "(partition by cust order by amount) d, row_number() over (partition by cust order by amount, id) n "
                        "from orders",
    "no partition": "select id, amount, row_number() over (order by amount desc, id) rn from orders",
    "whole-partition aggregates": "select id, cust, sum(amount) over (partition by cust) s, count(*) over (partition by cust) c, "
                                  "avg(price) over (partition by cust) a, min(amount) over (partition by cust) lo, "
                                  "max(price) over (partition by cust) hi from orders",
    "lag and lead": "select id, cust, lag(amount) over (partition by cust order by id) prev, "
                    "lead(amount, 2, -1) over (partition by cust order by id) next2 from orders",
    "running sums, RANGE over ties": "select id, cust, sum(amount) over (partition by cust order by amount) s, "
                                     "count(amount) over (partition by cust order by amount) c, "
                                     "max(price) over (partition by cust order by amount) m from orders",
    "running sums, ROWS": "select id, cust, sum(price) over (partition by cust order by id rows between unbounded preceding "
                          "and current row) s, avg(amount) over (partition by cust order by id rows unbounded preceding) a "
                          "from orders",
    "running DOUBLE sum, prefix re-read": "select id, cust, sum(cast(amount as double) / 4) over (partition by cust order by id) s "
                                          "from orders",
    "moving average": "select id, cust, avg(amount) over (partition by cust order by id rows between 2 preceding and current row) "
                      "ma, min(price) over (partition by cust order by id rows between 1 preceding and current row) mn from orders",
    "NTILE per customer and over everything": "select id, cust, amount, ntile(3) over (partition by cust order by amount desc, id) q, "
                                              "ntile(4) over (order by amount, id) qq, ntile(20) over (partition by cust order by id) "
                                              "sparse from orders",
    "NTILE beside a top-N bound": "select * from (select id, cust, row_number() over (partition by cust order by amount, id) rn, "
                                  "ntile(2) over (partition by cust order by amount, id) half from orders) x where rn <= 3",
    "QUALIFY on a rank alias": "select id, cust, amount, row_number() over (partition by cust order by amount desc, id) rn "
                               "from orders qualify rn <= 2",
    "QUALIFY on a window call, SELECT *": "select * from orders qualify rank() over (partition by cust order by amount desc) = 1",
    "QUALIFY on LAG and a column not selected": "select id, cust from orders "
                                                "qualify coalesce(lag(amount) over (partition by cust order by id), -1) < amount",
    "QUALIFY then ORDER BY and LIMIT": "select o.id, o.amount from orders o qualify row_number() over "
                                       "(partition by o.cust order by o.amount desc, o.id) = 1 order by o.amount desc, o.id limit 3",
}


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "generic"])
@pytest.mark.parametrize("name", list(ORDERS_QUERIES))
def test_window_equals_recomputation(name, compiled):
    updates = _orders_stream(seed=len(name))
    for batch_size in (1, 7):
        check_against_recomputation(ORDERS_QUERIES[name], CATALOG, updates[:300] if batch_size == 1 else updates,
                                    batch_size, informative_at_least=0.9, compiled=compiled)


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "generic"])
def test_top_products_per_category_over_a_bag(compiled):
    """Duplicate rows (no key): RANK and DENSE_RANK over them, ties included."""
    sql = ("select * from (select cat, prod, qty, rank() over (partition by cat order by qty desc) r, "
           "dense_rank() over (partition by cat order by qty desc) d from sales) s where r <= 2")
    check_against_recomputation(sql, CATALOG, _sales_stream(3), 5, informative_at_least=0.9, compiled=compiled)


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "generic"])
def test_top_products_per_category_by_total_sales(compiled):
    """The window over a grouped derived table: a group's total moving re-ranks its category."""
    sql = ("select * from (select cat, prod, total, row_number() over (partition by cat order by total desc, prod) rn "
           "from (select cat, prod, sum(qty) as total from sales group by cat, prod) g) x where rn <= 2")
    check_against_recomputation(sql, CATALOG, _sales_stream(5), 3, informative_at_least=0.9, compiled=compiled)


def test_top_n_emits_only_rows_entering_and_leaving():
    """A row ranked below the top N changes nothing; one entering it pushes one out (and re-numbers)."""
    sql = ("select id, rn from (select id, row_number() over (partition by cust order by amount desc, id) rn "
           "from orders) x where rn <= 2")
    with MaintainedView(sql, CATALOG) as view:
        view.apply([Update(i, "orders", 1, (i, 1, 10 * i, None)) for i in range(1, 6)])
        assert sorted(view.result()) == [(4, 2), (5, 1)]
        assert dict(view.apply([Update(6, "orders", 1, (6, 1, 1, None))])) == {}
        changes = dict(view.apply([Update(7, "orders", 1, (7, 1, 45, None))]))
        assert changes == {(4, 2): -1, (7, 2): 1}


def test_explain_names_the_strategy_and_cost():
    from planner.compiler import compile_query
    from planner.explain import explain_json, explain_text

    top = compile_query(ORDERS_QUERIES["top 2 per customer"], CATALOG)
    assert "Window: row_number() OVER (PARTITION BY orders.cust ORDER BY orders.amount ASC NULLS FIRST, orders.id ASC NULLS FIRST): " \
           "top_n (top 2 per partition), O(log n + rows entering" in " ".join(explain_text(top).split())
    stage = next(s for s in json.loads(explain_json(top))["stages"] if s["operator"].startswith("MaintainedWindow"))
    assert stage["key"] == "orders.cust" and "Spark leaves the order of peers unspecified" in stage["why"]
    running = json.loads(explain_json(compile_query(ORDERS_QUERIES["running sums, ROWS"], CATALOG)))
    assert [w["strategy"] for w in running["windows"]] == ["running"]
    assert running["windows"][0]["update_cost"].startswith("O(log n + rows whose running value changes)")
    ntile = json.loads(explain_json(compile_query(ORDERS_QUERIES["NTILE beside a top-N bound"], CATALOG)))
    assert [(w["strategy"], w["update_cost"][:12]) for w in ntile["windows"]] == [("bucketed", "O(partition)")]
    doubles = json.loads(explain_json(compile_query(ORDERS_QUERIES["running DOUBLE sum, prefix re-read"], CATALOG)))
    assert [(w["strategy"], w["update_cost"][:12]) for w in doubles["windows"]] == [("running_scan", "O(partition)")]


@pytest.mark.parametrize("sql, words", [
    ("select row_number() over (partition by cust) from orders", "requires the window to be ordered"),
    ("select sum(amount) over (order by id rows between 1 preceding and 1 following) from orders", "window frame not supported"),
    ("select id from orders where row_number() over (order by id) = 1", "window functions (OVER) in WHERE"),
    ("select count(distinct amount) over (partition by cust) from orders", "DISTINCT window functions"),
    ("select ntile(2) over (partition by cust) from orders", "window function ntile() requires the window to be ordered"),
    ("select ntile(0) over (order by id) from orders", "the number of buckets must be a positive integer constant"),
    ("select ntile(amount) over (order by id) from orders", "the number of buckets must be a positive integer constant"),
    ("select ntile(2) over (order by id rows between unbounded preceding and current row) from orders",
     "a window frame cannot be given to ntile()"),
    ("select percent_rank() over (order by id) from orders", "window function"),
    ("select sum(amount) filter (where id > 2) over (partition by cust) from orders", "FILTER"),
])
def test_unsupported_windows_are_refused_with_the_reason(sql, words):
    with pytest.raises(UnsupportedSqlError) as refused:
        MaintainedView(sql, CATALOG)
    assert words in str(refused.value)

