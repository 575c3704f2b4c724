"""Before/after: `ivm run`'s maintenance time from two checkouts, interleaved, beside the hand loops.

A change to the local runner is measured against the checkout it started from on the same stream, in
one invocation, the runs alternating (before, after, loop; before, after, loop; ...) so that a load
that comes and goes on the shared machine falls on both sides alike. Each run is its own child
process (``local_speed.run_child``); the maintenance time is `ivm run --stats-json`'s
``maintenance_seconds`` (wall time inside ``MaintainedView.apply``), the loop's is ``hand_loops.py``'s.
Medians over ``--repeat``; the load average is printed before and after.

    # throughput, batches of 10 000 (issue 13's "maintenance ≥ 0.5× the loop"):
    python examples/benchmarks/ab_maintenance.py --before /tmp/main-checkout --stream data/streams/sf0.1-window
    # per-update cost at batch sizes 1, 50 and 10 000 (Q3, SF 0.01):
    python examples/benchmarks/ab_maintenance.py --before /tmp/main-checkout --mode batch-sizes \\
        --stream data/streams/sf0.01-window --queries q3
    # Q5 on the live-dimension stream, the live-tuple plan and the Theorem 11 tree:
    python examples/benchmarks/ab_maintenance.py --before /tmp/main-checkout --mode join-trees \\
        --stream data/streams/sf0.1-live --queries q5

Not a test: nothing asserts; numbers go to RESULTS.md by hand.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from local_speed import QUERY_FILES, loop_run, run_child  # noqa: E402  (a sibling script)

AFTER = HERE.parents[1]


def load() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def maintenance_seconds(checkout: Path, query: str, stream: Path, batch_size: int, extra: tuple[str, ...] = ()) -> float:
    """`ivm run`'s maintenance time in ``checkout`` (its own code: the child's path and directory)."""
    with tempfile.TemporaryDirectory() as work:
        stats = Path(work) / "stats.json"
        command = [sys.executable, "-m", "planner.cli", "run", "--engine", "local", "--query",
                   str(checkout / "examples" / "tpch" / QUERY_FILES[query]), "--stream", str(stream),
                   "--batch-size", str(batch_size), "--stats-json", str(stats), *extra]
        run_child(command, root=checkout)
        return json.loads(stats.read_text())["maintenance_seconds"]


def updates_in(stream: Path) -> int:
    import pyarrow.parquet as pq

    return sum(pq.read_metadata(file).num_rows for file in stream.glob("*.parquet"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", type=Path, required=True, help="the checkout to compare against")
    parser.add_argument("--stream", type=Path, required=True)
    parser.add_argument("--mode", choices=("throughput", "batch-sizes", "join-trees"), default="throughput")
    parser.add_argument("--queries", default="q3,q5,q10")
    parser.add_argument("--batch-sizes", default="1,50,10000")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    n = updates_in(args.stream)
    print(f"load average {load()}; {n:,} updates in {args.stream}; medians of {args.repeat}", flush=True)
    sides = {"before": args.before.resolve(), "after": AFTER}
    for query in args.queries.split(","):
        if args.mode == "throughput":
            cases = {"": (10_000, ())}
        elif args.mode == "batch-sizes":
            cases = {f"batch {int(s):,}": (int(s), ()) for s in args.batch_sizes.split(",")}
        else:
            cases = {"live tuples": (10_000, ()), "theorem11": (10_000, ("--join-tree", "theorem11"))}
        times: dict[tuple[str, str], list[float]] = {}
        loops: list[float] = []
        for _ in range(args.repeat):
            for case, (size, extra) in cases.items():
                for side, checkout in sides.items():
                    times.setdefault((case, side), []).append(maintenance_seconds(checkout, query, args.stream, size, extra))
            if args.mode == "throughput":
                loops.append(loop_run(query, args.stream).maintenance_seconds)
        median = {key: statistics.median(values) for key, values in times.items()}
        loop = statistics.median(loops) if loops else None
        for case in cases:
            before, after = median[(case, "before")], median[(case, "after")]
            line = (f"{query.upper()} {case}: before {n / before:,.0f} upd/s ({before / n * 1e6:.2f} µs), "
                    f"after {n / after:,.0f} upd/s ({after / n * 1e6:.2f} µs), after/before speed {before / after:.2f}")
            if loop is not None:
                line += f"; loop {n / loop:,.0f} upd/s, maintenance / loop: before {loop / before:.2f}, after {loop / after:.2f}"
            print(line, flush=True)
        if args.mode == "batch-sizes":
            largest = max(cases, key=lambda c: cases[c][0])
            for side in sides:
                ratios = ", ".join(f"{case} {median[(case, side)] / median[(largest, side)]:.2f}×" for case in cases)
                print(f"  {side}: per-update cost vs {largest}: {ratios}", flush=True)
        if args.mode == "join-trees":
            for side in sides:
                print(f"  {side}: live-tuple speed / Theorem 11's "
                      f"{median[('theorem11', side)] / median[('live tuples', side)]:.2f}", flush=True)
    print(f"load average {load()} at the end")


if __name__ == "__main__":
    main()
