"""Uncorrelated scalar subqueries as one-row views, maintained in-process, equal to DuckDB's
recomputation after every batch of a random insert/delete stream.

The stream is built so that each subquery's value moves (the maximum supplier balance is deleted,
the smallest region goes away, FRANCE changes its key), is sometimes empty (the comparison is then
NULL and no row passes) and its compared values are sometimes NULL. A subquery that is not a global
aggregate may return more than one row: Spark raises SCALAR_SUBQUERY_TOO_MANY_ROWS at run time, and
so must the view, for that batch, instead of computing something else.
"""

from __future__ import annotations

import random

import pytest

from catalog.ddl import catalog_from_ddl
from operators.runtime.stream import Update, batches, write_stream
from operators.stages.scalar import ScalarSubqueryTooManyRowsError
from planner.cli import main
from planner.compiler import compile_query
from planner.ir.maintenance import ThresholdFilter
from planner.view import MaintainedView
from tests.maintenance.checking import check_against_recomputation

# The TPC-H tables and columns the queries read, with integer balances (exact in every engine).
DDL = """
CREATE TABLE region (r_regionkey INT PRIMARY KEY, r_name VARCHAR(25));
CREATE TABLE nation (n_nationkey INT PRIMARY KEY, n_name VARCHAR(25), n_regionkey INT REFERENCES region (r_regionkey));
CREATE TABLE customer (c_custkey INT PRIMARY KEY, c_nationkey INT REFERENCES nation (n_nationkey), c_acctbal INT);
CREATE TABLE supplier (s_suppkey INT PRIMARY KEY, s_nationkey INT REFERENCES nation (n_nationkey), s_acctbal INT);
"""

QUERIES = {
    "= a subquery that is no aggregate": "select c_custkey from customer "
    "where c_nationkey = (select n_nationkey from nation where n_name = 'FRANCE')",
    "> an expression over MAX": "select c_custkey from customer where c_acctbal > (select max(s_acctbal) - 500 from supplier)",
    "> MIN": "select n_name from nation where n_regionkey > (select min(r_regionkey) from region)",
    "subquery on the left, over a join": "select c_custkey, n_name from customer, nation "
    "where c_nationkey = n_nationkey and (select avg(s_acctbal) from supplier) <= c_acctbal",
    "two thresholds": "select c_custkey, c_acctbal from customer "
    "where c_acctbal >= (select min(s_acctbal) from supplier) and c_acctbal < (select max(s_acctbal) from supplier)",
    "a one-row subquery whose value may be NULL": "select c_custkey from customer "
    "where c_acctbal < (select s_acctbal from supplier where s_suppkey = 1)",
    "UNION of thresholds": "select n_name from nation where n_regionkey > (select min(r_regionkey) from region) "
    "union select r_name from region where r_regionkey < (select max(n_regionkey) from nation)",
    "INTERSECT with a threshold": "select n_name from nation where n_regionkey >= (select avg(r_regionkey) from region) "
    "intersect select n_name from nation where n_nationkey < 10",
    "= MAX in a UNION branch": "select n_name from nation where n_regionkey = (select max(r_regionkey) from region) "
    "union all select r_name from region",
    "<> AVG": "select c_custkey, c_acctbal from customer where c_acctbal <> (select avg(s_acctbal) from supplier)",
    "<> a subquery that is no aggregate, over a join": "select c_custkey, n_name from customer, nation "
    "where c_nationkey = n_nationkey and n_nationkey <> (select n_nationkey from nation where n_name = 'FRANCE')",
    "aggregate over <> MAX": "select count(*) as n, sum(c_acctbal) as total from customer "
    "where c_acctbal <> (select max(s_acctbal) from supplier)",
    "grouped aggregate over <> a subquery that is no aggregate": "select c_nationkey, sum(c_acctbal) as total "
    "from customer where c_nationkey <> (select n_nationkey from nation where n_name = 'FRANCE') group by c_nationkey",
    "HAVING <> MIN": "select c_nationkey, count(*) as n from customer group by c_nationkey "
    "having count(*) <> (select min(r_regionkey) from region)",
    "HAVING a condition and > a total read from a derived table": "select c_nationkey, sum(c_acctbal) as total "
    "from customer group by c_nationkey having count(*) > 1 "
    "and sum(c_acctbal) > (select t * 0.2 from (select sum(c_acctbal) as t from customer) d)",
    "a global aggregate as a derived table (a one-row view)": "select n, s from "
    "(select count(*) as n, sum(s_acctbal) as s from supplier) v",
    "MIN and MAX over a threshold, grouped": "select c_nationkey, min(c_acctbal) as low, max(c_acctbal) as high "
    "from customer where c_acctbal > (select avg(s_acctbal) from supplier) group by c_nationkey",
    "COUNT(DISTINCT) over = a subquery that is no aggregate": "select count(distinct c_acctbal) as n from customer "
    "where c_nationkey = (select n_nationkey from nation where n_name = 'FRANCE')",
    "aggregate over = a subquery that is no aggregate": "select count(*) as n, sum(c_acctbal) as total from customer "
    "where c_nationkey = (select n_nationkey from nation where n_name = 'FRANCE')",
    "aggregate over > a subquery over a join": "select count(*) as n from customer "
    "where c_acctbal > (select min(s_acctbal) from supplier, nation where s_nationkey = n_nationkey and n_name <> 'FRANCE')",
}

