"""The compiled runner's checked path against the general path, in one process (issue 13).

Two compiled views of the same query take the same stream batches, alternating which goes first:
one as `ivm run` sends them (``ChangeBatch``: at a batch of one change ``CompiledRunner.run_one``, the
validator's check made inside the table's generated checked function; larger batches take
``Validator.validate``'s probe either way since the two paths were made one door, issue 28), the other
the general way (``Validator.validate``, then ``CompiledRunner.apply``). Each view's ``apply`` is timed by CPU (``time.process_time``); the ratio
is general / checked time (above 1: the checked path is faster). Reading the stream is not timed.

    python examples/benchmarks/checked_path.py --stream data/streams/sf0.1-window --batch-sizes 1,10000

Not a test: nothing asserts; numbers go to RESULTS.md by hand.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def compare(query: str, stream: Path, batch_size: int) -> tuple[int, float, float]:
    """(updates, checked CPU seconds, general CPU seconds) over the stream's batches."""
    from catalog.tpch import tpch_catalog
    from operators.runtime.stream import ChangeBatch, open_stream
    from planner.view import MaintainedView

    class GeneralPath(ChangeBatch):
        """A stream batch ``Validator.apply`` sends the general way (it takes a ``ChangeBatch`` exactly)."""

    catalog = tpch_catalog()
    sql = (ROOT / "examples" / "tpch" / f"{query}.sql").read_text()
    checked, general = MaintainedView(sql, catalog), MaintainedView(sql, catalog)
    batches = list(open_stream(stream, catalog).batches(batch_size, tables=checked.compiled.dataflow.tables()))
    seconds = {True: 0.0, False: 0.0}
    with checked, general:
        for number, batch in enumerate(batches):
            runs = [(checked, batch, True), (general, GeneralPath(batch.tables, batch.order), False)]
            for view, sent, path in runs if number % 2 else reversed(runs):
                started = time.process_time()
                view.apply(sent)
                seconds[path] += time.process_time() - started
    return sum(len(batch) for batch in batches), seconds[True], seconds[False]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stream", type=Path, required=True)
    parser.add_argument("--queries", default="q3,q5,q10")
    parser.add_argument("--batch-sizes", default="1,10000")
    args = parser.parse_args()
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("| query | batch size | updates | checked path upd/s (CPU) | general path upd/s (CPU) | general / checked time |")
    print("|---|---|---|---|---|---|")
    for query in args.queries.split(","):
        name = f"q{int(query.strip().removeprefix('q')):02d}"
        for size in map(int, args.batch_sizes.split(",")):
            n, checked, general = compare(name, args.stream, size)
            print(f"| {query.upper()} | {size:,} | {n:,} | {n / checked:,.0f} | {n / general:,.0f} | {general / checked:.2f} |",
                  flush=True)
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
