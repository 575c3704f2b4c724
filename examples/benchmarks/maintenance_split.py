"""Where `ivm run`'s maintenance time goes: validation, the stages (compiled or generic), the rest.

`ivm run` reports one maintenance time per run (``MaintainedView.apply``: validating the batch,
running the stages, keeping the ordered result). This script reads the stream the same way (columnar
batches of the tables the query reads, not timed) and times the three parts of ``apply`` separately,
in-process, once with the compiled program and once with the generic stage classes, so the stages
alone can be set beside ``hand_loops.py`` (which neither validates nor keeps an ordered result).
The last column times ``apply`` whole on a fresh compiled view, as `ivm run` calls it: the stream's
batches through ``Validator.apply``, a batch of one change probed and run in one call of its table's
generated function (``CompiledRunner.run_one``), which the split above cannot take apart.

    python examples/benchmarks/maintenance_split.py --stream data/streams/sf0.1-window --queries q3,q5,q10

Not a test: nothing asserts; numbers go to RESULTS.md by hand.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def split(query: str, stream: Path, batch_size: int, compiled: bool) -> dict[str, float]:
    from catalog.tpch import tpch_catalog
    from operators.runtime.stream import open_stream
    from planner.view import MaintainedView

    catalog = tpch_catalog()
    view = MaintainedView((ROOT / "examples" / "tpch" / f"{query}.sql").read_text(), catalog, compiled=compiled)
    opened = open_stream(stream, catalog)
    batches = list(opened.batches(batch_size, tables=view.compiled.dataflow.tables()))
    seconds = {"validation": 0.0, "stages": 0.0, "result and commit": 0.0}
    with view:
        for batch in batches:
            started = time.perf_counter()
            validated = view.validator.validate(batch)
            checked = time.perf_counter()
            delta = view.runner.apply(validated.accepted) if validated.accepted else []
            ran = time.perf_counter()
            view.validator.commit(validated)
            view.ordered.apply(delta)
            seconds["validation"] += checked - started
            seconds["stages"] += ran - checked
            seconds["result and commit"] += time.perf_counter() - ran
    seconds["updates"] = len(opened)  # every update of the stream, as `ivm run` and the loops count them
    return seconds


def whole(query: str, stream: Path, batch_size: int) -> float:
    """Seconds of ``MaintainedView.apply`` over the stream's batches, compiled (the checked path)."""
    from catalog.tpch import tpch_catalog
    from operators.runtime.stream import open_stream
    from planner.view import MaintainedView

    catalog = tpch_catalog()
    view = MaintainedView((ROOT / "examples" / "tpch" / f"{query}.sql").read_text(), catalog)
    batches = list(open_stream(stream, catalog).batches(batch_size, tables=view.compiled.dataflow.tables()))
    with view:
        started = time.perf_counter()
        for batch in batches:
            view.apply(batch)
        return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stream", type=Path, required=True)
    parser.add_argument("--queries", default="q3,q5,q10")
    parser.add_argument("--batch-size", type=int, default=10_000)
    args = parser.parse_args()
    print("| query | stages | updates | validation upd/s | stages upd/s | result and commit upd/s | all of apply upd/s "
          "| apply, checked path upd/s |")
    print("|---|---|---|---|---|---|---|---|")
    for query in args.queries.split(","):
        name = f"q{int(query.strip().removeprefix('q')):02d}"
        for compiled in (True, False):
            s = split(name, args.stream, args.batch_size, compiled)
            n = s["updates"]
            total = s["validation"] + s["stages"] + s["result and commit"]
            fused = f"{n / whole(name, args.stream, args.batch_size):,.0f}" if compiled else "-"
            print(f"| {query.upper()} | {'compiled' if compiled else 'generic'} | {n:,} | {n / s['validation']:,.0f} | "
                  f"{n / s['stages']:,.0f} | {n / s['result and commit']:,.0f} | {n / total:,.0f} | {fused} |", flush=True)


if __name__ == "__main__":
    main()