NAMES = ("FRANCE", "GERMANY", "PERU", "CHINA")


def _random_stream(seed: int, steps: int = 400) -> list[Update]:
    """Inserts and deletes over the four tables; at most one FRANCE at a time (see the module docstring)."""
    rng = random.Random(seed)
    present: dict[str, dict[int, tuple]] = {"region": {}, "nation": {}, "customer": {}, "supplier": {}}
    updates: list[Update] = []

    def emit(table: str, op: int, row: tuple) -> None:
        updates.append(Update(len(updates) + 1, table, op, row))
        if op > 0:
            present[table][row[0]] = row
        else:
            del present[table][row[0]]

    def balance() -> int | None:
        return None if rng.random() < 0.1 else rng.randrange(-1000, 3000, 50)

    for step in range(steps):
        # the first steps leave supplier and FRANCE out: every subquery starts empty
        table = rng.choice(("region", "nation", "customer", "customer", "supplier", "supplier"))
        if step < 40 and table == "supplier":
            table = "customer"
        rows = present[table]
        if rows and rng.random() < 0.35:
            emit(table, -1, rows[rng.choice(sorted(rows))])
            continue
        key = rng.randrange(0, {"customer": 40, "supplier": 6}.get(table, 12))
        if key in rows:
            continue
        if table == "region":
            emit(table, 1, (key, f"R{key}"))
        elif table == "nation":
            france = any(r[1] == "FRANCE" for r in rows.values())
            name = "FRANCE" if not france and step >= 40 and rng.random() < 0.8 else rng.choice(NAMES[1:])
            emit(table, 1, (key, name, rng.randrange(0, 12)))
        else:
            emit(table, 1, (key, rng.randrange(0, 12), balance()))
    return updates


def _shown_batches(sql: str, updates: list[Update], batch_size: int) -> tuple[int, int]:
    """(batches after which the result shows a row that is not all zero/NULL, batches in all): a
    comparison of empty with empty after most batches would test nothing."""
    shown = total = 0
    with MaintainedView(sql, catalog_from_ddl(DDL)) as view:
        for batch in batches(updates, 9):
            view.apply(batch)
            total += 1
            shown += any(any(value not in (0, None) for value in row) for row in view.result())
    return shown, total


@pytest.mark.parametrize("name", list(QUERIES))
@pytest.mark.parametrize("seed", [1, 2])
def test_scalar_subquery_view_equals_recomputation(name, seed):
    updates = _random_stream(seed)
    check_against_recomputation(QUERIES[name], catalog_from_ddl(DDL), updates, batch_size=9)
    shown, total = _shown_batches(QUERIES[name], updates, 9)
    assert shown >= total // 4, f"the result shows rows after only {shown} of {total} batches"


def test_a_where_comparison_with_an_uncorrelated_scalar_is_a_threshold_above_the_join():
    plan = compile_query(QUERIES["> an expression over MAX"], catalog_from_ddl(DDL), strict=True).plan
    assert [n.op for n in plan.walk() if isinstance(n, ThresholdFilter)] == [">"]


FRANCE_TWICE = [Update(1, "region", 1, (1, "R1")), Update(2, "nation", 1, (1, "FRANCE", 1)),
                Update(3, "customer", 1, (10, 1, 100))]


@pytest.mark.parametrize("name", ["= a subquery that is no aggregate", "aggregate over = a subquery that is no aggregate"])
def test_a_subquery_returning_two_rows_rejects_the_batch_with_sparks_error(name):
    with MaintainedView(QUERIES[name], catalog_from_ddl(DDL)) as view:
        view.apply(FRANCE_TWICE)
        before = view.result()
        with pytest.raises(ScalarSubqueryTooManyRowsError, match=r"\[SCALAR_SUBQUERY_TOO_MANY_ROWS\] More than one row"):
            view.apply([Update(4, "nation", 1, (2, "FRANCE", 1))])
        assert view.result() == before


def test_two_rows_within_a_batch_that_leaves_one_are_accepted():
    """Rows of one batch are summed before the check: FRANCE moving to a new key is -old, +new."""
    with MaintainedView(QUERIES["= a subquery that is no aggregate"], catalog_from_ddl(DDL)) as view:
        view.apply(FRANCE_TWICE + [Update(4, "customer", 1, (11, 2, 5))])
        assert view.result() == [(10,)]
        view.apply([Update(5, "nation", 1, (2, "FRANCE", 1)), Update(6, "nation", -1, (1, "FRANCE", 1))])
        assert view.result() == [(11,)]


def test_ivm_run_stops_with_sparks_error_in_one_line(tmp_path, capsys):
    ddl = tmp_path / "schema.sql"
    ddl.write_text(DDL)
    updates = [*FRANCE_TWICE, Update(4, "nation", 1, (2, "FRANCE", 1))]
    stream = write_stream(tmp_path / "stream", catalog_from_ddl(DDL), updates)
    assert main(["run", "--query", QUERIES["= a subquery that is no aggregate"], "--catalog", str(ddl),
                 "--stream", str(stream), "--batch-size", "3"]) == 2
    assert "[SCALAR_SUBQUERY_TOO_MANY_ROWS]" in capsys.readouterr().err
