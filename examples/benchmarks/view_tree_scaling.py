"""Per-update time of a view tree against the binary-join fallback as the data grows (issue 12).

The query: R(A)·S(A,C,E)·T(A,C,D) grouped by A with SUM(E*D) and COUNT(*), q-hierarchical, over a
fixed number of A values (10), so each A value's join partners grow with the data: the fallback's
delta joins touch O(n²) join rows per update, the view tree O(1) views (Olteanu Thm 4.1). The
fallback is obtained the way a user would meet it: the same tables with nullable join columns,
which the view-tree rule refuses (a view tree would match NULL join values); the data has no NULLs.

The view tree is lowered to per-view keyed stages (``view_tree``); ``view_tree_single`` is the same
tree in the first version's one stage keyed by a constant (``lower_view_tree(single_stage=True)``),
measured right after it at each size, to state what the split into keyed stages costs per update
on the local runner.

    python examples/benchmarks/view_tree_scaling.py --sizes 300,3000,30000 --fallback-sizes 300,1000,3000

Not a test: prints one JSON line per (plan, size). Local runner; single-row batches after a load.
"""

from __future__ import annotations

import argparse
import functools
import gc
import json
import random
import statistics
import time
import tracemalloc
from decimal import Decimal

import operators.lowering.query as query_lowering
from catalog.ddl import catalog_from_ddl
from operators.runtime.stream import Update
from planner.compiler import CompiledQuery, compile_query
from planner.view import MaintainedView

DDL = """CREATE TABLE r (a INT {null}, b INT NOT NULL);
CREATE TABLE s (a INT {null}, c INT {null}, e INT NOT NULL);
CREATE TABLE t (a INT {null}, c INT {null}, d DECIMAL(9,2) NOT NULL);"""
SQL = ("SELECT r.a, SUM(s.e * t.d) AS x, COUNT(*) AS n FROM r, s, t "
       "WHERE r.a = s.a AND s.a = t.a AND s.c = t.c GROUP BY r.a")
JOIN_VALUES = 10


def _rows(g: random.Random, join_values: int = JOIN_VALUES):
    return {"r": lambda: (g.randrange(join_values), g.randrange(10)),
            "s": lambda: (g.randrange(join_values), g.randrange(5), g.randrange(10**6)),
            "t": lambda: (g.randrange(join_values), g.randrange(5), Decimal(g.randrange(10**6)) / 100)}


def _load(rows, size: int) -> list[Update]:
    return [Update(i + 1, table, 1, rows[table]()) for i, table in enumerate(t for t in rows for _ in range(size))]


def state_memory(plan: str, size: int, join_values: int) -> dict:
    """MiB that the load allocates and the view still holds afterwards (tracemalloc), the plan's imports
    and program already paid by a first view of the same plan."""
    catalog = catalog_from_ddl(DDL.format(null="NOT NULL"))
    with MaintainedView(_compiled(plan, catalog), catalog) as warm:
        warm.apply(_load(_rows(random.Random(2), join_values), 3))
    load = _load(_rows(random.Random(1), join_values), size)
    with MaintainedView(_compiled(plan, catalog), catalog) as view:
        gc.collect()
        tracemalloc.start()
        view.apply(load)
        gc.collect()
        held, _ = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return {"plan": plan, "rows_per_table": size, "join_values": join_values, "state_mib": round(held / 2**20, 1)}


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
    load = _load(rows, size)
    singles = [Update(len(load) + i + 1, table, 1, rows[table]()) for i, table in
               enumerate(g.choice(list(rows)) for _ in range(updates))]
    catalog = catalog_from_ddl(DDL.format(null="" if plan == "fallback" else "NOT NULL"))
    with MaintainedView(_compiled(plan, catalog), catalog) as view:
        operators = [node.stage.describe().operator for node in view.compiled.dataflow.stages]
        loaded, per_update = timed(view, load, singles)
    return {"plan": plan, "rows_per_table": size, "load_s": round(loaded, 3),
            "per_update_us": round(per_update * 1e6, 1), "stages": operators}


def _compiled(plan: str, catalog) -> CompiledQuery:
    if plan != "view_tree_single":
        return compile_query(SQL, catalog)
    per_view = query_lowering.lower_view_tree  # the query lowering's entry, swapped for this one compile
    query_lowering.lower_view_tree = functools.partial(per_view, single_stage=True)
    try:
        return compile_query(SQL, catalog)
    finally:
        query_lowering.lower_view_tree = per_view


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="300,3000,30000", help="rows per table for the view tree")
    parser.add_argument("--fallback-sizes", default="300,1000,3000", help="rows per table for the fallback")
    parser.add_argument("--updates", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each view-tree layout per size (medians)")
    parser.add_argument("--state-memory", default="", metavar="JOIN_VALUES,...",
                        help="instead: the state each view-tree layout holds after loading --sizes rows per table, "
                             "for these numbers of join values (10: 50 keys of V_s.c; 3000: ~15 000)")
    args = parser.parse_args()
    if args.state_memory:
        for join_values in map(int, args.state_memory.split(",")):
            for size in map(int, args.sizes.split(",")):
                for plan in ("view_tree", "view_tree_single"):
                    print(json.dumps(state_memory(plan, size, join_values)), flush=True)
        return
    measure("view_tree", 30, 10)  # warm-up: imports and the first program's compilation are not the plan's
    for size in map(int, args.sizes.split(",")):
        times: dict[str, list[float]] = {"view_tree": [], "view_tree_single": []}
        for _ in range(args.repeat):  # alternating, so load on the shared machine hits both alike
            for plan, measured in times.items():
                result = measure(plan, size, args.updates)
                measured.append(result["per_update_us"])
                print(json.dumps(result), flush=True)
        per_view, single = (statistics.median(times[p]) for p in ("view_tree", "view_tree_single"))
        print(json.dumps({"rows_per_table": size, "median_per_update_us": {"per_view_stages": per_view,
                          "single_stage": single}, "per_view / single": round(per_view / single, 2)}), flush=True)
    for size in map(int, args.fallback_sizes.split(",")):
        print(json.dumps(measure("fallback", size, args.updates)), flush=True)


if __name__ == "__main__":
    main()
