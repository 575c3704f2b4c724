"""Benchmark: whole `ivm run` processes side by side, with their peak memory per process.

Runs each command given (the Spark runner at several batch sizes, the local runner, optionally the
runner of another checkout) one after the other as a child process, samples /proc every 0.2 s, and
prints per run: wall time, updates/s over the whole process (start to exit: Python start, Spark and
JVM start, reading, maintenance, writing --out), the rate the command itself printed, peak RSS of the
Python driver and of the JVM (and of the Python workers together). Compare ratios within one run:
the machine is shared and noisy.

    python examples/benchmarks/spark_run.py --stream data/streams/sf0.1-window \\
        --runs spark:100000 spark:10000 local:100000 [--before /path/to/old/checkout]

Not a test: nothing here asserts; numbers go to RESULTS.md by hand with the machine described.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[2]
QUERY_TABLES = ("customer", "orders", "lineitem")


def descendants(pid: int) -> list[int]:
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    children.setdefault(int(stat.read().rsplit(")", 1)[1].split()[1]), []).append(int(entry))
            except OSError:
                continue
    found, frontier = [], [pid]
    while frontier:
        current = frontier.pop()
        found.append(current)
        frontier.extend(children.get(current, []))
    return found


def rss_kib(pid: int) -> tuple[str, int]:
    """(command name, current RSS in KiB) of a process, or ("", 0) once it is gone."""
    try:
        with open(f"/proc/{pid}/status") as status:
            fields = dict(line.split(":", 1) for line in status if ":" in line)
        return fields["Name"].strip(), int(fields.get("VmRSS", "0 kB").split()[0])
    except (OSError, KeyError):
        return "", 0


class PeakMemory(threading.Thread):
    """Peak RSS of the driver process, of its JVM, and of the Python workers together, sampled."""

    def __init__(self, pid: int):
        super().__init__(daemon=True)
        self.pid, self.done = pid, False
        self.driver = self.jvm = self.workers = 0

    def run(self) -> None:
        while not self.done:
            workers = 0
            for pid in descendants(self.pid):
                name, rss = rss_kib(pid)
                if pid == self.pid:
                    self.driver = max(self.driver, rss)
                elif name == "java":
                    self.jvm = max(self.jvm, rss)
                elif name.startswith("python"):
                    workers += rss
            self.workers = max(self.workers, workers)
            time.sleep(0.2)


def run(label: str, command: list[str], cwd: Path, updates: int) -> dict:
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                               env={**os.environ, "PYTHONPATH": str(cwd)})
    memory = PeakMemory(process.pid)
    memory.start()
    output, _ = process.communicate()
    seconds = time.perf_counter() - started
    memory.done = True
    printed = re.search(r"\(([\d,]+) updates/s", output or "")
    return {"run": label, "exit": process.returncode, "wall s": round(seconds, 1),
            "updates/s (whole process)": round(updates / seconds), "printed updates/s": printed.group(1) if printed else "",
            "driver MiB": memory.driver // 1024, "JVM MiB": memory.jvm // 1024, "workers MiB": memory.workers // 1024}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stream", required=True)
    parser.add_argument("--query", default=str(ROOT / "examples" / "tpch" / "q03.sql"))
    parser.add_argument("--runs", nargs="+", default=["spark:100000", "local:100000"],
                        help="engine:batch (engine local, spark, spark-jvm: the JVM delta queries, or before-spark: "
                             "the --before checkout's spark runner)")
    parser.add_argument("--before", help="another checkout of spark-ivm, for before-spark runs")
    args = parser.parse_args()
    stream = Path(args.stream)
    updates = sum(pq.ParquetFile(path).metadata.num_rows for path in stream.glob("*.parquet"))
    print(f"{sys.platform}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; "
          f"stream {stream} ({updates} updates in all tables)")
    results = []
    for spec in args.runs:
        engine, batch = spec.split(":")
        cwd = Path(args.before) if engine == "before-spark" else ROOT
        out = Path(tempfile.mkdtemp(prefix="bench-")) / "out.parquet"
        command = [sys.executable, "-m", "planner.cli", "run", "--query", args.query, "--stream", str(stream),
                   "--engine", "local" if engine == "local" else "spark", "--batch-size", batch, "--out", str(out)]
        if engine == "spark-jvm":  # the JVM delta queries (docs/spark.md, "Two strategies")
            command += ["--spark-strategy", "jvm"]
        results.append(run(spec, command, cwd, updates))
        print(results[-1], flush=True)
    header = list(results[0])
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for result in results:
        print("| " + " | ".join(str(result[h]) for h in header) + " |")


if __name__ == "__main__":
    main()
