"""Benchmark: TPC-H Q3 on the window stream under the Spark runner, today's rows vs packed rows.

Runs the same maintained view twice, each in a fresh child process: with ``SparkRunner`` (a Spark
group per stage key, a ValueState per key, one Spark row per change) and with ``PackedSparkRunner``
(operators/runtime/spark_stage_processors.py: groups per bucket, state by chunk, one Spark row per
(stage, bucket)). Reports updates/s over the batches after the first (start-up reported apart) and
checks that both emit the same result changes after every batch (and some at all).

    python examples/benchmarks/q3_spark_layouts.py --sf 0.1 --batch 100000

Not a test; the machine is shared and noisy, so read the ratio of the two lines of one run.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from examples.benchmarks.q3_throughput import _stream  # noqa: E402


def _measure(layout: str, sf: float, batch: int, limit: int | None, data_dir: str, queue) -> None:
    from operators.runtime.spark_runner import SparkRunner
    from operators.runtime.spark_stage_processors import PackedSparkRunner
    from operators.runtime.stream_format import batches
    from planner.view import MaintainedView

    catalog, updates, _ = _stream(sf, Path(data_dir))
    sql = (ROOT / "examples" / "tpch" / "q03.sql").read_text()
    view = MaintainedView(sql, catalog, engine="local")
    runner_class = PackedSparkRunner if layout == "packed" else SparkRunner
    view.runner = runner_class(view.compiled.dataflow)  # the view's own validator and result, Spark stages
    first, times = 0.0, []
    deltas = hashlib.sha256()  # every batch's result changes, so the two layouts are compared batch by batch
    changed = 0
    with view:
        for number, chunk in enumerate(batches(updates, batch)):
            if limit is not None and number >= limit:
                break
            started = time.perf_counter()
            delta = view.apply(chunk)
            elapsed = time.perf_counter() - started
            deltas.update(repr(sorted(delta)).encode())
            changed += len(delta)
            if number == 0:
                first = elapsed
            else:
                times.append((len(chunk), elapsed))
        result = view.result()
    updates_measured, seconds = sum(n for n, _ in times), sum(t for _, t in times)
    queue.put({
        "layout": layout, "sf": sf, "batch": batch, "batches": len(times) + 1, "first_batch_s": round(first, 2),
        "measured_updates": updates_measured, "seconds": round(seconds, 2),
        "updates_per_s": round(updates_measured / seconds) if seconds else None,
        "batch_s": [round(t, 2) for _, t in times], "result_rows": len(result), "result_changes": changed, "changes_sha256": deltas.hexdigest()[:16],
    })


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sf", type=float, default=0.1)
    parser.add_argument("--batch", type=int, default=100_000)
    parser.add_argument("--limit", type=int, default=None, help="stop after this many batches")
    parser.add_argument("--layouts", default="packed,rows")
    parser.add_argument("--data", default=str(ROOT / "data"))
    args = parser.parse_args()
    outcomes = []
    context = multiprocessing.get_context("spawn")
    for layout in args.layouts.split(","):
        queue = context.Queue()
        process = context.Process(target=_measure, args=(layout, args.sf, args.batch, args.limit, args.data, queue))
        process.start()
        outcomes.append(queue.get())
        process.join()
        print(json.dumps(outcomes[-1]), flush=True)
    results = {(o["result_changes"], o["changes_sha256"]) for o in outcomes}
    print("same result changes after every batch:", len(results) == 1 and outcomes[0]["result_changes"] > 0)


if __name__ == "__main__":
    main()
