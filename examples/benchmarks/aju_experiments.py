"""Benchmarks of the foreign-key-join issue, after AJU §6 (Figures 12a, 13, 15).

- ``lambda``: Q5 and Q13 processing time on streams of one length with enclosureness λ = 1..32
  (AJU Figure 15: Q5's time should grow with λ, Q13's should not);
- ``trees``: Q5 with the live-tuple plan, AJU Theorem 11's change-propagation tree, and a bad join
  order on the same stream (Figure 12a);
- ``state``: serialized state of the live-tuple plan against the change-propagation fallback on Q5
  (Figure 13 reports 1-30% of a change-propagation engine's memory);
- ``scale``: per-update time of Q3, Q5, Q10 on window streams at several scale factors (should stay flat).

    python examples/benchmarks/aju_experiments.py lambda trees state scale --sf 0.01

Not a test: prints JSON lines for RESULTS.md. Local runner; each measurement in this process.
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from catalog.lambda_streams import make_lambda_stream  # noqa: E402
from catalog.tpch import tpch_catalog  # noqa: E402
from catalog.tpch_data import generate_tpch, load_tables  # noqa: E402
from catalog.tpch_streams import make_stream  # noqa: E402
from operators.enclosureness import stream_enclosureness  # noqa: E402
from operators.stream_format import batches  # noqa: E402
from planner.cli import default_window  # noqa: E402
from planner.view import MaintainedView  # noqa: E402

CATALOG = tpch_catalog()
QUERIES = ROOT / "examples" / "tpch"
BAD_Q5_ORDER = ("supplier", "customer", "nation", "region", "orders", "lineitem")  # supplier × customer on nationkey first


def sql(number: int) -> str:
    return (QUERIES / f"q{number:02d}.sql").read_text()


def tables(sf: float):
    return load_tables(generate_tpch(sf, ROOT / "data" / f"tpch-sf{sf}"), CATALOG)


def run(query: str, updates, batch: int = 10_000, **options) -> dict:
    view = MaintainedView(query, CATALOG, **options)
    started = time.perf_counter()
    for chunk in batches(updates, batch):
        view.apply(chunk, typed=True)
    seconds = time.perf_counter() - started
    states = view.runner.states
    state_bytes = sum(len(pickle.dumps(s)) for per_stage in states.values() for s in per_stage.values())
    return {"seconds": round(seconds, 2), "us_per_update": round(seconds / len(updates) * 1e6, 2),
            "state_mb": round(state_bytes / 2**20, 2), "result_rows": len(view.result())}


STATIC = ("nation", "region")  # never deleted, as dimension tables: otherwise Q5's result is mostly empty


def lambda_experiment(data, targets=(1, 2, 4, 8, 16, 32)):
    for target in targets:
        # each tuple is inserted once and deleted at most once, so dropping a delete keeps the stream valid
        updates = [u for u in make_lambda_stream(data, CATALOG, target, seed=0) if not (u.op < 0 and u.table in STATIC)]
        lam = stream_enclosureness(updates, CATALOG)
        for number in (5, 13):
            print(json.dumps({"experiment": "lambda", "query": f"Q{number}", "lambda": round(lam, 3),
                              "updates": len(updates), **run(sql(number), updates)}), flush=True)


def trees_experiment(data):
    updates = make_stream(data, CATALOG, "window", default_window(len(data["lineitem"])), seed=0)
    for label, options in (("live tuples", {}), ("theorem 11 tree", {"join_tree": "theorem11"}),
                           ("bad join order", {"join_tree": BAD_Q5_ORDER})):
        print(json.dumps({"experiment": "trees", "query": "Q5", "plan": label, "updates": len(updates),
                          **run(sql(5), updates, **options)}), flush=True)


def scale_experiment(sfs, prefix: int):
    for sf in sfs:
        data = tables(sf)
        updates = make_stream(data, CATALOG, "window", default_window(len(data["lineitem"])), seed=0)[:prefix]
        for number in (3, 5, 10):
            print(json.dumps({"experiment": "scale", "query": f"Q{number}", "sf": sf, "updates": len(updates),
                              **run(sql(number), updates)}), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("experiments", nargs="+", choices=("lambda", "trees", "state", "scale"))
    parser.add_argument("--sf", type=float, default=0.01)
    parser.add_argument("--scale-sfs", default="0.01,0.1")
    parser.add_argument("--prefix", type=int, default=150_000, help="updates per scale factor in 'scale'")
    args = parser.parse_args()
    data = tables(args.sf)
    if "lambda" in args.experiments:
        lambda_experiment(data)
    if "trees" in args.experiments or "state" in args.experiments:
        trees_experiment(data)  # reports time and state for the live-tuple plan and both trees
    if "scale" in args.experiments:
        scale_experiment([float(s) for s in args.scale_sfs.split(",")], args.prefix)


if __name__ == "__main__":
    main()
