"""Per-update time of a running SUM OVER against the output changes it makes (issue 25).

The query: each order's running total within its customer, in time order,

    SUM(amount) OVER (PARTITION BY cust ORDER BY ts, id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)

maintained on an ordered prefix-aggregate index per partition (operators/stages/window.py). A change
at position p of a partition of m rows changes the running total of the m − p rows after it, which
are output changes (each row's old value out, new value in) whatever the algorithm: the stage's cost
should be O(log m) plus a constant per changed output row. Two kinds of single-row updates, on
partitions of ``m`` rows for each ``--partition-sizes`` value:

- ``append``: a new order later than every other of its customer (the common case of a time series):
  one output row, so the time should stay flat as m grows;
- ``middle``: an order inserted at a random time within its customer's history, then deleted again:
  about m/2 changed rows each, so the time should grow with m, and the time per changed row stay flat.

    python examples/benchmarks/running_sum_cost.py --partition-sizes 100,1000,10000

Not a test: prints one JSON line per size (local runner, the compiled program).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import time

from catalog.ddl import catalog_from_ddl
from operators.runtime.stream import Update
from planner.view import MaintainedView

DDL = "CREATE TABLE orders (id BIGINT, cust INT, ts INT, amount INT, PRIMARY KEY (id));"
SQL = ("SELECT id, cust, ts, SUM(amount) OVER (PARTITION BY cust ORDER BY ts, id "
       "ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS running FROM orders")


def _timed(view: MaintainedView, batches: list[list[Update]]) -> tuple[float, float]:
    """Seconds per batch and output changes per batch over ``batches``, applied one by one."""
    changed = 0
    started = time.perf_counter()
    for batch in batches:
        changed += len(view.apply(batch))
    return (time.perf_counter() - started) / len(batches), changed / len(batches)


def measure(partition_size: int, partitions: int, updates: int, repeats: int) -> dict:
    rng = random.Random(partition_size)
    catalog = catalog_from_ddl(DDL)
    size = partition_size * partitions
    # timestamps 0, 10, 20, ...: room for a middle insert between any two
    rows = [(i, i % partitions, 10 * (i // partitions), rng.randrange(1, 1000)) for i in range(size)]
    load = [Update(i + 1, "orders", 1, row) for i, row in enumerate(rows)]
    results: dict[str, list[tuple[float, float]]] = {"append": [], "middle": []}
    with MaintainedView(SQL, catalog) as view:
        for start in range(0, len(load), 100_000):
            view.apply(load[start: start + 100_000])
        assert len(view.result()) == size
        seq, next_id, last_ts = size + 1, size, 10 * partition_size
        for _ in range(repeats):
            appends = []
            for _ in range(updates):
                next_id += 1
                last_ts += 1
                appends.append([Update(seq, "orders", 1, (next_id, rng.randrange(partitions), last_ts, rng.randrange(1, 1000)))])
                seq += 1
            results["append"].append(_timed(view, appends))
            middle = []
            for _ in range(updates // 2):
                next_id += 1
                row = (next_id, rng.randrange(partitions), 10 * rng.randrange(partition_size) + 5, rng.randrange(1, 1000))
                middle += [[Update(seq, "orders", 1, row)], [Update(seq + 1, "orders", -1, row)]]
                seq += 2
            results["middle"].append(_timed(view, middle))
    out = {"partition_rows": partition_size, "partitions": partitions, "rows": size, "updates_per_run": updates}
    for kind, runs in results.items():
        per_update = statistics.median(t for t, _ in runs)
        changes = statistics.median(c for _, c in runs)
        out[kind] = {"per_update_us": round(per_update * 1e6, 1), "output_changes_per_update": round(changes, 1),
                     "us_per_output_change": round(per_update * 1e6 / changes, 2)}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partition-sizes", default="100,1000,10000")
    parser.add_argument("--partitions", type=int, default=20)
    parser.add_argument("--updates", type=int, default=400)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(json.dumps({"machine": os.uname().nodename, "cpus": os.cpu_count(), "load_average": os.getloadavg()}))
    for size in (int(s) for s in args.partition_sizes.split(",")):
        print(json.dumps(measure(size, args.partitions, args.updates, args.repeats)), flush=True)


if __name__ == "__main__":
    main()
