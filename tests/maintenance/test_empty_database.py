"""The empty database and the way back to it, for every example query and every set operation.

Over empty tables a global aggregate (no GROUP BY) has one row (COUNT 0, SUM NULL), and every
operator above it sees that row: a UNION of two global aggregates holds two rows before any change.
So each view is compared with DuckDB before its first batch, after each batch of a stream that
inserts rows, and after each batch of the stream's tail that deletes them all again, on both local
runners (the compiled program and the generic stages). A query the planner refuses is skipped with
the refusal as the reason: refusing is allowed, a different answer is not.

The set operations run over global and grouped aggregates on random insert/delete streams, each
asked to have had non-empty results, and so do the inequality self-joins with date arithmetic
(``date + n``, ``date - n``, ``date + INTERVAL``) that once passed EXPLAIN and then failed at run time.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from catalog.ddl import catalog_from_ddl
from catalog.iedyn import iedyn_catalog
from catalog.orderbook import orderbook_catalog
from catalog.schema import Catalog
from catalog.tpch import tpch_catalog
from operators.runtime.stream import Update, batches
from planner.compiler import CompiledQuery, UnsupportedQueryError, compile_query
from planner.ir.gjt_maintenance import GeneralizedJoinTree
from planner.sql.errors import UnsupportedSqlError
from planner.view import MaintainedView
from planner.workloads.oracle import DuckDBOracle, assert_matches_reference
from planner.workloads.random_changes import emptied, random_changes
from planner.workloads.view_tree_input import load_catalog
from tests.maintenance.checking import stream_tables

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
RUNNERS = {"compiled runner": {"compiled": True}, "generic stages": {"compiled": False}}

#: per example folder: its catalog by query file stem
CATALOGS = {
    "tpch": lambda stem: tpch_catalog(),
    "orderbook": lambda stem: orderbook_catalog(),
    "iedyn": lambda stem: iedyn_catalog(),
    "fivm": lambda stem: load_catalog("graph" if stem == "triangle" else stem.split("_")[0]),
}
FIVM_SCHEMAS = ("graph", "housing", "retailer")


def example_queries() -> list[tuple[str, str]]:
    """(folder, path) of every example query: the ``.sql`` files that are not schemas."""
    found = []
    for folder in CATALOGS:
        for path in sorted((EXAMPLES / folder).rglob("*.sql")):
            if path.stem not in ("schema", *FIVM_SCHEMAS):
                found.append((folder, str(path.relative_to(EXAMPLES))))
    return found


def compiled_or_skip(sql: str, catalog: Catalog, **options) -> CompiledQuery:
    """The plan of ``sql``, or a skip naming the planner's refusal (a refusal is allowed; a crash is not)."""
    try:
        return compile_query(sql, catalog, strict=True, **options)
    except (UnsupportedQueryError, UnsupportedSqlError) as refusal:
        pytest.skip(f"refused: {str(refusal).splitlines()[0]}")


def compare_from_the_empty_database(plan: CompiledQuery, sql: str, catalog: Catalog, updates: list[Update],
                                    batch_size: int) -> tuple[int, int]:
    """On both local runners, ``result()`` before any batch and after each batch of ``updates`` equals
    DuckDB's; returns (compared results, how many of them held a non-NULL value)."""
    compared = informative = 0
    with DuckDBOracle(catalog) as oracle:
        oracle.load_stream(stream_tables(catalog, updates))
        views = {name: MaintainedView(plan, catalog, **options) for name, options in RUNNERS.items()}
        try:
            checkpoints = [(updates[0].seq - 1, [])] + [(b[-1].seq, b) for b in batches(updates, batch_size)]
            for seq, batch in checkpoints:
                oracle.as_of(seq)
                expected = oracle.reference(sql)
                for name, view in views.items():
                    if batch:
                        view.apply(batch)
                    assert_matches_reference(view.result(), expected, f"{name}, after _seq {seq}")
                compared += 1
                informative += expected.is_informative()
        finally:
            for view in views.values():
                view.close()
    return compared, informative


def valid_for(plan: CompiledQuery, updates: list[Update]) -> list[Update]:
    """``updates`` without the rows the plan's algorithm cannot take (an RPAI tree's positive volumes):
    the validator would reject them, and the reference has no such rule."""
    requirements = plan.dataflow.requirements
    return [u for u in updates if all(r.violation(u.row) is None for r in requirements if r.table == u.table)]


def tpch_sample(tables: dict[str, list[tuple]]) -> list[Update]:
    """A small TPC-H database whose joins meet: every nation, region and supplier, the first 150
    customers with their orders, the first 400 parts with their partsupp and the lineitems of those
    orders and parts; inserted table by table (dimensions first)."""
    catalog = tpch_catalog()

    def column(table: str, name: str) -> int:
        return catalog.table(table).column_names.index(name)

    orders = [r for r in tables["orders"] if r[column("orders", "o_custkey")] <= 150]
    order_keys = {r[0] for r in orders}
    keep = {
        "region": tables["region"], "nation": tables["nation"], "supplier": tables["supplier"],
        "customer": [r for r in tables["customer"] if r[0] <= 150],
        "part": [r for r in tables["part"] if r[0] <= 400],
        "partsupp": [r for r in tables["partsupp"] if r[0] <= 400],
        "orders": orders,
        "lineitem": [r for r in tables["lineitem"]
                     if r[0] in order_keys and r[column("lineitem", "l_partkey")] <= 400],
    }
    rows = [(table, row) for table, table_rows in keep.items() for row in table_rows]
    return [Update(seq, table, 1, row) for seq, (table, row) in enumerate(rows, start=1)]


