"""SQL maintained by view trees (rules/view_tree.py) against DuckDB's recomputation after every batch
of a random insert/delete stream, on the local runner: a many-to-many q-hierarchical join with SUM,
SUM(x*y), AVG and COUNT grouped by the join variable; Ex. 4.4's Q(Y, X, Z) = R(Y, X)·S(Y, Z) (a
change of one atom reaches many groups); the same join as a global aggregate (a row
over empty input, COUNT 0 and SUM NULL); a hierarchical, not q-hierarchical GROUP BY (probes); and
a join that is hierarchical only through a declared FD (Olteanu Ex. 4.10's shape)."""

from __future__ import annotations

import random
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

import pytest

from catalog.ddl import catalog_from_ddl
from operators.runtime.stream import Update
from planner.compiler import compile_query
from planner.ir.view_tree_plan import ViewTreeAggregate
from planner.workloads.housing import housing_catalog, housing_tables
from planner.workloads.view_tree_input import random_stream
from tests.maintenance.checking import check_against_recomputation

DDL = """
CREATE TABLE r (a INT NOT NULL, b INT NOT NULL);
CREATE TABLE s (a INT NOT NULL, c INT NOT NULL, e INT NOT NULL);
CREATE TABLE t (a INT NOT NULL, c INT NOT NULL, d DECIMAL(7,2) NOT NULL);
CREATE TABLE inventory (locn INT NOT NULL, ksn INT NOT NULL, units INT NOT NULL);
CREATE TABLE location (locn INT NOT NULL, zip INT NOT NULL) TBLPROPERTIES ('ivm.fd.locn' = 'zip');
CREATE TABLE census (zip INT NOT NULL, pop INT NOT NULL);
"""

#: table → a random row (small domains: many join partners, repeated rows)
ROWS = {
    "r": lambda g: (g.randrange(4), g.randrange(5)),
    "s": lambda g: (g.randrange(4), g.randrange(3), g.randrange(-3, 9)),
    "t": lambda g: (g.randrange(4), g.randrange(3), None),  # d drawn below (a DECIMAL)
    "inventory": lambda g: (g.randrange(6), g.randrange(3), g.randrange(1, 20)),
    "location": lambda g: (g.randrange(6), None),  # zip = locn % 3: the declared FD locn → zip holds
    "census": lambda g: (g.randrange(3), g.randrange(100, 200)),
}


def _row(table: str, g: random.Random) -> tuple:
    row = ROWS[table](g)
    if table == "t":
        return row[:2] + (Decimal(g.randrange(-500, 900)) / 100,)
    if table == "location":
        return (row[0], row[0] % 3)
    return row


def stream(tables: tuple[str, ...], seed: int, updates: int = 500,
           draw: Callable[[str, random.Random], tuple] = _row) -> list[Update]:
    """Inserts and deletes (of a present copy, never an absent row) over bag tables; ``draw(table, g)``
    gives a new row."""
    g = random.Random(seed)
    present: dict[str, list[tuple]] = {t: [] for t in tables}
    out = []
    for seq in range(1, updates + 1):
        table = g.choice(tables)
        if present[table] and g.random() < 0.35:
            out.append(Update(seq, table, -1, present[table].pop(g.randrange(len(present[table])))))
        else:
            row = draw(table, g)
            present[table].append(row)
            out.append(Update(seq, table, 1, row))
    return out


JOIN = "FROM r, s, t WHERE r.a = s.a AND s.a = t.a AND s.c = t.c"
QUERIES = {
    "q-hierarchical, grouped by the join variable": (
        f"SELECT r.a, SUM(s.e) AS se, SUM(s.e * t.d) AS sed, AVG(t.d) AS ad, COUNT(*) AS n, SUM(r.b) AS sb {JOIN} "
        "GROUP BY r.a", ("r", "s", "t")),
    "Ex. 4.4's shape: an R change reaches every s.c of its group": (
        "SELECT r.a, r.b, s.c, COUNT(*) AS n, SUM(s.e) AS se FROM r, s WHERE r.a = s.a GROUP BY r.a, r.b, s.c",
        ("r", "s")),
    "global aggregate": (f"SELECT COUNT(*) AS n, SUM(t.d) AS sd, AVG(s.e) AS ae {JOIN}", ("r", "s", "t")),
    "hierarchical, not q-hierarchical (free s.c below bound a)": (
        f"SELECT s.c, COUNT(*) AS n, SUM(r.b) AS sb {JOIN} GROUP BY s.c HAVING COUNT(*) > 1", ("r", "s", "t")),
    "q-hierarchical only with the FD locn → zip": (
        "SELECT l.locn, SUM(i.units) AS u, SUM(c.pop) AS p, COUNT(*) AS n FROM inventory i, location l, census c "
        "WHERE i.locn = l.locn AND l.zip = c.zip GROUP BY l.locn", ("inventory", "location", "census")),
}


@pytest.mark.parametrize("name", list(QUERIES))
def test_view_tree_equals_recomputation_after_every_batch(name):
    sql, tables = QUERIES[name]
    catalog = catalog_from_ddl(DDL)
    node = next(n for n in compile_query(sql, catalog).plan.walk() if isinstance(n, ViewTreeAggregate))
    assert node.order
    view = check_against_recomputation(sql, catalog, stream(tables, seed=len(name)), batch_size=25,
                                       informative_at_least=0.8)
    assert view.result(), "the final result must not be empty"


def test_forced_order_gives_the_same_result():
    sql, tables = QUERIES["q-hierarchical, grouped by the join variable"]
    catalog = catalog_from_ddl(DDL)
    view = check_against_recomputation(sql, catalog, stream(tables, seed=7, updates=300), batch_size=40,
                                       informative_at_least=0.8, variable_order=("r.a", "t.d", "s.c"))
    assert next(n for n in view.compiled.plan.walk() if isinstance(n, ViewTreeAggregate)).chosen_by == "forced"
    assert view.result()


def test_housing_example_gets_a_derived_view_tree_equal_to_recomputation():
    """examples/fivm/housing_by_postcode.sql, whose view tree the workload builds by hand, planned from
    the SQL: every relation joins on postcode, so postcode is the root and the order is derived."""
    sql = (Path(__file__).parents[2] / "examples" / "fivm" / "housing_by_postcode.sql").read_text()
    catalog = housing_catalog()
    node = next(n for n in compile_query(sql, catalog).plan.walk() if isinstance(n, ViewTreeAggregate))
    assert node.order.startswith("d.postcode(")
    updates = list(random_stream(housing_tables(scale=1, seed=2), catalog, seed=2))
    view = check_against_recomputation(sql, catalog, updates, batch_size=max(1, len(updates) // 8),
                                       informative_at_least=0.5)
    assert view.result()
