"""Benchmarks of the foreign-key-join issue, after AJU §6 (Figures 12a, 13, 15).

- ``lambda``: Q5 and Q13 processing time on streams of one length with enclosureness λ = 1..32
  (AJU Figure 15: Q5's time should grow with λ, Q13's should not). Streams of
  ``planner/workloads/lambda_streams.py`` over Q5's six tables: dimensions live, facts in a FIFO window,
  λ raised by re-inserting the orders Q5 keeps under their live lineitems; a control family
  re-inserts orders of 1995 instead (same λ and mix, dropped by Q5's date selection). Batches of
  100 updates, the re-insert gap, so no batch nets a delete with its re-insert;
- ``trees``: Q5 with the live-tuple plan, AJU Theorem 11's change-propagation tree, and a bad join
  order on the same stream (Figure 12a);
- ``state``: serialized state of the live-tuple plan against the change-propagation fallback on Q5
  (Figure 13 reports 1-30% of a change-propagation engine's memory);
- ``scale``: per-update time and peak memory of Q3, Q5, Q10 on window streams at several scale
  factors (should stay flat); the whole stream unless ``--prefix``.

    python examples/benchmarks/aju_experiments.py lambda trees state scale --sf 0.01
    python examples/benchmarks/aju_experiments.py scale --scale-sfs 1   # one scale factor per process

Not a test: prints JSON lines for RESULTS.md. Local runner; each measurement in this process.
"""

from __future__ import annotations

import argparse
import datetime
import json
import pickle
import resource
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from catalog.tpch import tpch_catalog  # noqa: E402
from operators.runtime.stream import batches  # noqa: E402
from planner.view import MaintainedView  # noqa: E402
from planner.workloads.enclosureness import stream_enclosureness  # noqa: E402
from planner.workloads.lambda_streams import DEFAULT_GAP, make_lambda_stream  # noqa: E402
from planner.workloads.tpch_data import generate_tpch, load_tables  # noqa: E402
from planner.workloads.tpch_streams import default_window, make_stream  # noqa: E402

CATALOG = tpch_catalog()
QUERIES = ROOT / "examples" / "tpch"
BAD_Q5_ORDER = ("supplier", "customer", "nation", "region", "orders", "lineitem")  # supplier × customer on nationkey first


def sql(number: int) -> str:
    return (QUERIES / f"q{number:02d}.sql").read_text()


def tables(sf: float):
    return load_tables(generate_tpch(sf, ROOT / "data" / f"tpch-sf{sf}"), CATALOG)


def run(query: str, updates, batch: int = 10_000, measure_state: bool = True, **options) -> dict:
    """Time one view over ``updates``; also the share of batches after which the result is non-empty."""
    view = MaintainedView(query, CATALOG, **options)
    non_empty = chunks = 0
    started = time.perf_counter()
    for chunk in batches(updates, batch):
        view.apply(chunk)
        non_empty += bool(view.current)
        chunks += 1
    seconds = time.perf_counter() - started
    measured = {"seconds": round(seconds, 2), "us_per_update": round(seconds / len(updates) * 1e6, 2),
                "result_rows": len(view.result()), "non_empty_batches": round(non_empty / max(chunks, 1), 3)}
    if measure_state:  # pickling every key's state takes minutes at SF 1, so the scale experiment skips it
        states = view.runner.states
        state_bytes = sum(len(pickle.dumps(s)) for per_stage in states.values() for s in per_stage.values())
        measured["state_mb"] = round(state_bytes / 2**20, 2)
    return measured


