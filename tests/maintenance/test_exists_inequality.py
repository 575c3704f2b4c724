"""EXISTS / IN / NOT EXISTS / NOT IN correlated by equalities and one inequality (rules/exists_inequality.py):
the inner side's MIN or MAX per equality key, compared with the outer side (a join-select where it is a
column), maintained on both local runners and equal to DuckDB's recomputation after every batch of a
random insert/delete stream with NULL keys, NULL compared values, ties and deletes."""

from __future__ import annotations

import pytest

from catalog.ddl import catalog_from_ddl
from planner.compiler import UnsupportedQueryError, compile_query
from planner.explain import explain_text
from planner.ir.maintenance import JoinSelect
from planner.workloads.random_changes import random_changes
from tests.maintenance.checking import check_against_recomputation

DDL = """
CREATE TABLE customers (id INT PRIMARY KEY, tier INT, lim INT NOT NULL);
CREATE TABLE orders (oid INT PRIMARY KEY, cust INT, amount INT, odate DATE)
"""

QUERIES = {
    "EXISTS a later order of the same customer": """select o.oid, o.cust, o.odate from orders o
        where exists (select 1 from orders o2 where o2.cust = o.cust and o2.odate > o.odate)""",
    "EXISTS an order of more than twice the amount": """select o.oid, o.amount from orders o
        where exists (select 1 from orders o2 where o2.cust = o.cust and o2.amount > 2 * o.amount)""",
    "NOT EXISTS a later order (the latest per customer)": """select o.oid, o.cust from orders o
        where not exists (select 1 from orders o2 where o2.cust = o.cust and o2.odate > o.odate)""",
    "NOT EXISTS uncorrelated but for the inequality": """select o.oid from orders o
        where not exists (select 1 from orders o2 where o2.amount >= o.amount + 3)""",
    # the view has no key and the aggregate above it no group: two stages, not fused (it once failed to lower)
    "NOT EXISTS uncorrelated but for the inequality, counted": """select count(*) as n, sum(o.amount) as total
        from orders o where not exists (select 1 from orders o2 where o2.amount >= o.amount + 3)""",
    "EXISTS uncorrelated but for the inequality (a threshold)": """select c.id from customers c
        where exists (select 1 from orders o where o.amount <= c.tier)""",
    "IN with an inequality, counted per tier": """select c.tier, count(*) as n from customers c
        where c.id in (select o.cust from orders o where o.amount < c.lim) group by c.tier""",
    "NOT IN over non-NULL columns with an inequality": """select c.id, c.lim from customers c
        where c.lim not in (select o.oid from orders o where o.cust = c.id and o.amount <= c.tier)""",
}

#: the default set's representative case (every query on both runners is in the slow set)
FAST = {("NOT EXISTS a later order (the latest per customer)", True),
        ("NOT EXISTS uncorrelated but for the inequality, counted", True)}


def _stream(seed: int):
    catalog = catalog_from_ddl(DDL)
    return catalog, random_changes(catalog, ["customers", "orders"], seed, 300, domain=5, deletes=0.35, nulls=0.15)


def _cases() -> list:
    return [pytest.param(name, compiled, id=f"{name}-{'compiled' if compiled else 'generic'}",
                         marks=() if (name, compiled) in FAST else pytest.mark.slow)
            for name in QUERIES for compiled in (True, False)]


@pytest.mark.parametrize(("name", "compiled"), _cases())
def test_inequality_correlation_equals_recomputation(name, compiled):
    catalog, stream = _stream(1)
    view = check_against_recomputation(QUERIES[name], catalog, stream, batch_size=10, informative_at_least=0.5,
                                       compiled=compiled)
    assert view.result(), "the final result must not be empty"


@pytest.mark.slow
@pytest.mark.parametrize("seed", [2, 3, 4])
@pytest.mark.parametrize("name", list(QUERIES))
def test_inequality_correlation_on_more_streams(name, seed):
    catalog, stream = _stream(seed)
    check_against_recomputation(QUERIES[name], catalog, stream, batch_size=4, compiled=seed % 2 == 0)


def test_a_later_order_is_a_join_select_on_the_max_and_explain_says_so():
    compiled = compile_query(QUERIES["EXISTS a later order of the same customer"], catalog_from_ddl(DDL))
    assert any(isinstance(s, JoinSelect) for n in compiled.plan.walk() for s in getattr(n, "join_selects", ()))
    text = " ".join(explain_text(compiled).split())
    assert "Subquery (_v0): EXISTS/IN correlated by an inequality: the max of o2.odate per equality key" in text
    assert "one inner change can flip many outer rows" in text


def test_two_inequalities_are_refused_with_the_reason():
    sql = """select o.oid from orders o where exists (select 1 from orders o2 where o2.cust = o.cust
             and o2.odate > o.odate and o2.amount < o.amount)"""
    with pytest.raises(UnsupportedQueryError, match="two or more inequalities"):
        compile_query(sql, catalog_from_ddl(DDL))
