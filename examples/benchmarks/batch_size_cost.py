"""Benchmark: per-update cost of ``MaintainedView.apply`` at batch sizes 1, 50 and 10 000 (issue 13, item 3).

A view that does O(result) work per batch (a scan of the result, a sort) pays it once per batch, so
its per-update cost at batch size 1 grows with the result; O(Δ) maintenance keeps it within a small
factor of the large-batch cost. Per query: the stream's first ``--warm`` updates are applied in
batches of 10 000, untimed, to build the state and a large result; then the next ``--measure``
updates are timed at each batch size, each size on a fresh view warmed the same way, in-process.

Two modes per size: ``apply`` alone (the ordered result not yet read, so not kept), and ``apply +
ordered`` (the result enumerated once before timing, so the sorted list is kept up to date per batch).

    python examples/benchmarks/batch_size_cost.py --stream data/streams/sf0.01-window

Not a test: nothing here asserts; numbers go to RESULTS.md by hand with the machine described.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from catalog.tpch import tpch_catalog  # noqa: E402  (after the path is set)
from operators.runtime.stream import UpdateBatch, batches, read_stream  # noqa: E402
from planner.view import MaintainedView  # noqa: E402

#: Joins with large ORDER BY results on the SF 0.01 window stream, where about 6 000 lineitems, 1 500
#: orders and 150 customers are live at a time (orders ⋈ customer has only ~150 rows there): every
#: lineitem with its order (~6 000 rows), and the lineitem pairs of an order (~30 000 rows, each
#: lineitem change moving about five of them).
LINEITEM_ORDERS = """
select l_orderkey, l_linenumber, l_extendedprice, o_orderdate, o_orderpriority
from lineitem join orders on l_orderkey = o_orderkey
order by l_extendedprice desc, l_orderkey, l_linenumber
"""
LINEITEM_PAIRS = """
select a.l_orderkey, a.l_linenumber, b.l_linenumber as other_line, a.l_extendedprice, b.l_partkey
from lineitem a join lineitem b on a.l_orderkey = b.l_orderkey
order by a.l_extendedprice desc, a.l_orderkey, a.l_linenumber, other_line
"""
QUERIES = {
    "q3": (ROOT / "examples" / "tpch" / "q03.sql").read_text(),
    "lineitem⋈orders": LINEITEM_ORDERS,
    "lineitem pairs": LINEITEM_PAIRS,
}
SIZES = (1, 50, 10_000)


def measure(sql: str, warm: UpdateBatch, timed: UpdateBatch, size: int, ordered: bool) -> tuple[float, int]:
    """Seconds per update applying ``timed`` in batches of ``size`` after ``warm``; and the result's size."""
    with MaintainedView(sql, tpch_catalog()) as view:
        for chunk in batches(warm, 10_000):
            view.apply(chunk)
        if ordered:
            next(view.rows(), None)  # the first enumeration builds the sorted list; apply keeps it from then on
        chunks = list(batches(timed, size))  # cut before timing: slicing the input is not the view's work
        gc.collect()
        started = time.perf_counter()
        for chunk in chunks:
            view.apply(chunk)
        elapsed = time.perf_counter() - started
        return elapsed / len(timed), len(view.current)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stream", default="data/streams/sf0.01-window", help="a stream directory (ivm tpch stream)")
    parser.add_argument("--warm", type=int, default=60_000, help="updates applied untimed first")
    parser.add_argument("--measure", type=int, default=20_000, help="updates timed at each batch size")
    parser.add_argument("--repeat", type=int, default=3, help="runs per cell; the fastest is shown (the machine is shared)")
    args = parser.parse_args()
    updates = read_stream(args.stream, tpch_catalog())
    warm, timed = updates[: args.warm], updates[args.warm : args.warm + args.measure]
    print(f"stream {args.stream}: {len(updates)} updates; {len(warm)} applied first, {len(timed)} timed per size, "
          f"best of {args.repeat}")
    print(f"{'query':<16} {'mode':<16} {'result rows':>11} " + " ".join(f"{f'batch {s}':>16}" for s in SIZES)
          + "   ratios to 10 000")
    for name, sql in QUERIES.items():
        for ordered in (False, True):
            costs = {}
            for size in SIZES:
                runs = [measure(sql, warm, timed, size, ordered) for _ in range(args.repeat)]
                costs[size], rows = min(runs)
            cells = " ".join(f"{costs[s] * 1e6:>11.1f} µs/u" for s in SIZES)
            ratios = " ".join(f"{costs[s] / costs[SIZES[-1]]:.2f}×" for s in SIZES)
            print(f"{name:<16} {'apply + ordered' if ordered else 'apply':<16} {rows:>11} {cells}   {ratios}")


if __name__ == "__main__":
    main()
