"""Benchmark: per-update time of a maintained three-table LEFT JOIN (issue 25, item 2) at two sizes.

    SELECT c.id, c.city, o.oid, o.amount, p.pid, p.amount AS paid
    FROM customers c LEFT JOIN orders o ON o.cust = c.id LEFT JOIN payments p ON p.oid = o.oid

For each size n: n customers, 2n orders (customer keys drawn from 1.2n, so some dangle and some
customers have none, a few NULL) and 2n payments (order keys from 2.4n, so some orders are unpaid)
are loaded in batches, then ``--probe`` single updates are applied one at a time and timed: half
deletes of a random present row, half inserts, over the three tables, so customers and orders keep
turning from padded to matched and back. Three ways of keeping the view:

- ``fk``: the foreign keys declared; c ⟕ o is the live-tuple lookup (O(1) per change) and the join
  with payments an outer-join stage with per-key match counts (the default plan);
- ``no_fk``: no foreign keys; both joins are outer-join stages, every input materialized (the
  materializing change-propagation plan);
- ``recompute``: DuckDB applies the update to its tables and recomputes the view into a table
  (``CREATE OR REPLACE TABLE ... AS``), the cost of refreshing it from scratch (``--recompute-probe``
  updates, it is slow).

Not a test: it prints JSON lines (with the machine and its load) for RESULTS.md.

    python examples/benchmarks/left_join3.py --sizes 10000,100000
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import time
from pathlib import Path

import duckdb
import pyarrow as pa

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from catalog.ddl import catalog_from_ddl  # noqa: E402
from operators.runtime.stream import Update, batches  # noqa: E402
from planner.view import MaintainedView  # noqa: E402

DDL = """
CREATE TABLE customers (id BIGINT PRIMARY KEY, city STRING);
CREATE TABLE orders (oid BIGINT PRIMARY KEY, cust BIGINT REFERENCES customers(id), amount INT);
CREATE TABLE payments (pid BIGINT PRIMARY KEY, oid BIGINT REFERENCES orders(oid), amount INT)
"""
NO_FK_DDL = DDL.replace(" REFERENCES customers(id)", "").replace(" REFERENCES orders(oid)", "")
QUERY = """SELECT c.id, c.city, o.oid, o.amount, p.pid, p.amount AS paid
FROM customers c LEFT JOIN orders o ON o.cust = c.id LEFT JOIN payments p ON p.oid = o.oid"""


class Tables:
    """The three tables as they stand, and random rows for them (the key domains make partners come and go)."""

    def __init__(self, n: int, rng: random.Random):
        self.n, self.rng = n, rng
        self.rows: dict[str, dict[int, tuple]] = {"customers": {}, "orders": {}, "payments": {}}
        self.next = {"customers": n, "orders": 2 * n, "payments": 2 * n}

    def row(self, table: str, key: int) -> tuple:
        rng, n = self.rng, self.n
        if table == "customers":
            return key, rng.choice(["oslo", "rome", "lima"])
        if table == "orders":
            return key, None if rng.random() < 0.02 else rng.randrange(int(1.2 * n)), rng.randint(1, 100)
        return key, rng.randrange(int(2.4 * n)), rng.randint(1, 100)

    def insert(self, table: str, key: int) -> tuple:
        self.rows[table][key] = self.row(table, key)
        return self.rows[table][key]


def workload(n: int, probe: int, seed: int = 1) -> tuple[list[Update], list[Update]]:
    """The load (n customers, 2n orders, 2n payments), then ``probe`` single updates."""
    rng = random.Random(seed)
    tables = Tables(n, rng)
    build = []
    for table, count in (("customers", n), ("orders", 2 * n), ("payments", 2 * n)):
        build += [Update(len(build) + i + 1, table, 1, tables.insert(table, key)) for i, key in enumerate(range(count))]
    timed, seq = [], len(build) + 1
    present = {table: list(rows) for table, rows in tables.rows.items()}
    for _ in range(probe):
        table = rng.choice(list(present))
        if rng.random() < 0.5:
            key = present[table].pop(rng.randrange(len(present[table])))
            timed.append(Update(seq, table, -1, tables.rows[table].pop(key)))
        else:
            key = tables.next[table]
            tables.next[table] += 1
            present[table].append(key)
            timed.append(Update(seq, table, 1, tables.insert(table, key)))
        seq += 1
    return build, timed


def maintained(ddl: str, build: list[Update], timed: list[Update]) -> dict:
    with MaintainedView(QUERY, catalog_from_ddl(ddl)) as view:
        started = time.perf_counter()
        for chunk in batches(build, 50_000):
            view.apply(chunk)
        build_s = time.perf_counter() - started
        started = time.perf_counter()
        for update in batches(timed, 1):
            view.apply(update)
        per_update = (time.perf_counter() - started) / len(timed)
        return {"build_s": round(build_s, 2), "per_update_us": round(per_update * 1e6, 1),
                "result_rows": len(view.result()), "probe": len(timed)}


def recomputed(build: list[Update], timed: list[Update]) -> dict:
    """Each update applied to DuckDB's tables, then the view recomputed into a table."""
    columns = {"customers": ("id", "city"), "orders": ("oid", "cust", "amount"), "payments": ("pid", "oid", "amount")}
    with duckdb.connect() as con:
        for table, names in columns.items():
            rows = [u.row for u in build if u.table == table]
            loaded = pa.table({name: [row[i] for row in rows] for i, name in enumerate(names)})  # noqa: F841 (read by DuckDB)
            con.execute(f"CREATE TABLE {table} AS SELECT * FROM loaded")
        con.execute(f"CREATE TABLE v AS {QUERY}")
        started = time.perf_counter()
        for update in timed:
            if update.op > 0:
                con.execute(f"INSERT INTO {update.table} VALUES ({', '.join('?' * len(update.row))})", update.row)
            else:
                con.execute(f"DELETE FROM {update.table} WHERE {columns[update.table][0]} = ?", (update.row[0],))
            con.execute(f"CREATE OR REPLACE TABLE v AS {QUERY}")
        per_update = (time.perf_counter() - started) / len(timed)
        rows = con.execute("SELECT count(*) FROM v").fetchone()[0]
    return {"build_s": None, "per_update_us": round(per_update * 1e6, 1), "result_rows": rows, "probe": len(timed)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--probe", type=int, default=5000)
    parser.add_argument("--recompute-probe", type=int, default=50)
    args = parser.parse_args()
    print(json.dumps({"machine": platform.machine(), "python": platform.python_version(), "cpus": os.cpu_count(),
                      "load_average": os.getloadavg()}))
    for n in map(int, args.sizes.split(",")):
        build, timed = workload(n, args.probe)
        runs = {"fk": maintained(DDL, build, timed), "no_fk": maintained(NO_FK_DDL, build, timed),
                "recompute": recomputed(build, timed[: args.recompute_probe])}
        for name, measured in runs.items():
            print(json.dumps({"plan": name, "customers": n, "rows": len(build), **measured,
                              "load_average": os.getloadavg()}), flush=True)


if __name__ == "__main__":
    main()
