"""Benchmark: what exact DECIMAL costs, `ivm run` of one checkout against another on one stream file.

Runs `ivm run --query <q> --stream <dir>` from two checkouts in turn (A B A B ...), each in a fresh
child process, and prints per run the maintenance-only rate `ivm run` reports, the child's CPU
seconds and its peak RSS (from ``wait4``), then the medians and the A/B ratios. Used for issue 9 with A = a checkout
with exact decimals (`decimal.Decimal`) and B = the commit before (floats), on the TPC-H SF 0.1
window stream written by `ivm tpch stream --sf 0.1 --kind window`.

    python examples/benchmarks/exact_decimals.py --a . --b ../before --stream /tmp/q3win01 --query 03 --query 06

Not a test: nothing here asserts; numbers go to RESULTS.md by hand with the machine described.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

RATE = re.compile(r"maintenance [\d.]+ s, ([\d,]+) updates/s\)")  # the maintenance-only rate


def run_once(checkout: Path, query: str, stream: str, batch_size: int) -> tuple[float, float, float]:
    """(maintenance updates/s as ivm reports it, child CPU seconds, child peak RSS MiB) of one run."""
    child = subprocess.Popen(
        [sys.executable, "-m", "planner.cli", "run", "--query", str(checkout / "examples" / "tpch" / f"q{query}.sql"),
         "--stream", stream, "--batch-size", str(batch_size)],
        cwd=checkout, env={**os.environ, "PYTHONPATH": str(checkout)}, stdout=subprocess.PIPE, text=True,
    )
    output = child.stdout.read()
    _, status, usage = os.wait4(child.pid, 0)  # this child's own CPU time and peak RSS
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode:
        raise SystemExit(f"{checkout}: ivm run exited with {child.returncode}")
    rate = float(RATE.search(output).group(1).replace(",", ""))
    return rate, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024  # ru_maxrss is in KiB on Linux


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--a", type=Path, required=True, help="checkout A (e.g. exact decimals)")
    parser.add_argument("--b", type=Path, required=True, help="checkout B (e.g. floats)")
    parser.add_argument("--stream", required=True)
    parser.add_argument("--query", action="append", required=True, help="TPC-H query number, e.g. 03")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=10_000)
    args = parser.parse_args()
    for query in args.query:
        figures: dict[str, list[tuple[float, float, float]]] = {"A": [], "B": []}
        for _ in range(args.runs):
            for name, checkout in (("A", args.a.resolve()), ("B", args.b.resolve())):
                figures[name].append(run_once(checkout, query, args.stream, args.batch_size))
        print(f"Q{query}")
        medians = {}
        for name, runs in figures.items():
            rates, cpus, peaks = zip(*runs, strict=True)
            medians[name] = tuple(statistics.median(figure) for figure in (rates, cpus, peaks))
            print(f"  {name}: updates/s {[f'{r:,.0f}' for r in rates]} median {medians[name][0]:,.0f}; "
                  f"CPU s {[f'{c:.1f}' for c in cpus]} median {medians[name][1]:.1f}; peak RSS median {medians[name][2]:,.0f} MiB")
        a, b = medians["A"], medians["B"]
        print(f"  A/B: updates/s {a[0] / b[0]:.2f}, CPU {a[1] / b[1]:.2f}, peak RSS {a[2] / b[2]:.2f}")


if __name__ == "__main__":
    main()
