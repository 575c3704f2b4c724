"""Print IEDyn's Table 2 beside our insert-only runs of Q1–Q12 (planner/workloads/iedyn_table2.py).

    PYTHONPATH=. python examples/iedyn/table2.py --scale 0.1 [--order temporal] [--engine]

Streams are ``make_iedyn_stream`` with IEDyn §6's settings (random order, N/k inserts per relation,
k uniform in 1..200, other values uniform in 1..1,000,000) at ``--scale`` times Table 2's stream
sizes. Output sizes count multiplicities. ``--engine`` also maintains each query with a
``MaintainedView`` over the stream (batches of 1,000 inserts) and counts its result, which must
equal DuckDB's count; ``--join-strategy binary`` forces the materializing fallback there.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tabulate import tabulate

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from catalog.iedyn import iedyn_catalog  # noqa: E402
from operators.runtime.stream import UpdateBatch, batches  # noqa: E402
from planner.view import MaintainedView  # noqa: E402
from planner.workloads.iedyn_table2 import EXPECTED, duckdb_count, query_sql, table2_rows  # noqa: E402


def engine_count(join_strategy: str | None):
    def count(query: str, updates: UpdateBatch) -> int:
        expected = duckdb_count(query, updates)
        with MaintainedView(query_sql(query), iedyn_catalog(), join_strategy=join_strategy) as view:
            for batch in batches(updates, 1_000):
                view.apply(batch)
            maintained = sum(view.current.values())
        if maintained != expected:
            raise AssertionError(f"{query}: the maintained view holds {maintained} rows, DuckDB counts {expected}")
        return maintained
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=0.1, help="fraction of Table 2's stream sizes")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--order", choices=("random", "temporal"), default="random")
    parser.add_argument("--engine", action="store_true", help="count with a maintained view (checked against DuckDB)")
    parser.add_argument("--join-strategy", choices=("binary",), help="with --engine: force the fallback")
    args = parser.parse_args()
    count = engine_count(args.join_strategy) if args.engine else duckdb_count
    rows = table2_rows(args.scale, args.seed, args.order, count)
    print(tabulate(
        [(r.query, r.paper_stream, r.paper_output, f"{r.paper_selectivity:.3f}", f"{float(EXPECTED[r.query]):.3f}",
          r.stream, r.output, f"{r.our_selectivity:.3f}") for r in rows],
        headers=("query", "paper stream", "paper output", "paper sel.", "predicted sel.", "our stream",
                 "our output", "our sel."),
        intfmt=","))
    print(f"scale {args.scale}, seed {args.seed}, {args.order} order, counted by "
          f"{'a maintained view' if args.engine else 'DuckDB'}; sel. = output · 200^equalities / (N/k)^k")


if __name__ == "__main__":
    main()