def peak_rss_mb() -> int:
    """Peak resident memory of this process so far (Linux reports ru_maxrss in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024


LAMBDA_TABLES = ("region", "nation", "supplier", "customer", "orders", "lineitem")  # what Q3, Q5, Q10, Q13 read
LAMBDA_BATCH = DEFAULT_GAP  # a re-insert comes at least one batch after its delete, so batches do not net it out


def column(table: str, name: str) -> int:
    return CATALOG.table(table).column_names.index(name)


def asia_orders_of_year(data, year: int) -> Callable[[tuple], bool]:
    """Orders of ``year`` whose customer is in ASIA. Q5 keeps those of 1994 (its selections); those of
    1995 are a control of about the same size that Q5 drops at its source in O(1)."""
    asia = {r[column("region", "r_regionkey")] for r in data["region"] if r[column("region", "r_name")] == "ASIA"}
    nations = {n[column("nation", "n_nationkey")] for n in data["nation"] if n[column("nation", "n_regionkey")] in asia}
    customers = {c[column("customer", "c_custkey")] for c in data["customer"] if c[column("customer", "c_nationkey")] in nations}
    date, customer = column("orders", "o_orderdate"), column("orders", "o_custkey")
    low, high = datetime.date(year, 1, 1), datetime.date(year + 1, 1, 1)
    return lambda row: low <= row[date] < high and row[customer] in customers


def lineitem_flips(updates, kept: Callable[[tuple], bool]) -> int:
    """AJU's s(t) changes on Q5's lineitem→orders edge: for each update of a kept order, its present lineitems."""
    present: Counter = Counter()
    flips = 0
    for update in updates:
        if update.table == "lineitem":
            present[update.row[0]] += update.op
        elif update.table == "orders" and kept(update.row):
            flips += present[update.row[0]]
    return flips


def lambda_streams(data, targets):
    """Per target, a stream whose flickering orders Q5 keeps and a control whose flickering orders Q5 drops.

    Both have about the same λ and mix of tables, so Q5's difference between them is the work of the
    lineitems flipped under re-inserted orders, and the control's own growth is that of the mix.
    """
    data = {name: data[name] for name in LAMBDA_TABLES}
    kept = asia_orders_of_year(data, 1994)
    streams = []
    for target in targets:
        for family, flickering in (("Q5 orders flicker", kept), ("control: 1995 orders flicker", asia_orders_of_year(data, 1995))):
            updates = make_lambda_stream(data, CATALOG, target, seed=0, flickering=flickering)
            stats = {"family": family, "target": target, "lambda": round(stream_enclosureness(updates, CATALOG), 3),
                     "updates": len(updates), "orders_updates": sum(u.table == "orders" for u in updates),
                     "lineitem_updates": sum(u.table == "lineitem" for u in updates),
                     "q5_lineitem_flips_per_update": round(lineitem_flips(updates, kept) / len(updates), 4)}
            print(json.dumps({"experiment": "lambda-stream", **stats}), flush=True)
            streams.append((stats, updates))
    return streams


def lambda_experiment(data, targets=(1, 2, 4, 8, 16, 32), repeats: int = 5):
    """Q5 and Q13 interleaved (both on one stream, then the next), the sweep repeated: noise hits all alike."""
    streams = lambda_streams(data, targets)
    for repeat in range(repeats):
        for stats, updates in streams:
            for number in (5, 13):
                print(json.dumps({"experiment": "lambda", "repeat": repeat, "family": stats["family"], "query": f"Q{number}",
                                  "lambda": stats["lambda"], "batch": LAMBDA_BATCH,
                                  **run(sql(number), updates, batch=LAMBDA_BATCH)}), flush=True)


def trees_experiment(data, stream: str):
    """Figure 12a / 13 on one stream for all three plans (``live`` by default: on the window stream
    nation and region leave too and Q5's result is empty almost throughout)."""
    updates = scale_stream(data, stream)
    for label, options in (("live tuples", {}), ("theorem 11 tree", {"join_tree": "theorem11"}),
                           ("bad join order", {"join_tree": BAD_Q5_ORDER})):
        print(json.dumps({"experiment": "trees", "query": "Q5", "plan": label, "updates": len(updates),
                          **run(sql(5), updates, **options)}), flush=True)


def scale_stream(data, kind: str):
    """``window``: every table in the FIFO window of the README (nation and region leave it too, so
    Q5's result is empty almost throughout); ``live``: the λ-stream at λ = 1, the tables Q3, Q5 and
    Q10 read, dimensions live and orders and lineitem in a FIFO window of a fifth of them."""
    if kind == "window":
        return make_stream(data, CATALOG, "window", default_window(len(data["lineitem"])), seed=0)
    return make_lambda_stream({name: data[name] for name in LAMBDA_TABLES}, CATALOG, 1, seed=0)


def scale_experiment(sfs, prefix: int | None, kind: str = "window"):
    """Q3, Q5, Q10 on the ``kind`` stream of each scale factor (all of it unless ``prefix``), with peak memory."""
    for sf in sfs:
        started = time.perf_counter()
        data = tables(sf)
        updates = scale_stream(data, kind)
        total = len(updates)
        del data  # the updates hold the rows; the table lists themselves can go
        if prefix:
            updates = updates[:prefix]
        print(json.dumps({"experiment": "scale-stream", "kind": kind, "sf": sf, "stream_updates": total, "updates": len(updates),
                          "prepare_seconds": round(time.perf_counter() - started, 1), "peak_rss_mb": peak_rss_mb()}), flush=True)
        for number in (3, 5, 10):
            print(json.dumps({"experiment": "scale", "kind": kind, "query": f"Q{number}", "sf": sf, "updates": len(updates),
                              **run(sql(number), updates, measure_state=False), "peak_rss_mb": peak_rss_mb()}), flush=True)
        del updates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("experiments", nargs="+", choices=("lambda", "trees", "state", "scale"))
    parser.add_argument("--sf", type=float, default=0.01)
    parser.add_argument("--scale-sfs", default="0.01,0.1")
    parser.add_argument("--prefix", type=int, default=0, help="updates per scale factor in 'scale' (0: the whole stream)")
    parser.add_argument("--scale-stream", choices=("window", "live"), default="window", help="stream of 'scale'")
    parser.add_argument("--trees-stream", choices=("window", "live"), default="live", help="stream of 'trees'/'state'")
    parser.add_argument("--repeats", type=int, default=5, help="sweeps of 'lambda' (Q5 and Q13 interleaved)")
    args = parser.parse_args()
    data = tables(args.sf) if {"lambda", "trees", "state"} & set(args.experiments) else None
    if "lambda" in args.experiments:
        lambda_experiment(data, repeats=args.repeats)
    if "trees" in args.experiments or "state" in args.experiments:
        trees_experiment(data, args.trees_stream)  # reports time and state for the live-tuple plan and both trees
    if "scale" in args.experiments:
        scale_experiment([float(s) for s in args.scale_sfs.split(",")], args.prefix, args.scale_stream)


if __name__ == "__main__":
    main()
