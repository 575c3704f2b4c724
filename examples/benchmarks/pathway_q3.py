"""Benchmark peer: TPC-H Q3 maintained by Pathway over the same update stream (issue 13).

Reads the customer, orders and lineitem changes of a stream directory in the project's format (one
Parquet file per table, ``_seq`` global order, ``_op`` +1/-1), feeds them to Pathway in ``_seq``
order with a commit every 1 000 updates (issue 13's "1 000-update commits"), maintains Q3's
aggregate incrementally, and prints updates/s for the whole job (process start to final result,
stream reading included), peak RSS and the final top 10. ``--check`` compares them with a Parquet
result of ``ivm run --out`` (non-empty, equal as sets of exact values), as ``flink_q3.py`` does.

How the changes reach Pathway, and why. Pathway has no Parquet reader that takes deletions, so the
job reads the three files with pyarrow (only the columns Q3 reads, as a projection pushdown would),
merges them by ``_seq`` and sends them through ONE ``pw.io.python.ConnectorSubject`` (``next`` for
an insert, ``delete`` for a delete: Pathway's documented way to retract a row; the primary key
``(t, k1, k2)`` names the row: the table and its key). One subject keeps the ``_seq`` interleaving
across tables (three subjects would run as three independent threads); the job splits it again with
``filter(t == ...)``. Time-based autocommit is off; the subject commits after every 1 000 updates.

The query, written in Pathway's Table API (``pw.sql`` covers no ORDER BY/LIMIT): customers of
segment BUILDING ⋈ orders before 1995-03-15 ⋈ lineitems shipped after it, grouped by (l_orderkey,
o_orderdate, o_shippriority), ``sum(l_extendedprice * (1 - l_discount))``. The aggregate is
maintained by Pathway; the top 10 (ORDER BY revenue DESC, o_orderdate LIMIT 10) is taken from the
final aggregate in the driver, once, because Pathway has no streaming top-k operator: Pathway is
spared the top-k maintenance that Flink (streaming Top-N) and ``ivm run`` do. Exact arithmetic:
Pathway has no DECIMAL type, so prices are fed as integer cents and discounts as integer
hundredths (exact for DECIMAL(15,2)); revenue is their integer product in units of 1e-4 and is
turned back into a Decimal at the end. Dates are fed as days since 1970-01-01.

Runs in its own venv, not the project's (Pathway pins its own pyarrow and numpy):

    python3 -m venv data/peers/pathway && data/peers/pathway/bin/pip install pathway   # 0.33.0 here
    data/peers/pathway/bin/python examples/benchmarks/pathway_q3.py --stream data/streams/sf0.1-window
    # the check (SF 0.01; the live stream ends with more than 10 groups, the window stream with 1):
    ivm run --query examples/tpch/q03.sql --stream data/streams/sf0.01-live --out /tmp/q3-live.parquet
    data/peers/pathway/bin/python examples/benchmarks/pathway_q3.py --stream data/streams/sf0.01-live \\
        --check /tmp/q3-live.parquet

Not a test: numbers go to RESULTS.md by hand with the machine described.
"""

from __future__ import annotations

import time

STARTED = time.perf_counter()  # the whole job is timed from here (the interpreter start is ~0.1 s before)

import argparse  # noqa: E402
import datetime  # noqa: E402
import resource  # noqa: E402
from collections import Counter  # noqa: E402
from decimal import Decimal  # noqa: E402
from pathlib import Path  # noqa: E402

import pyarrow as pa  # noqa: E402
import pyarrow.compute as pc  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
from peer_check import check_against_ivm  # noqa: E402  (examples/benchmarks/, beside this script)

COMMIT_EVERY = 1_000
EPOCH = datetime.date(1970, 1, 1)
DATE = (datetime.date(1995, 3, 15) - EPOCH).days
# per table: the key columns (k1, k2) and the other columns Q3 reads, in the subject's field names
TABLES = {
    "customer": (("c_custkey", None), {"segment": "c_mktsegment"}),
    "orders": (("o_orderkey", None), {"custkey": "o_custkey", "date": "o_orderdate", "shippriority": "o_shippriority"}),
    "lineitem": (("l_orderkey", "l_linenumber"), {"price": "l_extendedprice", "discount": "l_discount",
                                                  "date": "l_shipdate"}),
}
FIELDS = ("segment", "custkey", "date", "shippriority", "price", "discount")
DEFAULTS = {"segment": "", "custkey": 0, "date": 0, "shippriority": 0, "price": 0, "discount": 0}


