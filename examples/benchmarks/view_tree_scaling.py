"""Per-update time of a view tree against the binary-join fallback as the data grows (issue 12).

The query: R(A)·S(A,C,E)·T(A,C,D) grouped by A with SUM(E*D) and COUNT(*), q-hierarchical, over a
fixed number of A values (10), so each A value's join partners grow with the data: the fallback's
delta joins touch O(n²) join rows per update, the view tree O(1) views (Olteanu Thm 4.1). The
fallback is obtained the way a user would meet it: the same tables with nullable join columns,
which the view-tree rule refuses (a view tree would match NULL join values); the data has no NULLs.

    python examples/benchmarks/view_tree_scaling.py --sizes 300,3000,30000 --fallback-sizes 300,1000,3000

Not a test: prints one JSON line per (plan, size). Local runner; single-row batches after a load.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from decimal import Decimal

from catalog.ddl import catalog_from_ddl
from operators.runtime.stream_format import Update
from planner.view import MaintainedView

DDL = """CREATE TABLE r (a INT {null}, b INT NOT NULL);
CREATE TABLE s (a INT {null}, c INT {null}, e INT NOT NULL);
CREATE TABLE t (a INT {null}, c INT {null}, d DECIMAL(9,2) NOT NULL);"""
SQL = ("SELECT r.a, SUM(s.e * t.d) AS x, COUNT(*) AS n FROM r, s, t "
       "WHERE r.a = s.a AND s.a = t.a AND s.c = t.c GROUP BY r.a")
JOIN_VALUES = 10


def _rows(g: random.Random):
    return {"r": lambda: (g.randrange(JOIN_VALUES), g.randrange(10)),
            "s": lambda: (g.randrange(JOIN_VALUES), g.randrange(5), g.randrange(10**6)),
            "t": lambda: (g.randrange(JOIN_VALUES), g.randrange(5), Decimal(g.randrange(10**6)) / 100)}


def timed(view: MaintainedView, load: list[Update], singles: list[Update]) -> tuple[float, float]:
    """Seconds to apply ``load`` as one batch, then per single-row batch of ``singles``."""
    started = time.perf_counter()
    view.apply(load)
    loaded = time.perf_counter() - started
    started = time.perf_counter()
    for update in singles:
        view.apply([update])
    return loaded, (time.perf_counter() - started) / len(singles)


def measure(plan: str, size: int, updates: int) -> dict:
    g = random.Random(1)
    rows = _rows(g)
    load = [Update(i + 1, table, 1, rows[table]()) for i, table in enumerate(t for t in rows for _ in range(size))]
    singles = [Update(len(load) + i + 1, table, 1, rows[table]()) for i, table in
               enumerate(g.choice(list(rows)) for _ in range(updates))]
    catalog = catalog_from_ddl(DDL.format(null="NOT NULL" if plan == "view_tree" else ""))
    with MaintainedView(SQL, catalog) as view:
        operators = [node.stage.describe().operator for node in view.compiled.dataflow.stages]
        loaded, per_update = timed(view, load, singles)
    return {"plan": plan, "rows_per_table": size, "load_s": round(loaded, 3),
            "per_update_us": round(per_update * 1e6, 1), "stages": operators}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="300,3000,30000", help="rows per table for the view tree")
    parser.add_argument("--fallback-sizes", default="300,1000,3000", help="rows per table for the fallback")
    parser.add_argument("--updates", type=int, default=300)
    args = parser.parse_args()
    for plan, sizes in (("view_tree", args.sizes), ("fallback", args.fallback_sizes)):
        for size in map(int, sizes.split(",")):
            print(json.dumps(measure(plan, size, args.updates)), flush=True)


if __name__ == "__main__":
    main()