@pytest.fixture(scope="module")
def tpch_stream(tpch_sf001_tables) -> list[Update]:
    return emptied(tpch_sample(tpch_sf001_tables))


@pytest.mark.parametrize(("folder", "path"), example_queries(), ids=[p for _, p in example_queries()])
def test_every_example_query_equals_the_reference_from_the_empty_database_and_back(folder, path, request):
    sql = (EXAMPLES / path).read_text()
    catalog = CATALOGS[folder](Path(path).stem)
    plan = compiled_or_skip(sql, catalog)
    if folder == "tpch":
        updates = request.getfixturevalue("tpch_stream")
        batch_size = len(updates) // 4 + 1
    else:
        tables = tuple(dict.fromkeys(route.table for route in plan.dataflow.sources))
        updates = valid_for(plan, emptied(random_changes(catalog, tables, seed=len(path), size=240, deletes=0.2)))
        batch_size = 60
    compare_from_the_empty_database(plan, sql, catalog, updates, batch_size)


SHOP = catalog_from_ddl("""
create table customers (id int, name string, primary key (id));
create table orders (id int, cust int, order_date date, amount decimal(10,2), primary key (id));
""")

#: (left, right, whether they can share rows) for every set operation: global aggregates, grouped
#: ones, and one of each; labelled sides (the user's report) never share a row, so INTERSECT is empty
SET_OPERANDS = {
    "global aggregates": ("select count(*) % 3 as n, 'x' as tag from customers",
                          "select count(*) % 3, 'x' from orders", True),
    "labelled global aggregates over a join": (
        "select 'c' as kind, count(*) as n, sum(amount) as total from customers join orders on customers.id = orders.cust",
        "select 'o', count(*), sum(amount) from orders", False),
    "grouped aggregates": ("select cust as k, count(*) as n from orders group by cust",
                           "select cust, count(distinct order_date) from orders group by cust", True),
    "a global and a grouped aggregate": ("select 'a' as k, count(*) % 2 as n from orders",
                                         "select name, count(*) % 2 from customers group by name", True),
}
SET_OPERATIONS = ("union", "union all", "union distinct", "intersect", "intersect distinct", "intersect all",
                  "except", "except distinct", "except all")
#: how often the reference result must be non-empty (an INTERSECT of independent sides is often empty)
INFORMATIVE = {"intersect": 0.15, "except": 0.25, "union": 0.7}


@pytest.mark.parametrize("operation", SET_OPERATIONS)
@pytest.mark.parametrize("operands", list(SET_OPERANDS))
def test_set_operations_over_aggregates_equal_the_reference(operands, operation):
    left, right, meet = SET_OPERANDS[operands]
    required = INFORMATIVE[operation.split()[0]] if meet or not operation.startswith("intersect") else 0.0
    sql = f"{left} {operation} {right}"
    plan = compiled_or_skip(sql, SHOP)
    updates = emptied(random_changes(SHOP, ("customers", "orders"), seed=len(sql), size=300, domain=5))
    compared, informative = compare_from_the_empty_database(plan, sql, SHOP, updates, 20)
    assert informative >= required * compared, f"only {informative} of {compared} compared results were non-empty"


def test_a_union_of_two_global_aggregates_has_both_rows_from_the_start():
    """The user's report: one customer and no orders is ('c', 1) and ('o', 0), not ('c', 1) alone, and
    before any change both counts are 0; UNION ALL retracts the rows it started with."""
    for operation in ("union", "union all"):
        sql = f"select 'c' as kind, count(*) as n from customers {operation} select 'o', count(*) from orders"
        for options in RUNNERS.values():
            with MaintainedView(sql, SHOP, **options) as view:
                assert view.result() == [("c", 0), ("o", 0)]
                view.apply([Update(1, "customers", 1, (1, "ann"))])
                assert view.result() == [("c", 1), ("o", 0)]


#: the join conditions beside ``o1.cust = o2.cust``, and whether a generalized join tree (IEDyn's sorted
#: indexes, whose bounds the offsets shift) maintains them; a month is no fixed number of days, so
#: the materializing fallback filters by it, as it does by ``<>``
DATE_JOINS = {
    "between date + n and date + m": ("o2.order_date between o1.order_date + 1 and o1.order_date + 30", True),
    "date - n": ("o2.order_date >= o1.order_date - 3 and o2.order_date < o1.order_date", True),
    "interval day": ("o2.order_date < o1.order_date + interval '3' day and o2.order_date >= o1.order_date", True),
    "date - n beside <>": ("o2.order_date > o1.order_date - 3 and o2.id <> o1.id", False),
    "interval month": ("o2.order_date <= o1.order_date + interval '1' month and o2.order_date > o1.order_date", False),
    "date - interval month": ("o2.order_date >= o1.order_date - interval '2' month and o2.order_date < o1.order_date",
                              False),
}


@pytest.mark.parametrize("name", list(DATE_JOINS))
def test_inequality_self_joins_with_date_arithmetic_equal_the_reference(name):
    condition, on_sorted_indexes = DATE_JOINS[name]
    sql = f"select o1.id as first, o2.id as second from orders o1 join orders o2 on o1.cust = o2.cust and {condition}"
    plan = compiled_or_skip(sql, SHOP)
    assert any(isinstance(node, GeneralizedJoinTree) for node in plan.plan.walk()) == on_sorted_indexes
    updates = emptied(random_changes(SHOP, ("orders",), seed=len(name), size=300, domain=4, deletes=0.25))
    compared, informative = compare_from_the_empty_database(plan, sql, SHOP, updates, 25)
    assert informative >= 0.3 * compared, f"only {informative} of {compared} compared results were non-empty"
