"""Benchmark: F-IVM view trees, rings and heavy/light partitioning at operator level (issue 12).

Each configuration runs in its own subprocess (a fresh interpreter: no warm caches or leftover
state from another configuration), with the cyclic garbage collector off (the states hold no
cycles; its pauses would land on random updates); the parent prints one table per part, and
checks that the strategies of (a), (c) and (d) agree on their results.

(a) ``update``: per-update time of COUNT over Inventory ⋈ Location ⋈ Census ⋈ Weather (Retailer-
    like, q-hierarchical after the FD locn → zip) as the data grows, zips fixed so stores per zip
    grow with the scale. Strategies: ``reduct`` (view tree over the reduct's order zip → locn → …,
    O(1) per update under the FD), ``no-fd`` (view tree over locn → {zip, …}, valid without the
    FD: a Census delta enumerates the stores of its zip), ``binary`` (BinaryJoinStage chain
    ((Inventory ⋈ Weather) ⋈ Location) ⋈ Census: a Census delta joins every stocked row of its zip).
    The stream deletes and re-inserts random rows of the four tables (sizes stay put), one at a time.
(b) ``delay``: enumeration delay of Q(zip, locn, dateid, SUM(units)) from the reduct's view tree
    (free variables on top): mean and max time between consecutive tuples as the data grows.
(c) ``cofactor``: the 66 aggregates of a 10-feature regression over the Housing-like star (COUNT,
    10 SUM(x), 55 SUM(x·y)) as one CofactorRing(10) view tree against 66 view trees of one number
    each: load time, per-update time and traced memory of the states.
(d) ``triangle``: IVM^ε (ε = ½) against plain delta queries (the same stage at ε = 1, every key light)
    on a skewed graph of N tuples: per-update time as N grows. ``--triangle-sql`` adds the same
    comparison through SQL: examples/fivm/triangle.sql planned by rules/heavy_light.py on the local
    runner (validation, compiled runner and one batch per update included).

    PYTHONPATH=. python examples/benchmarks/fivm.py                    # all parts, default sizes
    PYTHONPATH=. python examples/benchmarks/fivm.py --parts d --triangle-sizes 3000,30000
    PYTHONPATH=. python examples/benchmarks/fivm.py --parts d --triangle-sql --smoke
    PYTHONPATH=. python examples/benchmarks/fivm.py --smoke            # tiny sizes, to check it runs

Variable orders are built by hand (planner.workloads.retailer/housing): the planner's automatic
choice is not wired in here.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import subprocess
import sys
import time
import tracemalloc
from itertools import combinations_with_replacement
from pathlib import Path

from tabulate import tabulate

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from catalog.ddl import catalog_from_ddl  # noqa: E402
from operators.runtime.stream import Update  # noqa: E402
from operators.stages.base import Change, StageDescription, run_keyed  # noqa: E402
from operators.stages.binary_join import BinaryJoinStage  # noqa: E402
from operators.stages.triangle_count import TriangleCountStage, TriangleState  # noqa: E402
from operators.stages.view_tree import ViewTreeStage  # noqa: E402
from operators.structures.rings import CofactorRing, CountRing, SumRing  # noqa: E402
from planner.view import MaintainedView  # noqa: E402
from planner.workloads.housing import feature_variables, housing_catalog, housing_order, housing_tables  # noqa: E402
from planner.workloads.retailer import retailer_catalog, retailer_order, retailer_tables  # noqa: E402
from planner.workloads.view_tree_input import atom_routes, churn_stream, initial_rows, stage_changes  # noqa: E402

RETAILER_TABLES = ("inventory", "location", "census", "weather")
ZIPS = 3


# --- (a) per-update time ----------------------------------------------------------------------

def view_tree_updates(scale: int, updates: int, reduct: bool) -> dict:
    catalog, tables = retailer_catalog(), retailer_tables(scale, seed=1, zips=ZIPS)
    order = retailer_order(with_item=False, reduct=reduct)
    routes = atom_routes(order, catalog)
    stage = ViewTreeStage("count", order, CountRing(), initial_rows(routes, tables))
    started = time.perf_counter()
    states = {(): stage.process((), None, [])[0]}
    load = time.perf_counter() - started
    stream = stage_changes(routes, churn_stream(tables, catalog, updates, seed=2, only=RETAILER_TABLES))
    started = time.perf_counter()
    for change in stream:
        run_keyed(stage, states, [change])
    return {"load_s": load, "per_update_us": (time.perf_counter() - started) / len(stream) * 1e6,
            "count": stage.total(states[()]), "bounds": "; ".join(f"{k}: {v}" for k, v in stage.update_bounds().items())}


def binary_updates(scale: int, updates: int) -> dict:
    """((Inventory ⋈ Weather on locn, dateid) ⋈ Location on locn) ⋈ Census on zip, then Σ weights."""
    catalog, tables = retailer_catalog(), retailer_tables(scale, seed=1, zips=ZIPS)
    plain = StageDescription("binary join")
    stages = [BinaryJoinStage("inventory ⋈ weather", (0, 1), (0, 1), (), plain),
              BinaryJoinStage("… ⋈ location", (0,), (0,), (), plain),
              BinaryJoinStage("… ⋈ census", (9,), (0,), (), plain)]
    # (stage, port) each table feeds; rows are the tables' full rows
    entry = {"inventory": (0, 0), "weather": (0, 1), "location": (1, 1), "census": (2, 1)}
    states: list[dict] = [{}, {}, {}]
    count = 0

    def push(changes: list[Change], first: int) -> int:
        for level in range(first, len(stages)):
            out = run_keyed(stages[level], states[level], changes)
            changes = [Change(0, row, weight) for row, weight in out]
        return sum(change.weight for change in changes)

    started = time.perf_counter()
    for name in ("census", "location", "weather", "inventory"):
        level, port = entry[name]
        count += push([Change(port, row, 1) for row in tables[name]], level)
    load = time.perf_counter() - started
    stream = churn_stream(tables, catalog, updates, seed=2, only=RETAILER_TABLES)
    started = time.perf_counter()
    for update in stream:
        level, port = entry[update.table]
        count += push([Change(port, update.row, update.op)], level)
    return {"load_s": load, "per_update_us": (time.perf_counter() - started) / len(stream) * 1e6,
            "count": count, "bounds": "Census: O(stocked rows of the zip)"}


# --- (b) enumeration delay --------------------------------------------------------------------

def enumeration_delay(scale: int) -> dict:
    catalog, tables = retailer_catalog(), retailer_tables(scale, seed=1, zips=ZIPS)
    order = retailer_order((("inventoryunits", 0),), ("zip", "locn", "dateid"), with_item=False)
    stage = ViewTreeStage("by zip, locn, dateid", order, SumRing(1), initial_rows(atom_routes(order, catalog), tables))
    state = stage.process((), None, [])[0]
    gaps = []
    previous = time.perf_counter()
    for _ in stage.enumerate(state):
        now = time.perf_counter()
        gaps.append(now - previous)
        previous = now
    gaps.sort()
    return {"tuples": len(gaps), "mean_delay_us": sum(gaps) / len(gaps) * 1e6,
            "median_delay_us": gaps[len(gaps) // 2] * 1e6, "p99_delay_us": gaps[len(gaps) * 99 // 100] * 1e6,
            "max_delay_us": gaps[-1] * 1e6}


# --- (c) one cofactor payload against one view per aggregate ------------------------------------

class MonomialRing:
    """ℤ with ``lift(slot, v) = v ** powers[slot]``: one SUM(Π x) per view tree (F-IVM's numeric ring)."""

    zero, one = 0, 1

    def __init__(self, powers: tuple[int, ...]):
        self.powers = powers

    def add(self, a, b):
        return a + b

    def mul(self, a, b):
        return a * b

    def neg(self, a):
        return -a

    def is_zero(self, a) -> bool:
        return a == 0

    def lift(self, slot: int, value):
        return value ** self.powers[slot]

    def mul_lift(self, a, slot: int, value):
        return a * value ** self.powers[slot]

    def from_int(self, n: int):
        return n


def aggregate_views() -> list[tuple[str, object, tuple]]:
    """(name, ring, lifts) for COUNT, every SUM(x_i) and every SUM(x_i·x_j), i ≤ j."""
    features = feature_variables()
    views = [("count", CountRing(), ())]
    views += [(f"sum {x}", MonomialRing((1,)), ((x, 0),)) for x in features]
    for x, y in combinations_with_replacement(features, 2):
        views.append((f"sum {x}*{y}", MonomialRing((2,)), ((x, 0),)) if x == y
                     else (f"sum {x}*{y}", MonomialRing((1, 1)), ((x, 0), (y, 1))))
    return views


def cofactor_vs_views(scale: int, updates: int, strategy: str) -> dict:
    catalog, tables = housing_catalog(), housing_tables(scale, seed=1)
    features = feature_variables()
    if strategy == "cofactor":
        specs = [("cofactor", CofactorRing(len(features)), tuple((x, i) for i, x in enumerate(features)))]
    else:
        specs = aggregate_views()
    routes = atom_routes(housing_order(), catalog)  # every order below has the same atoms
    initial = initial_rows(routes, tables)
    stages = [ViewTreeStage(name, housing_order(lifts), ring, initial) for name, ring, lifts in specs]
    started = time.perf_counter()
    states = [{(): stage.process((), None, [])[0]} for stage in stages]
    load = time.perf_counter() - started
    stream = stage_changes(routes, churn_stream(tables, catalog, updates, seed=2))
    started = time.perf_counter()
    for change in stream:
        for stage, state in zip(stages, states, strict=True):
            run_keyed(stage, state, [change])
    per_update = (time.perf_counter() - started) / len(stream)
    totals = [stage.total(state[()]) for stage, state in zip(stages, states, strict=True)]
    tracemalloc.start()
    again = [stage.process((), None, [])[0] for stage in stages]
    memory, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del again
    count = totals[0] if strategy != "cofactor" else totals[0][0]
    xy = totals[1 + len(features) + 1] if strategy != "cofactor" else totals[0][2][1]  # SUM(x0·x1)
    return {"load_s": load, "per_update_us": per_update * 1e6, "state_mb": memory / 2**20,
            "views": len(stages), "count": count, "sum_x0_x1": xy}


# --- (d) triangle count -----------------------------------------------------------------------

def skewed_graph(size: int, seed: int) -> list[tuple[int, tuple]]:
    """``size`` distinct tuples over R, S, T; a third of each column's values come from 4 hub
    values, the rest uniform over size/3 values: hubs of degree ~size/36 in every relation."""
    rng = random.Random(seed)
    domain = max(8, size // 3)

    def value() -> int:
        return rng.randrange(4) if rng.random() < 1 / 3 else rng.randrange(domain)

    tuples: set = set()
    while len(tuples) < size:
        tuples.add((rng.randrange(3), (value(), value())))
    return sorted(tuples)


def churn(items: list, updates: int) -> list[tuple[object, int]]:
    """``updates`` single changes: delete a random present item or put a deleted one back, half and half."""
    rng = random.Random(2)
    present, gone = list(items), []
    stream = []
    for _ in range(updates):
        insert = bool(gone) and rng.random() < 0.5
        pool, other = (gone, present) if insert else (present, gone)
        index = rng.randrange(len(pool))
        pool[index], pool[-1] = pool[-1], pool[index]
        item = pool.pop()
        other.append(item)
        stream.append((item, 1 if insert else -1))
    return stream


def triangle_updates(size: int, updates: int, epsilon: float) -> dict:
    stage = TriangleCountStage("triangles", epsilon)
    graph = skewed_graph(size, seed=1)
    states: dict = {}
    started = time.perf_counter()
    run_keyed(stage, states, [Change(port, row, 1) for port, row in graph])
    load = time.perf_counter() - started
    stream = [Change(port, row, weight) for (port, row), weight in churn(graph, updates)]
    started = time.perf_counter()
    for change in stream:
        run_keyed(stage, states, [change])
    state = states[()]
    return {"load_s": load, "per_update_us": (time.perf_counter() - started) / len(stream) * 1e6,
            "count": state.count, "heavy_keys": sum(len(r.heavy) for r in state.relations),
            "view_entries": sum(len(v) for v in state.views)}


def triangle_sql_updates(size: int, updates: int, epsilon: float) -> dict:
    """examples/fivm/triangle.sql planned from SQL (rules/heavy_light.py) on the local runner: the
    skewed graph's distinct rows as one edge table, then single-edge updates, each its own batch
    (validation and the compiled runner included)."""
    folder = ROOT / "examples" / "fivm"
    catalog = catalog_from_ddl((folder / "graph.sql").read_text())
    view = MaintainedView((folder / "triangle.sql").read_text(), catalog, heavy_light_epsilon=epsilon)
    edges = sorted({row for _, row in skewed_graph(size, seed=1)})
    started = time.perf_counter()
    view.apply([Update(seq, "edges", 1, row) for seq, row in enumerate(edges, 1)])
    load = time.perf_counter() - started
    stream = [Update(seq, "edges", weight, row) for seq, (row, weight) in enumerate(churn(edges, updates), len(edges) + 1)]
    started = time.perf_counter()
    for update in stream:
        view.apply([update])
    per_update = (time.perf_counter() - started) / len(stream)
    state = next(s[()] for s in view.runner.states.values() if isinstance(s.get(()), TriangleState))
    return {"load_s": load, "per_update_us": per_update * 1e6, "edges": len(edges), "count": view.result()[0][0],
            "heavy_keys": sum(len(r.heavy) for r in state.relations)}


# --- driver -------------------------------------------------------------------------------------

def run_one(config: dict) -> dict:
    part = config["part"]
    if part == "update":
        if config["strategy"] == "binary":
            return binary_updates(config["scale"], config["updates"])
        return view_tree_updates(config["scale"], config["updates"], reduct=config["strategy"] == "reduct")
    if part == "delay":
        return enumeration_delay(config["scale"])
    if part == "cofactor":
        return cofactor_vs_views(config["scale"], config["updates"], config["strategy"])
    if config.get("through") == "sql":
        return triangle_sql_updates(config["size"], config["updates"], config["epsilon"])
    return triangle_updates(config["size"], config["updates"], config["epsilon"])


def in_subprocess(config: dict) -> dict:
    done = subprocess.run([sys.executable, __file__, "--child", json.dumps(config)], capture_output=True,
                          text=True, check=False, cwd=ROOT)
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit {done.returncode}"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def table(configs: list[dict], columns: list[str], same: str | None = None) -> str:
    """Run each configuration; ``same`` names the size field under which every strategy must
    report the same ``count`` (and ``sum_x0_x1``; a disagreement is printed under the table)."""
    rows, counts = [], {}
    for config in configs:
        shown = {**config, **in_subprocess(config)}
        rows.append([_fmt(shown.get(column, "")) for column in [*columns, "error"]])
        if same and "count" in shown:
            counts.setdefault(shown[same], set()).add(json.dumps([shown["count"], shown.get("sum_x0_x1")]))
        print(".", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    disagree = {size: found for size, found in counts.items() if len(found) > 1}
    return tabulate(rows, headers=[*columns, "error"]) + (f"\nRESULTS DISAGREE: {disagree}" if disagree else "")


def _fmt(value) -> str:
    return f"{value:.3g}" if isinstance(value, float) else str(value)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--parts", default="a,b,c,d")
    parser.add_argument("--scales", default="1,10,100", help="(a), (b): Retailer-like scale factors")
    parser.add_argument("--updates", type=int, default=2000, help="timed single-tuple updates per configuration")
    parser.add_argument("--cofactor-scale", type=int, default=20, help="(c): Housing-like scale")
    parser.add_argument("--triangle-sizes", default="3000,10000,30000,100000", help="(d): tuples in R, S and T")
    parser.add_argument("--triangle-sql", action="store_true",
                        help="(d): also examples/fivm/triangle.sql planned from SQL on the local runner")
    parser.add_argument("--binary-max", type=int, default=100, help="(a): largest scale for the binary chain")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script runs, measures nothing")
    args = parser.parse_args()
    if args.child:
        gc.disable()
        print(json.dumps(run_one(json.loads(args.child))))
        return
    if args.smoke:
        args.scales, args.updates, args.cofactor_scale, args.triangle_sizes = "1,10", 200, 2, "300,3000"
    scales = [int(s) for s in args.scales.split(",")]
    parts = args.parts.split(",")
    if "a" in parts:
        configs = [{"part": "update", "strategy": strategy, "scale": scale, "updates": args.updates}
                   for strategy in ("reduct", "no-fd", "binary") for scale in scales
                   if strategy != "binary" or scale <= args.binary_max]
        print("(a) per-update time, COUNT over Inventory ⋈ Location ⋈ Census ⋈ Weather, "
              f"{ZIPS} zips, single-tuple updates")
        print(table(configs, ["strategy", "scale", "load_s", "per_update_us", "count", "bounds"], "scale"), "\n")
    if "b" in parts:
        print("(b) enumeration delay, Q(zip, locn, dateid, SUM(units)) from the reduct's view tree")
        print(table([{"part": "delay", "scale": scale} for scale in scales],
                    ["scale", "tuples", "mean_delay_us", "median_delay_us", "p99_delay_us", "max_delay_us"]), "\n")
    if "c" in parts:
        configs = [{"part": "cofactor", "strategy": strategy, "scale": args.cofactor_scale, "updates": args.updates}
                   for strategy in ("cofactor", "one view per aggregate")]
        print("(c) 10 features over the Housing-like star: COUNT + 10 SUM(x) + 55 SUM(x·y)")
        print(table(configs, ["strategy", "views", "load_s", "per_update_us", "state_mb", "count", "sum_x0_x1"],
                    "scale"), "\n")
    if "d" in parts:
        configs = [{"part": "triangle", "epsilon": epsilon, "size": int(size), "updates": args.updates}
                   for epsilon in (0.5, 1.0) for size in args.triangle_sizes.split(",")]
        print("(d) triangle count: IVM^ε at ε = 0.5 against delta queries (ε = 1: every key light)")
        print(table(configs, ["epsilon", "size", "load_s", "per_update_us", "count", "heavy_keys", "view_entries"],
                    "size"))
    if "d" in parts and args.triangle_sql:
        configs = [{**config, "through": "sql"} for config in configs]
        print("\n(d) the same through SQL: examples/fivm/triangle.sql (one edge table read three times), "
              "local runner, one batch per update")
        print(table(configs, ["epsilon", "size", "edges", "load_s", "per_update_us", "count", "heavy_keys"], "size"))


if __name__ == "__main__":
    main()
