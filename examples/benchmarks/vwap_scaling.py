"""Benchmark: the shape of RPAI Figure 8 for VWAP (and NQ2) — per-update time against the size of the book.

For each size n the order book is built by n updates (inserts and deletes) of ``bids``, then the next
``--probe`` updates are applied one at a time and timed. Three strategies, side by side in one run:

- ``rpai``: the plan the optimizer picks (RPAI tree, O(log n) per update);
- ``general``: RPAI's general algorithm (§4.2), forced, O(n) per update;
- ``recompute``: DuckDB re-running the query over the current book after each update (its tables
  kept in sync with single-row INSERT/DELETE), the recomputation baseline.

Prices take ``n // 10`` levels so that the number of distinct prices (what the O(n) strategies
iterate over) grows with n. Not a test: it prints JSON lines for RESULTS.md.

``--query nq2`` times NQ2 instead (Figure 8's first panel is NQ2 on the paper's finance trace): its
plan already *is* the general algorithm for the outer query (with the middle level in an RPAI tree,
O(n log n) per update), so only the plan and recomputation are compared.

    python examples/benchmarks/vwap_scaling.py --sizes 1000,10000,100000,1000000 --general-max 100000
    python examples/benchmarks/vwap_scaling.py --query nq2 --sizes 1000,3000,10000,30000 --probe 20
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from catalog.orderbook import orderbook_catalog  # noqa: E402
from operators.runtime.stream import batches  # noqa: E402
from planner.view import MaintainedView  # noqa: E402
from planner.workloads.orderbook_streams import make_orderbook_stream  # noqa: E402

QUERIES = ROOT / "examples" / "orderbook"


def stream(n: int, probe: int):
    updates = make_orderbook_stream(n + probe, seed=1, price_levels=max(100, n // 10), mid_price=10 * max(100, n))
    return updates[:n], updates[n : n + probe]


def maintained(sql: str, n: int, probe: int, strategy: str | None) -> dict:
    build, timed = stream(n, probe)
    view = MaintainedView(sql, orderbook_catalog(), nested_strategy=strategy)
    started = time.perf_counter()
    for chunk in batches(build, 50_000):
        view.apply(chunk)
    build_s = time.perf_counter() - started
    started = time.perf_counter()
    for update in batches(timed, 1):
        view.apply(update)
    per_update = (time.perf_counter() - started) / len(timed)
    return {"strategy": strategy or "plan", "n": n, "build_s": round(build_s, 2),
            "per_update_us": round(per_update * 1e6, 1), "result": view.result()[0][0]}


def recompute(sql: str, n: int, probe: int) -> dict:
    import duckdb

    build, timed = stream(n, probe)
    db = duckdb.connect()
    db.execute("create table bids (t bigint, id bigint, broker_id int, volume bigint, price bigint)")
    live = {}
    for u in build:
        if u.op > 0:
            live[u.row[1]] = u.row
        else:
            live.pop(u.row[1], None)
    db.executemany("insert into bids values (?, ?, ?, ?, ?)", list(live.values()))
    started = time.perf_counter()
    result = None
    for u in timed:
        if u.op > 0:
            db.execute("insert into bids values (?, ?, ?, ?, ?)", list(u.row))
        else:
            db.execute("delete from bids where id = ?", [u.row[1]])
        result = db.execute(sql).fetchone()[0]
    per_update = (time.perf_counter() - started) / len(timed)
    return {"strategy": "recompute", "n": n, "per_update_us": round(per_update * 1e6, 1), "result": result}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--query", choices=("vwap", "nq2"), default="vwap")
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--probe", type=int, default=100, help="timed single-update batches per size (all strategies)")
    parser.add_argument("--general-max", type=int, default=100_000)
    parser.add_argument("--recompute-max", type=int, default=100_000)
    args = parser.parse_args()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}", flush=True)
    sql = (QUERIES / f"{args.query}.sql").read_text()
    for n in (int(s) for s in args.sizes.split(",")):
        print(json.dumps(maintained(sql, n, args.probe, None)), flush=True)
        if n <= args.general_max and args.query == "vwap":
            print(json.dumps(maintained(sql, n, args.probe, "general")), flush=True)
        if n <= args.recompute_max:
            print(json.dumps(recompute(sql, n, args.probe)), flush=True)


if __name__ == "__main__":
    main()
