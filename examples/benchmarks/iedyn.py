"""Benchmark: IEDyn's T-representation against the forced materializing fallback (issue 11).

Two measurements, every run in its own subprocess so that one run's memory cannot count in another's:

- ``maintain`` (default): for each query (Q3–Q6, the full joins; Q7–Q9, the free-connex
  projections) and each of three stream sizes, the query is maintained twice over the same
  insert-only IEDyn stream (``make_iedyn_stream``, random order, IEDyn §6's settings: N/3 inserts
  per relation, k uniform in 1..200, other values in 1..1,000,000): with the planner's default (a
  generalized join tree where one exists: ``gjt``) and with ``join_strategy="binary"`` (the
  materializing fallback). ``--mode pull`` (default) is IEDyn's pull-based comparison: under
  ``gjt`` the view runs with ``push=False``, so a batch updates the T-representation and nothing
  else (the result is enumerated from it on request), under ``binary`` the view keeps the result
  from its changes, as DBToaster does. ``--mode
  push`` drives the view's validator and runner directly: each batch's result changes are produced
  and dropped, for both strategies, as IEDyn's push-based runs. Memory includes the validator's
  copy of the base tables (the same for both strategies). Reported: maintenance wall time
  (``time.perf_counter`` around the batches), the child's peak RSS (``ru_maxrss``, MiB: the whole
  process, interpreter and imports included), ``rss_growth_mb`` (peak RSS minus the RSS just before
  the first batch: what maintenance added, transient lists of one batch's result changes included),
  ``rss_end_growth_mb`` (the RSS after the last batch minus the same: closer to what is kept, though
  CPython does not always hand freed memory back), and the number of result changes.
- ``--enumeration``: enumeration delay. One query (``--enum-query``, default Q4) at three stream
  sizes whose output grows 10× per step (100× in all); after maintaining it, the whole result is
  read with ``MaintainedView.rows`` and timed: under ``gjt`` that enumerates the T-representation
  (Algorithm 1), under ``binary`` it reads the kept result. Constant delay means the time per
  output row stays flat as the output grows.

Nothing here is asserted; it prints a table (tabulate) and, with ``--json``, writes the rows.

    PYTHONPATH=. python examples/benchmarks/iedyn.py                      # Q3–Q9, three sizes
    PYTHONPATH=. python examples/benchmarks/iedyn.py --queries q04 --scale 0.5 --json out.json
    PYTHONPATH=. python examples/benchmarks/iedyn.py --enumeration
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tabulate import tabulate  # noqa: E402

from catalog.iedyn import iedyn_catalog  # noqa: E402
from operators.runtime.stream import batches  # noqa: E402
from planner.view import MaintainedView  # noqa: E402
from planner.workloads.iedyn_streams import make_iedyn_stream  # noqa: E402

QUERY_DIR = ROOT / "examples" / "iedyn"
QUERIES = ("q03", "q04", "q05", "q06", "q07", "q08", "q09")
#: stream sizes (inserts, N/3 per relation): outputs grow 8× per step (n³); with an equality
#: (Q5, Q6, Q8, Q9: keys in 1..200) the same outputs need larger streams
SIZES = {"plain": (180, 360, 720), "equality": (900, 1_800, 3_600)}
WITH_EQUALITY = {"q05", "q06", "q08", "q09"}
#: Q4: 30, 65 and 155 rows per relation give about 6k, 43k and 640k output rows (over 100× in all)
ENUMERATION_SIZES = (90, 195, 465)
STRATEGIES = ("gjt", "binary")


def rss_mb() -> float:
    """The current resident set size of this process in MiB (Linux /proc)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def view_for(query: str, strategy: str, compiled: bool = True, push: bool = True) -> MaintainedView:
    return MaintainedView((QUERY_DIR / f"{query}.sql").read_text(), iedyn_catalog(), strict=True, compiled=compiled,
                          join_strategy=None if strategy == "gjt" else strategy, push=push)


def warm_up(query: str, strategy: str, generic: bool) -> None:
    """Apply a few rows to a throwaway view, so the ~40 MiB of modules the first batch loads
    lazily are in memory before ``rss_growth_mb`` starts counting."""
    with view_for(query, strategy, compiled=not generic) as view:
        view.apply(make_iedyn_stream(6, seed=1))


