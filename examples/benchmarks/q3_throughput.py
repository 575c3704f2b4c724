"""Benchmark: TPC-H Q3 maintained over the window stream, local runner vs Spark runner.

Reports updates per second and peak memory for each runner, measured side by side in one run (the
machine is shared and noisy, so compare the ratio, not absolute numbers across runs). Each runner
runs in a fresh child process so that peak RSS belongs to it alone.

    python examples/benchmarks/q3_throughput.py --sf 0.1 --spark-batch 100000

Not a test: nothing here asserts; numbers go to RESULTS.md by hand with the machine described.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def _stream(sf: float, data_dir: Path):
    from catalog.tpch import tpch_catalog
    from planner.workloads.tpch_data import generate_tpch, load_tables
    from planner.workloads.tpch_streams import default_window, make_stream

    catalog = tpch_catalog()
    tables = load_tables(generate_tpch(sf, data_dir / f"tpch-sf{sf}"), catalog)
    window = default_window(len(tables["lineitem"]))
    return catalog, make_stream(tables, catalog, "window", window, seed=0), window


def _rss_mb() -> float:
    """Current resident set size of this process (peak RSS would include building the stream)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _measure(engine: str, sf: float, batch: int, data_dir: str, queue) -> None:
    from operators.runtime.stream import batches
    from planner.view import MaintainedView

    catalog, updates, window = _stream(sf, Path(data_dir))
    sql = (ROOT / "examples" / "tpch" / "q03.sql").read_text()
    baseline_mb = _rss_mb()
    view = MaintainedView(sql, catalog, engine=engine)
    warmup = 0.0
    times = []
    with view:
        for number, chunk in enumerate(batches(updates, batch)):
            started = time.perf_counter()
            view.apply(chunk)
            elapsed = time.perf_counter() - started
            if engine == "spark" and number == 0:
                warmup = elapsed  # JVM, Python workers and RocksDB start-up: reported apart
            else:
                times.append((len(chunk), elapsed))
        rows = len(view.result())
        state_mb = _rss_mb() - baseline_mb
    measured_updates = sum(n for n, _ in times)
    measured_time = sum(t for _, t in times)
    queue.put({
        "engine": engine, "sf": sf, "batch": batch, "window": window, "updates": len(updates),
        "measured_updates": measured_updates, "seconds": round(measured_time, 2),
        "updates_per_s": round(measured_updates / measured_time) if measured_time else None,
        "first_batch_s": round(warmup, 2) if engine == "spark" else None,
        "rss_growth_mb": round(state_mb),  # state kept by the runner (and the validator) at the end
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "children_peak_rss_mb": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024),
        "result_rows": rows,
    })


def run(engine: str, sf: float, batch: int, data_dir: str) -> dict:
    queue = multiprocessing.get_context("spawn").Queue()
    process = multiprocessing.get_context("spawn").Process(target=_measure, args=(engine, sf, batch, data_dir, queue))
    process.start()
    result = queue.get()
    process.join()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sf", type=float, default=0.1)
    parser.add_argument("--local-batch", type=int, default=10_000)
    parser.add_argument("--spark-batch", type=int, default=100_000)
    parser.add_argument("--engines", default="local,spark")
    parser.add_argument("--data", default=str(ROOT / "data"))
    args = parser.parse_args()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.platform()}")
    for engine in args.engines.split(","):
        batch = args.local_batch if engine == "local" else args.spark_batch
        print(json.dumps(run(engine, args.sf, batch, args.data)), flush=True)


if __name__ == "__main__":
    main()
