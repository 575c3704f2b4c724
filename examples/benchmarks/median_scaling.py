"""Benchmark: per-update time of a maintained exact MEDIAN against the number of rows (issue 24, item 5).

For each size n a table of n rows is built (inserts, in batches), then ``--probe`` updates are
applied one at a time and timed: each deletes a random present row or inserts a new one (half and
half, so the size stays about n), through the whole runner (validation, stages, result changes).
Two views, on the default (compiled) local runner:

- ``grouped``: ``SELECT g, median(x) FROM v GROUP BY g`` with ``--groups`` groups, so a group holds
  n / groups values and its order-statistic index grows with n;
- ``global``: ``SELECT median(x) FROM v``, one index of all n values.

An order-statistic index costs O(log n) per update (operators/structures/order_statistics.py), so
the per-update time should stay flat within a small factor from 10^4 to 10^6 rows. Not a test: it
prints JSON lines (with the machine and its load) for RESULTS.md.

    python examples/benchmarks/median_scaling.py --sizes 10000,100000,1000000
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

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from catalog.ddl import catalog_from_ddl  # noqa: E402
from operators.runtime.stream import Update, batches  # noqa: E402
from planner.view import MaintainedView  # noqa: E402

DDL = "CREATE TABLE v (id BIGINT PRIMARY KEY, g INT, x DOUBLE);"
QUERIES = {"grouped": "select g, median(x) as m from v group by g", "global": "select median(x) as m from v"}


def workload(n: int, probe: int, groups: int, seed: int = 1) -> tuple[list[Update], list[Update]]:
    """n inserts, then ``probe`` single updates: a delete of a random present row or a new insert."""
    rng = random.Random(seed)
    rows = {i: (i, rng.randrange(groups), rng.uniform(0, 1e6)) for i in range(n)}
    build = [Update(i + 1, "v", 1, row) for i, row in enumerate(rows.values())]
    present, timed, seq, next_id = list(rows), [], n + 1, n
    for _ in range(probe):
        if rng.random() < 0.5:
            key = present.pop(rng.randrange(len(present)))
            timed.append(Update(seq, "v", -1, rows.pop(key)))
        else:
            rows[next_id] = (next_id, rng.randrange(groups), rng.uniform(0, 1e6))
            present.append(next_id)
            timed.append(Update(seq, "v", 1, rows[next_id]))
            next_id += 1
        seq += 1
    return build, timed


def measure(query: str, n: int, probe: int, groups: int) -> dict:
    build, timed = workload(n, probe, groups)
    with MaintainedView(QUERIES[query], catalog_from_ddl(DDL)) as view:
        started = time.perf_counter()
        for chunk in batches(build, 50_000):
            view.apply(chunk)
        build_s = time.perf_counter() - started
        started = time.perf_counter()
        for update in batches(timed, 1):
            view.apply(update)
        per_update = (time.perf_counter() - started) / len(timed)
        rows = len(view.result())
    return {"query": query, "n": n, "groups": groups if "group by" in QUERIES[query] else 1, "build_s": round(build_s, 2),
            "per_update_us": round(per_update * 1e6, 1), "result_rows": rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--probe", type=int, default=5000)
    parser.add_argument("--groups", type=int, default=10)
    args = parser.parse_args()
    print(json.dumps({"machine": platform.machine(), "python": platform.python_version(), "cpus": os.cpu_count(),
                      "load_average": os.getloadavg()}))
    results = []
    for query in QUERIES:
        for n in map(int, args.sizes.split(",")):
            results.append(measure(query, n, args.probe, args.groups))
            print(json.dumps(results[-1]), flush=True)
    for query in QUERIES:
        times = [r["per_update_us"] for r in results if r["query"] == query]
        print(json.dumps({"query": query, "largest_over_smallest": round(max(times) / min(times), 2),
                          "load_average": os.getloadavg()}))


if __name__ == "__main__":
    main()