def maintain(query: str, size: int, strategy: str, seed: int, generic: bool, mode: str, batch_size: int) -> dict:
    updates = make_iedyn_stream(size, seed=seed)
    warm_up(query, strategy, generic)
    view = view_for(query, strategy, compiled=not generic, push=not (mode == "pull" and strategy == "gjt"))
    before = rss_mb()
    changes = 0
    started = time.perf_counter()
    for batch in batches(updates, batch_size):
        if mode == "pull":
            changes += len(view.apply(batch))
            continue
        validated = view.validator.validate(batch)
        changes += len(view.runner.apply(validated.accepted))
        view.validator.commit(validated)
    seconds = time.perf_counter() - started
    peak, end = peak_rss_mb(), rss_mb()
    # counted after the memory readings (enumerating the result allocates): both strategies must agree
    rows = sum(view.current.values()) if mode == "pull" else None
    return {"query": query, "strategy": strategy, "mode": mode, "stream": size, "seconds": round(seconds, 3),
            "peak_rss_mb": round(peak, 1), "rss_growth_mb": round(peak - before, 1),
            "rss_end_growth_mb": round(end - before, 1), "result_changes": changes, "result_rows": rows}


def enumerate_result(query: str, size: int, strategy: str, seed: int, generic: bool, batch_size: int) -> dict:
    """Maintain the view, then time one full read of its result."""
    updates = make_iedyn_stream(size, seed=seed)
    view = view_for(query, strategy, compiled=not generic)
    for batch in batches(updates, batch_size):
        view.apply(batch)
    started = time.perf_counter()
    rows = sum(1 for _ in view.rows())
    seconds = time.perf_counter() - started
    source = "materialized result" if view.ordered is not None else "T-representation"
    return {"query": query, "strategy": strategy, "stream": size, "output_rows": rows, "read_from": source,
            "seconds": round(seconds, 3), "us_per_row": round(seconds / max(rows, 1) * 1e6, 3)}


def child(task: dict) -> dict:
    if task["kind"] == "enumerate":
        return enumerate_result(task["query"], task["stream"], task["strategy"], task["seed"], task["generic"],
                                task["batch"])
    return maintain(task["query"], task["stream"], task["strategy"], task["seed"], task["generic"], task["mode"],
                    task["batch"])


def run_in_subprocess(task: dict, timeout: float) -> dict:
    """One measurement in a fresh interpreter; a failure or timeout is a row that says so."""
    try:
        done = subprocess.run([sys.executable, __file__, "--child", json.dumps(task)], capture_output=True,
                              text=True, timeout=timeout, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return {**task, "error": f"timed out after {timeout:.0f} s"}
    if done.returncode:
        last = (done.stderr.strip().splitlines() or ["?"])[-1]
        return {**task, "error": last[:160]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def tasks(args) -> list[dict]:
    common = {"seed": args.seed, "generic": args.generic, "mode": args.mode, "batch": args.batch}
    if args.enumeration:
        return [{"kind": "enumerate", "query": args.enum_query, "stream": round(size * args.scale), "strategy": strategy,
                 **common} for size in ENUMERATION_SIZES for strategy in STRATEGIES]
    return [{"kind": "maintain", "query": query, "stream": round(size * args.scale), "strategy": strategy, **common}
            for query in args.queries.split(",")
            for size in SIZES["equality" if query in WITH_EQUALITY else "plain"]
            for strategy in STRATEGIES]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", default=",".join(QUERIES), help="comma-separated, e.g. q03,q07")
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every stream size")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--batch", type=int, default=100, help="updates per batch (peak memory holds one "
                        "batch's result changes: smaller batches, smaller peaks)")
    parser.add_argument("--mode", choices=("pull", "push"), default="pull", help="keep the result or drop the changes")
    parser.add_argument("--enumeration", action="store_true", help="measure enumeration delay instead")
    parser.add_argument("--enum-query", default="q04")
    parser.add_argument("--generic", action="store_true", help="run the generic stages, not the generated program")
    parser.add_argument("--timeout", type=float, default=900, help="seconds per run")
    parser.add_argument("--json", help="also write the rows to this file")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(json.loads(args.child))))
        return
    rows = []
    for task in tasks(args):
        rows.append(run_in_subprocess(task, args.timeout))
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    columns = list(dict.fromkeys(c for row in rows for c in row if c not in ("kind", "seed", "generic")))
    print(tabulate([[row.get(c) for c in columns] for row in rows], headers=columns))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
