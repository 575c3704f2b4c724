"""Two Delta tables with a change data feed, changed by delta-rs itself: a seeded random sequence of
appends, deletes, updates and merges (upserts), with NULLs, orders of customers that do not exist
(yet, or any more), keys deleted and inserted again, and segments that empty and refill.

Shared by the fast test of the conversion (``test_delta_feed.py``) and the slow Spark test
(``test_spark_delta_source.py``).
"""

from __future__ import annotations

import random
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
from deltalake import DeltaTable, write_deltalake

QUERY = ("SELECT c_segment, SUM(o_price) AS total, COUNT(*) AS orders, COUNT(o_price) AS priced "
         "FROM orders JOIN customers ON o_custkey = c_custkey GROUP BY c_segment ORDER BY c_segment")
CUSTOMERS = pa.schema([pa.field("c_custkey", pa.int32(), nullable=False), ("c_segment", pa.string())])
ORDERS = pa.schema([pa.field("o_orderkey", pa.int64(), nullable=False), ("o_custkey", pa.int32()),
                    ("o_price", pa.decimal128(12, 2))])
SEGMENTS = ["AUTO", "BUILD", "FURNITURE", None]
CDF = {"delta.enableChangeDataFeed": "true"}
ACTIONS = ["append orders"] * 3 + ["delete orders", "update orders", "update a customer", "delete a customer",
                                   "upsert customers"]


def make_delta_tables(root: Path, steps: int, seed: int, late_feed: bool = False) -> dict[str, str]:
    """Create ``customers`` and ``orders`` under ``root`` and change them ``steps`` times; return
    their paths by table name. Keys are declared as the tables' ``ivm.primary_key`` properties.
    ``late_feed``: ``customers`` is created without a change data feed, changed three times (an
    append, an update, a delete) and only then given one."""
    rng = random.Random(seed)
    paths = {"customers": str(root / "customers"), "orders": str(root / "orders")}
    write_deltalake(paths["customers"], _customers([(key, rng.choice(SEGMENTS)) for key in range(1, 5)]),
                    configuration=None if late_feed else CDF)
    if late_feed:
        write_deltalake(paths["customers"], _customers([(5, "AUTO"), (6, None)]), mode="append")
        DeltaTable(paths["customers"]).update(updates={"c_segment": "'BUILD'"}, predicate="c_custkey = 2")
        DeltaTable(paths["customers"]).delete("c_custkey = 3")
        DeltaTable(paths["customers"]).alter.set_table_properties(CDF, raise_if_not_exists=False)
    write_deltalake(paths["orders"], _orders([_order(rng, key) for key in range(1, 7)]), configuration=CDF)
    DeltaTable(paths["customers"]).alter.set_table_properties({"ivm.primary_key": "c_custkey"},
                                                              raise_if_not_exists=False)
    DeltaTable(paths["orders"]).alter.set_table_properties({"ivm.primary_key": "o_orderkey"},
                                                           raise_if_not_exists=False)
    change_delta_tables(paths, steps, rng)
    return paths


def change_delta_tables(paths: dict[str, str], steps: int, rng: random.Random) -> None:
    """Change the tables ``steps`` times (one commit each), picking each change with ``rng``."""
    next_order = max(key for key, *_ in latest_rows(paths["orders"]) or [(0,)]) + 1
    for _ in range(steps):
        action = rng.choice(ACTIONS)
        customers, orders = DeltaTable(paths["customers"]), DeltaTable(paths["orders"])
        if action == "append orders":
            count = rng.randint(1, 3)
            write_deltalake(orders, _orders([_order(rng, key) for key in range(next_order, next_order + count)]),
                            mode="append")
            next_order += count
        elif action == "delete orders":
            orders.delete(f"o_orderkey % 5 = {rng.randrange(5)} AND o_orderkey > {next_order - 8}")
        elif action == "update orders":
            orders.update(updates={"o_price": "CAST(o_price + 1 AS DECIMAL(12,2))"},
                          predicate=f"o_custkey = {rng.randint(1, 7)}")
        elif action == "update a customer":
            segment = rng.choice(SEGMENTS)
            value = "NULL" if segment is None else f"'{segment}'"
            customers.update(updates={"c_segment": value}, predicate=f"c_custkey = {rng.randint(1, 7)}")
        elif action == "delete a customer":
            customers.delete(f"c_custkey = {rng.randint(1, 7)}")
        else:  # upsert customers: some keys there, some new or deleted before
            source = _customers([(key, rng.choice(SEGMENTS)) for key in rng.sample(range(1, 8), 2)])
            (customers.merge(source, predicate="t.c_custkey = s.c_custkey", source_alias="s", target_alias="t")
             .when_matched_update_all().when_not_matched_insert_all().execute())


def latest_rows(path: str) -> list[tuple]:
    """The rows of the Delta table's latest version, as delta-rs reads them."""
    data = DeltaTable(path).to_pyarrow_table()
    return list(zip(*(data.column(name).to_pylist() for name in data.column_names), strict=True))


def _order(rng: random.Random, key: int) -> tuple:
    price = None if rng.random() < 0.15 else Decimal(rng.randint(100, 9999)) / 100
    return key, rng.randint(1, 7), price


def _customers(rows: list[tuple]) -> pa.Table:
    return pa.Table.from_pylist([dict(zip(CUSTOMERS.names, row, strict=True)) for row in rows], schema=CUSTOMERS)


def _orders(rows: list[tuple]) -> pa.Table:
    return pa.Table.from_pylist([dict(zip(ORDERS.names, row, strict=True)) for row in rows], schema=ORDERS)
