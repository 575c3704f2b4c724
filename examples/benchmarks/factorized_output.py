"""Per-update time of a join's result kept factorized on a view tree, against the materialized result,
as the data grows (issue 12, Olteanu Ex. 4.4).

The query: Q(A, B, C) = R(A, B)·S(A, C), no aggregate, over a fixed number of A values (10), so the
result has n²/10 rows for n rows per table and a single-tuple change meets n/10 partners. Plans:

- ``pull``: the view tree in pull mode (``push=False``): a change updates O(1) views, nothing else;
  the result is enumerated from the views on request (measured: the time per row of the first
  ``READ`` rows);
- ``push``: the same tree returning each batch's changes (delta enumeration, O(|δQ|) = O(n/10));
- ``binary``: the materializing fallback (``join_strategy="binary"``), which also keeps the result.

    python examples/benchmarks/factorized_output.py --sizes 300,3000,30000 --push-sizes 300,1000,3000

Not a test: prints one JSON line per (plan, size). Local runner; single-row changes after a load,
alternating inserts of new rows and deletes of loaded ones.
"""

from __future__ import annotations

import argparse
import json
import random
import time

from view_tree_scaling import timed  # examples/benchmarks/, beside this script

from catalog.ddl import catalog_from_ddl
from operators.runtime.stream import Update
from planner.view import MaintainedView

CATALOG = catalog_from_ddl("CREATE TABLE r (a INT NOT NULL, b INT NOT NULL); CREATE TABLE s (a INT NOT NULL, c INT NOT NULL);")
SQL = "SELECT r.a, r.b, s.c FROM r JOIN s ON r.a = s.a"
JOIN_VALUES = 10
#: Rows read to time the enumeration (the whole result at 30 000 rows per table is 90 million).
READ = 100_000
PLANS = {"pull": {"push": False}, "push": {}, "binary": {"join_strategy": "binary"}}


def measure(plan: str, size: int, updates: int) -> dict:
    g = random.Random(1)
    load = [Update(i + 1, table, 1, (g.randrange(JOIN_VALUES), i)) for i, table in enumerate(("r", "s") * size)]
    singles, seq = [], len(load)
    for i in range(updates):
        seq += 1
        if i % 2:
            victim = load[g.randrange(len(load))]  # a loaded row (rows are distinct: b, c are their index)
            singles.append(Update(seq, victim.table, -1, victim.row))
        else:
            singles.append(Update(seq, g.choice("rs"), 1, (g.randrange(JOIN_VALUES), 10**9 + i)))
    deleted = set()
    singles = [u for u in singles if u.op > 0 or (u.row not in deleted and not deleted.add(u.row))]
    with MaintainedView(SQL, CATALOG, **PLANS[plan]) as view:
        loaded, per_update = timed(view, load, singles)
        started = time.perf_counter()
        rows = sum(1 for _ in view.rows(READ))
        read = time.perf_counter() - started
    return {"plan": plan, "rows_per_table": size, "rows_read": rows, "load_s": round(loaded, 3),
            "per_update_us": round(per_update * 1e6, 1), "read_us_per_row": round(read / max(rows, 1) * 1e6, 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="300,3000,30000", help="rows per table for the pull-mode view tree")
    parser.add_argument("--push-sizes", default="300,1000,3000", help="rows per table for push mode and the fallback")
    parser.add_argument("--updates", type=int, default=400)
    args = parser.parse_args()
    for size in map(int, args.sizes.split(",")):
        print(json.dumps(measure("pull", size, args.updates)), flush=True)
    for plan in ("push", "binary"):
        for size in map(int, args.push_sizes.split(",")):
            print(json.dumps(measure(plan, size, args.updates)), flush=True)


if __name__ == "__main__":
    main()
