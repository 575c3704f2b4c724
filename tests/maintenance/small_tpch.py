"""Small TPC-H change streams on which every query's result is non-empty, for running every query on
the Spark engine: SF 0.01's streams (~130 000 updates) cost minutes per query there, and
``tpchgen`` below SF 0.01 repeats partsupp keys.

The tables are a foreign-key-consistent sample of SF 0.01: every ``orders_every``-th order with all
its lineitems (per-order sums, Q18's, stay whole), the parts and suppliers those lineitems name and
the partsupp rows they ship from, the customers of the kept orders and every
``other_customers_every``-th other customer (Q13's and Q22's customers without orders), every
supplier, nation and region. A sample of every k-th order leaves the selective queries empty, so
it also keeps *witnesses*, chosen with the queries' own constants: a few parts each of Q2's, Q8's,
Q19's and Q20's part selections with all their partsupp rows and some of their orders, the orders
Q18's ``HAVING SUM(l_quantity) > 300`` selects, and some orders Q21 selects. Q17's specification
constants name no part with a lineitem at SF 0.01 (examples/tpch/variants/q17_dense.sql).

Two streams over the sample: ``churn`` (``make_stream``'s ``random``: inserts, deletes of present
rows, re-inserts) with region and nation inserted first and kept, since a deleted region empties
every query through it; and ``window`` (a FIFO window of ``WINDOW_SHARE`` of the lineitems).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import date
from itertools import islice

from catalog.tpch import tpch_catalog
from operators.runtime.stream import UpdateBatch
from planner.workloads.tpch_streams import make_stream

Q18_QUANTITY = 300
Q21_ORDERS = 40
WINDOW_SHARE = 0.7
SAUDI_ARABIA = 20  # n_nationkey
KEPT_DIMENSIONS = ("region", "nation")

Row = dict[str, object]
# Each selective query's conditions on one lineitem with its order, part, and the names of its
# supplier's and customer's nations and customer's region (``_lineitem_context``).
LINEITEM_SELECTIONS: dict[str, Callable[[Row], bool]] = {
    "q07": lambda r: {r["supplier_nation"], r["customer_nation"]} == {"FRANCE", "GERMANY"}
    and date(1995, 1, 1) <= r["l_shipdate"] <= date(1996, 12, 31),
    "q08": lambda r: r["p_type"] == "ECONOMY ANODIZED STEEL" and r["customer_region"] == "AMERICA"
    and date(1995, 1, 1) <= r["o_orderdate"] <= date(1996, 12, 31),
    "q17_dense": lambda r: r["p_brand"] == "Brand#44" and r["p_container"] == "WRAP CAN" and r["l_quantity"] < 5,
    "q19": lambda r: r["l_shipmode"] in ("AIR", "AIR REG") and r["l_shipinstruct"] == "DELIVER IN PERSON" and any(
        r["p_brand"] == brand and r["p_container"].startswith(size) and low <= r["l_quantity"] <= low + 10
        and 1 <= r["p_size"] <= top for brand, size, low, top in (("Brand#12", "SM", 1, 5), ("Brand#23", "MED", 10, 10),
                                                                     ("Brand#34", "LG", 20, 15))),
    "q20": lambda r: r["p_name"].startswith("forest") and r["supplier_nation"] == "CANADA"
    and date(1994, 1, 1) <= r["l_shipdate"] < date(1995, 1, 1),
}
WITNESS_LINEITEMS = 40  # orders kept per lineitem selection
Q02_PARTS = 3  # parts of Q2's selection kept with all their partsupp rows


def _q02_part(part: Row) -> bool:
    return part["p_size"] == 15 and part["p_type"].endswith("BRASS")


def _spread(rows: list[Row], count: int) -> list[Row]:
    """``count`` of ``rows`` spread evenly over them: the streams insert rows in key order, so
    witnesses at one end of the key range would all be present in the same few batches."""
    return rows[::max(1, len(rows) // count)][:count]


def _named(table: str, rows: Sequence[tuple]) -> list[Row]:
    columns = tpch_catalog().table(table).column_names
    return [dict(zip(columns, row, strict=True)) for row in rows]


def _q21_orders(orders: list[Row], lineitems_of: Mapping[int, list[Row]], nation_of: Mapping[int, int]) -> list[int]:
    """Orders with status F where a Saudi supplier's lineitem alone is late among several suppliers."""
    def selected(order: Row) -> bool:
        items = lineitems_of.get(order["o_orderkey"], [])
        late = {item["l_suppkey"] for item in items if item["l_receiptdate"] > item["l_commitdate"]}
        return (order["o_orderstatus"] == "F" and len(late) == 1 and nation_of[next(iter(late))] == SAUDI_ARABIA
                and len({item["l_suppkey"] for item in items}) > 1)
    return [order["o_orderkey"] for order in _spread(list(filter(selected, orders)), Q21_ORDERS)]