def as_int(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """Dates as days since 1970-01-01, DECIMAL(15,2) as integer hundredths, integers as they are."""
    if pa.types.is_date32(column.type):
        return column.cast(pa.int32()).cast(pa.int64())
    if pa.types.is_decimal(column.type):
        scaled = pc.multiply(column, pa.scalar(Decimal(10) ** column.type.scale, pa.decimal128(3, 0)))
        return scaled.cast(pa.int64())  # a safe cast: refuses any value it would truncate
    return column.cast(pa.int64()) if pa.types.is_integer(column.type) else column


def read_changes(stream: Path) -> tuple[pa.Table, int]:
    """The three tables' changes merged in ``_seq`` order as one table of the subject's fields."""
    parts = []
    for name, ((key1, key2), fields) in TABLES.items():
        data = pq.read_table(stream / f"{name}.parquet", columns=[key1, *([key2] if key2 else []), *fields.values(),
                                                                  "_seq", "_op"])
        rows = len(data)
        columns = {"t": pa.array([name] * rows, pa.string()), "seq": data["_seq"], "op": data["_op"].cast(pa.int8()),
                   "k1": as_int(data[key1]), "k2": as_int(data[key2]) if key2 else pa.array([0] * rows, pa.int64())}
        for field in FIELDS:
            columns[field] = as_int(data[fields[field]]) if field in fields else pa.array(
                [DEFAULTS[field]] * rows, pa.string() if field == "segment" else pa.int64())
        parts.append(pa.table(columns))
    merged = pa.concat_tables(parts).sort_by("seq")
    return merged, len(merged)


def maintain(changes: pa.Table) -> tuple[list[tuple], int]:
    """Run Q3 in Pathway over ``changes``; (final aggregate rows, result changes received)."""
    import pathway as pw

    class Change(pw.Schema):
        t: str = pw.column_definition(primary_key=True)
        k1: int = pw.column_definition(primary_key=True)
        k2: int = pw.column_definition(primary_key=True)
        segment: str
        custkey: int
        date: int
        shippriority: int
        price: int
        discount: int

    class Changes(pw.io.python.ConnectorSubject):
        def run(self) -> None:
            columns = [changes[name].to_pylist() for name in ("op", "t", "k1", "k2", *FIELDS)]
            for number, (op, t, k1, k2, segment, custkey, date, shippriority, price, discount) in enumerate(
                    zip(*columns, strict=True), 1):
                if op > 0:
                    self.next(t=t, k1=k1, k2=k2, segment=segment, custkey=custkey, date=date,
                              shippriority=shippriority, price=price, discount=discount)
                else:
                    self.delete(t=t, k1=k1, k2=k2, segment=segment, custkey=custkey, date=date,
                                shippriority=shippriority, price=price, discount=discount)
                if number % COMMIT_EVERY == 0:
                    self.commit()
            self.commit()

    table = pw.io.python.read(Changes(), schema=Change, autocommit_duration_ms=None)
    customers = table.filter((table.t == "customer") & (table.segment == "BUILDING"))
    orders = table.filter((table.t == "orders") & (table.date < DATE))
    lineitems = table.filter((table.t == "lineitem") & (table.date > DATE))
    customer_orders = customers.join(orders, customers.k1 == orders.custkey).select(
        orderkey=orders.k1, orderdate=orders.date, shippriority=orders.shippriority)
    joined = customer_orders.join(lineitems, customer_orders.orderkey == lineitems.k1).select(
        customer_orders.orderkey, customer_orders.orderdate, customer_orders.shippriority,
        revenue=lineitems.price * (100 - lineitems.discount))  # units of 1e-4, exact
    result = joined.groupby(joined.orderkey, joined.orderdate, joined.shippriority).reduce(
        joined.orderkey, joined.orderdate, joined.shippriority, revenue=pw.reducers.sum(joined.revenue))

    rows: Counter = Counter()
    received = 0

    def on_change(key, row: dict, time: int, is_addition: bool) -> None:
        nonlocal received
        received += 1
        rows[(row["orderkey"], row["revenue"], row["orderdate"], row["shippriority"])] += 1 if is_addition else -1

    pw.io.subscribe(result, on_change)
    pw.run(monitoring_level=pw.MonitoringLevel.NONE)
    if any(count not in (0, 1) for count in rows.values()):
        raise SystemExit(f"the result changelog does not add up to a set: {[r for r, c in rows.items() if c not in (0, 1)][:3]}")
    return [row for row, count in rows.items() if count], received


def top10(rows: list[tuple]) -> list[tuple]:
    """ORDER BY revenue DESC, o_orderdate LIMIT 10, in exact values (Decimal revenue, dates)."""
    exact = [(key, Decimal(revenue).scaleb(-4), EPOCH + datetime.timedelta(days=date), priority)
             for key, revenue, date, priority in rows]
    return sorted(exact, key=lambda row: (-row[1], row[2]))[:10]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--stream", type=Path, required=True, help="stream directory (one Parquet file per table)")
    parser.add_argument("--check", type=Path, help="Parquet result of `ivm run --out` to compare with")
    args = parser.parse_args()
    changes, updates = read_changes(args.stream)
    loaded = time.perf_counter() - STARTED
    aggregate, received = maintain(changes)
    rows = top10(aggregate)
    elapsed = time.perf_counter() - STARTED
    for row in rows:
        print(*row, sep="\t")
    print(f"{updates} updates of {', '.join(TABLES)} in {elapsed:.2f} s ({updates / elapsed:,.0f} updates/s) with "
          f"Pathway, commits of {COMMIT_EVERY}, whole job; of which {loaded:.2f} s reading Parquet; {received} result "
          f"changes; aggregate {len(aggregate)} groups, result: {len(rows)} rows; peak RSS "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MiB")
    if args.check:
        check_against_ivm("Pathway", rows, args.check)


if __name__ == "__main__":
    main()
