"""Per-update time of the top-3-per-group view (ROW_NUMBER) as the data grows (issue 25).

The query: the three largest orders per customer, the top-N pattern (a derived table computing
ROW_NUMBER, filtered on ``rn <= 3`` outside), maintained per partition on an ordered index
(operators/stages/window.py). The number of customers is fixed (``--groups``), so partitions grow
with the data: 10⁴ rows are 100 per partition, 10⁶ are 10 000. A change costs O(log n + rows
entering or leaving the top 3), so the per-update time should stay flat (within 2×) across sizes;
one re-numbering the partition would grow 100×.

The updates after the load are single-row batches in a fixed mix: inserts (most land below the top
3 and change nothing; some enter it and push one out), deletes of random present rows (a delete
inside the top 3 pulls the 4th row up) and moves of a row to another customer.

    python examples/benchmarks/window_topn_scaling.py --sizes 10000,100000,1000000

Not a test: prints one JSON line per size. Local runner (the compiled program; the window stage
runs as its stage class from inside it).
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

DDL = "CREATE TABLE orders (id BIGINT, cust INT, amount INT, PRIMARY KEY (id));"
SQL = ("SELECT id, cust, amount, rn FROM (SELECT id, cust, amount, ROW_NUMBER() OVER "
       "(PARTITION BY cust ORDER BY amount DESC, id) AS rn FROM orders) t WHERE rn <= 3")


def _updates(rng: random.Random, rows: dict[int, tuple], next_id: int, count: int, groups: int, first_seq: int):
    """``count`` single-row changes: 50% inserts, 30% deletes, 20% moves (delete + insert, another customer)."""
    out: list[list[Update]] = []
    ids = list(rows)
    seq = first_seq
    for _ in range(count):
        action = rng.random()
        if action < 0.5:
            next_id += 1
            row = (next_id, rng.randrange(groups), rng.randrange(10**9))
            rows[next_id] = row
            ids.append(next_id)
            out.append([Update(seq, "orders", 1, row)])
            seq += 1
            continue
        position = rng.randrange(len(ids))
        key = ids[position]
        ids[position] = ids[-1]
        ids.pop()
        old = rows.pop(key)
        if action < 0.8:
            out.append([Update(seq, "orders", -1, old)])
            seq += 1
        else:
            new = (key, rng.randrange(groups), rng.randrange(10**9))
            rows[key] = new
            ids.append(key)
            out.append([Update(seq, "orders", -1, old), Update(seq + 1, "orders", 1, new)])
            seq += 2
    return out


def measure(size: int, groups: int, updates: int, repeats: int) -> dict:
    rng = random.Random(size)
    catalog = catalog_from_ddl(DDL)
    rows = {i: (i, rng.randrange(groups), rng.randrange(10**9)) for i in range(1, size + 1)}
    load = [Update(i, "orders", 1, row) for i, row in enumerate(rows.values(), 1)]
    with MaintainedView(SQL, catalog) as view:
        started = time.perf_counter()
        for start in range(0, len(load), 100_000):
            view.apply(load[start: start + 100_000])
        loaded = time.perf_counter() - started
        assert len(view.result()) == 3 * groups
        per_update = []
        seq, next_id = size + 1, size
        for _ in range(repeats):
            batches = _updates(rng, rows, next_id, updates, groups, seq)
            next_id += updates
            seq = batches[-1][-1].seq + 1
            started = time.perf_counter()
            for batch in batches:
                view.apply(batch)
            per_update.append((time.perf_counter() - started) / len(batches))
        assert len(view.result()) == 3 * groups
    return {"rows": size, "groups": groups, "rows_per_partition": size // groups, "load_s": round(loaded, 2),
            "per_update_us_median": round(statistics.median(per_update) * 1e6, 1),
            "per_update_us_runs": [round(t * 1e6, 1) for t in per_update], "updates_per_run": updates}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--groups", type=int, default=100)
    parser.add_argument("--updates", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(json.dumps({"machine": os.uname().nodename, "cpus": os.cpu_count(), "load_average": os.getloadavg()}))
    for size in (int(s) for s in args.sizes.split(",")):
        print(json.dumps(measure(size, args.groups, args.updates, args.repeats)), flush=True)


if __name__ == "__main__":
    main()
