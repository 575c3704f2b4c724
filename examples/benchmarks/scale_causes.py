"""Why `ivm run`'s per-update maintenance grows with the scale factor (issue 13's "flat within 1.5×").

Two measurements, CPU seconds (``time.thread_time``, the main thread's, where maintenance runs; the
machine is shared, wall time swings):

- ``parts``: `ivm run`'s maintenance split into its parts per update (validation, the stages, the
  validator's commit, the ordered result), the stream read batch by batch as `ivm run` reads it (the
  columns the plan reads, batches of 10 000), one stream after the other. Which part grows?
- ``dicts``: the state access a window stream makes (insert a key, delete the key that left the
  window), on dicts of the window's size, with three kinds of keys: ints in stream order (the
  hand-written loop's ``l_orderkey``: Python hashes an int to itself, so consecutive keys land in
  consecutive slots), the same ints shuffled, and (orderkey, linenumber) tuples (the validator's
  lineitem key: a tuple's hash scatters consecutive keys over the table). Once the dict outgrows the
  caches, only the first keeps its locality.

    python examples/benchmarks/scale_causes.py parts --query q3 \\
        --streams data/streams/sf0.01-window,data/streams/sf0.1-window,data/streams/sf1-window
    python examples/benchmarks/scale_causes.py dicts

Not a test: numbers go to RESULTS.md by hand.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from hashlib import blake2b
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

QUERIES = {"q3": "q03.sql", "q5": "q05.sql", "q10": "q10.sql"}


def parts(query: str, stream: Path) -> dict[str, float]:
    """Per-update CPU µs of each part of ``MaintainedView.apply``, and the validator's state sizes."""
    from catalog.tpch import tpch_catalog
    from operators.lowering.route_masks import row_masks
    from operators.lowering.stream_columns import columns_read
    from operators.runtime.stream import open_stream
    from planner.view import MaintainedView

    catalog = tpch_catalog()
    seconds = {"validation": 0.0, "stages": 0.0, "commit": 0.0, "ordered result": 0.0}
    clock = time.thread_time  # this thread's (the stream's open runs on a thread of its own)
    with MaintainedView((ROOT / "examples" / "tpch" / QUERIES[query]).read_text(), catalog) as view:
        opened = open_stream(stream, catalog)
        columns = columns_read(view.compiled.dataflow, catalog)
        masks = row_masks(view.compiled.dataflow, catalog)
        for batch in opened.batches(10_000, tables=view.validator.tables, columns=columns, masks=masks):
            started = clock()
            validated = view.validator.validate(batch)
            checked = clock()
            delta = view.runner.apply(validated.accepted) if validated.accepted else []
            ran = clock()
            view.validator.commit(validated)
            committed = clock()
            if view.ordered is not None:
                view.ordered.apply(delta)
            seconds["validation"] += checked - started
            seconds["stages"] += ran - checked
            seconds["commit"] += committed - ran
            seconds["ordered result"] += clock() - committed
        sizes = {table: len(state) for table, state in view.validator.fingerprints.items()}
    per_update = {part: value / len(opened) * 1e6 for part, value in seconds.items()}
    return {**per_update, "all": sum(per_update.values()), "validator keys": sum(sizes.values())}


def window_access_ns(keys: list, window: int) -> float:
    """CPU ns per update of a sliding window over ``keys``: insert the next, delete the one leaving."""
    fingerprints = [blake2b(i.to_bytes(8, "little"), digest_size=16).digest() for i in range(len(keys))]
    state = dict(zip(keys[:window], fingerprints[:window], strict=True))
    updates = len(keys) - window
    started = time.process_time()
    for i in range(window, len(keys)):
        key = keys[i]
        if key in state:
            raise AssertionError("keys are distinct")
        state[key] = fingerprints[i]
        leaving = keys[i - window]
        if state.get(leaving) == fingerprints[i - window]:
            del state[leaving]
    return (time.process_time() - started) / updates * 1e9


def dicts(updates: int) -> None:
    print("| window (dict size) | ints in stream order ns/update | ints shuffled | (orderkey, linenumber) tuples |")
    print("|---|---|---|---|")
    for window in (6_000, 60_000, 600_000):  # lineitem's window at SF 0.01, 0.1, 1
        count = updates + window
        ordered = [i * 7 for i in range(count)]
        order = list(range(count))
        random.Random(1).shuffle(order)
        shuffled = [i * 7 for i in order]  # new objects, made in stream order: only the hashes are scattered
        pairs = [((i // 4) * 32 + 1, i % 4 + 1) for i in range(count)]
        cells = [f"{window_access_ns(keys, window):.0f}" for keys in (ordered, shuffled, pairs)]
        print(f"| {window:,} | " + " | ".join(cells) + " |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("parts", "dicts"))
    parser.add_argument("--query", choices=sorted(QUERIES), default="q3")
    parser.add_argument("--streams", default="data/streams/sf0.01-window,data/streams/sf0.1-window")
    parser.add_argument("--updates", type=int, default=1_000_000, help="dicts: updates per measurement")
    args = parser.parse_args()
    if args.what == "dicts":
        dicts(args.updates)
        return
    print("| query | stream | validation µs/update | stages | commit | ordered result | all | validator keys at the end |")
    print("|---|---|---|---|---|---|---|---|")
    for stream in args.streams.split(","):
        cells = parts(args.query, Path(stream))
        print(f"| {args.query.upper()} | {Path(stream).name} | " + " | ".join(
            f"{value:,.0f}" if part == "validator keys" else f"{value:.3f}" for part, value in cells.items()) + " |",
            flush=True)


if __name__ == "__main__":
    main()