def _lineitem_context(named: Mapping[str, list[Row]]) -> Iterator[Row]:
    """Each lineitem's columns with its order's and part's, and its nations' and region's names."""
    orders = {order["o_orderkey"]: order for order in named["orders"]}
    parts = {part["p_partkey"]: part for part in named["part"]}
    nation = {row["n_nationkey"]: row for row in named["nation"]}
    region = {row["r_regionkey"]: row["r_name"] for row in named["region"]}
    supplier_nation = {row["s_suppkey"]: nation[row["s_nationkey"]]["n_name"] for row in named["supplier"]}
    customer_nation = {row["c_custkey"]: nation[row["c_nationkey"]] for row in named["customer"]}
    for item in named["lineitem"]:
        order = orders[item["l_orderkey"]]
        customer = customer_nation[order["o_custkey"]]
        yield {**item, **order, **parts[item["l_partkey"]], "supplier_nation": supplier_nation[item["l_suppkey"]],
               "customer_nation": customer["n_name"], "customer_region": region[customer["n_regionkey"]]}


def _witness_orders(named: Mapping[str, list[Row]], lineitems_of: Mapping[int, list[Row]]) -> set[int]:
    """The orders kept so that the selective queries find rows (module docstring)."""
    witnesses = {key for key, items in lineitems_of.items()
                 if sum(item["l_quantity"] for item in items) > Q18_QUANTITY}
    contexts = list(_lineitem_context(named))
    for selection in LINEITEM_SELECTIONS.values():
        witnesses |= {row["l_orderkey"] for row in _spread(list(filter(selection, contexts)), WITNESS_LINEITEMS)}
    nation_of = {supplier["s_suppkey"]: supplier["s_nationkey"] for supplier in named["supplier"]}
    return witnesses | set(_q21_orders(named["orders"], lineitems_of, nation_of))


def small_tpch(tables: Mapping[str, Sequence[tuple]], orders_every: int = 60,
               other_customers_every: int = 12) -> dict[str, list[tuple]]:
    """The sample of ``tables`` (rows in catalog column order) described in the module docstring."""
    named = {name: _named(name, rows) for name, rows in tables.items()}
    lineitems_of: dict[int, list[Row]] = {}
    for item in named["lineitem"]:
        lineitems_of.setdefault(item["l_orderkey"], []).append(item)
    kept_orders = _witness_orders(named, lineitems_of) | {
        order["o_orderkey"] for number, order in enumerate(named["orders"]) if number % orders_every == 0}
    q02_parts = {part["p_partkey"] for part in islice(filter(_q02_part, named["part"]), Q02_PARTS)}
    pairs = {(item["l_partkey"], item["l_suppkey"]) for key in kept_orders for item in lineitems_of[key]}
    parts = {part for part, _ in pairs} | q02_parts
    ordering = {order["o_custkey"] for order in named["orders"] if order["o_orderkey"] in kept_orders}
    kept: dict[str, Callable[[int, Row], bool]] = {
        "region": lambda _, row: True,
        "nation": lambda _, row: True,
        "supplier": lambda _, row: True,
        "part": lambda _, row: row["p_partkey"] in parts,
        "partsupp": lambda _, row: (row["ps_partkey"], row["ps_suppkey"]) in pairs or row["ps_partkey"] in q02_parts,
        "customer": lambda number, row: row["c_custkey"] in ordering or number % other_customers_every == 0,
        "orders": lambda _, row: row["o_orderkey"] in kept_orders,
        "lineitem": lambda _, row: row["l_orderkey"] in kept_orders,
    }
    return {name: [row for number, (row, values) in enumerate(zip(tables[name], named[name], strict=True))
                   if keep(number, values)]
            for name, keep in kept.items()}


def small_tpch_streams(tables: Mapping[str, Sequence[tuple]]) -> dict[str, UpdateBatch]:
    """The ``churn`` and ``window`` streams over ``small_tpch(tables)`` (module docstring)."""
    catalog = tpch_catalog()
    sample = small_tpch(tables)
    dimensions = make_stream({name: sample[name] for name in KEPT_DIMENSIONS}, catalog, "insert")
    churn = make_stream({name: rows for name, rows in sample.items() if name not in KEPT_DIMENSIONS}, catalog,
                        "random", seed=7, first_seq=len(dimensions) + 1)
    window = make_stream(sample, catalog, "window", int(len(sample["lineitem"]) * WINDOW_SHARE))
    return {"churn": UpdateBatch((*dimensions, *churn), checked=True), "window": window}
