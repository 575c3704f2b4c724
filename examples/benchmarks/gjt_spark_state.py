"""Benchmark: a constant-key GJT stage's state per micro-batch on Spark, one chunk against pages.

A band join keyed by a constant (no equality: ``r.a between s.d - 3 and s.d + 3``, IEDyn's
T-representation in one stage) over a temporally ordered sliding window (IEDyn §6's temporal order:
values grow with time; each batch inserts ``--batch`` / 2 new rows and deletes as many of the oldest,
so the state stays at its size while the batch's changes and output stay small). For each state size,
both layouts of ``operators/runtime/spark_stage_processors.py`` run the same stage on the same batches
under pyspark's ``TwsTester`` (the processors' own code, with an in-memory MapState instead of RocksDB):

    chunk   ``PackedStageProcessor``, the former layout of GJT stages: the key's whole state in one
            MapState entry, unpickled and re-pickled every batch
    pages   ``PagedStateProcessor``: the T-representation in pages (``operators/stages/gjt/pages.py``),
            a batch reading and writing the pages it touches

Per batch it reports the MapState entries read and written, the bytes unpickled and pickled, and the
wall time of ``handleInputRows``; every batch's output is compared between the layouts. RocksDB's own
cost per entry (a JNI call each, measured ~50–110 µs per state call in spark_state_access.py) is not
in the times: under Spark the pages layout pays it per page, the chunk layout once per batch, on top
of the pickling measured here.

    python examples/benchmarks/gjt_spark_state.py --sizes 10000 100000 1000000 --batch 200

``--spark`` runs the same stream through the Spark runner for real instead (``MaintainedView`` with
``engine="spark"``: validation, RocksDB, the result sink; the chunk layout by patching the runner's
layout choice), and reports the wall time of each measured micro-batch per layout: what the state
server's round trips per page cost against re-pickling the state, at sizes a shared machine loads.

Not a test: the machine is shared and noisy; compare layouts within one run (say ``uptime``).
"""

from __future__ import annotations

import argparse
import pickle
import tempfile
import time
from collections import Counter
from pathlib import Path

from pyspark.sql.streaming.tws_tester import TwsTester
from pyspark.sql.types import Row as SparkRow

from catalog.ddl import catalog_from_ddl
from operators.runtime import spark_runner
from operators.runtime.dataflow import StageNode
from operators.runtime.spark_edges import (
    DEFAULT_BUCKETS,
    DEFAULT_CHUNKS,
    PICKLE_PROTOCOL,
    chunk_of,
    key_text,
    pack,
    unpack,
)
from operators.runtime.spark_session import make_spark_session
from operators.runtime.spark_stage_processors import (
    PackedStageProcessor,
    PagedStateProcessor,
    packed_layout,
    run_packed,
)
from operators.runtime.stream import Update
from operators.stages.base import Change
from operators.stages.gjt import GjtStage
from operators.stages.gjt.pages import PagedGjtState
from operators.structures.page_store import DictBackend, PageStore
from planner.compiler import compile_query
from planner.view import MaintainedView

SQL = "select r.a, r.b, s.d, s.e from r, s where r.a between s.d - 3 and s.d + 3"
SCHEMA = Path(__file__).resolve().parents[1] / "iedyn" / "schema.sql"
LOAD_BATCH = 20_000


def band_stage() -> GjtStage:
    """The query's GJT stage as the planner lowers it (keyed by a constant)."""
    compiled = compile_query(SQL, catalog_from_ddl(SCHEMA.read_text()), strict=True)
    stage = next(node.stage for node in compiled.dataflow.stages if isinstance(node.stage, GjtStage))
    assert stage.key == (), stage.key
    return stage


class Window:
    """The temporal sliding window: row i has value i // 2 (r and s alternate) and a payload; the
    oldest rows leave first. Ports: 0 is s(d, e), 1 is r(a, b), as the lowering numbers them."""

    def __init__(self) -> None:
        self.clock = 0
        self.live: list[tuple[int, tuple]] = []
        self.oldest = 0

    def inserts(self, count: int) -> list[Change]:
        changes = []
        for _ in range(count):
            port, row = self.clock % 2, (self.clock // 2, self.clock % 97)
            self.live.append((port, row))
            changes.append(Change(port, row, 1))
            self.clock += 1
        return changes

    def slide(self, count: int) -> list[Change]:
        changes = self.inserts(count // 2)
        for port, row in self.live[self.oldest:self.oldest + count - count // 2]:
            changes.append(Change(port, row, -1))
        self.oldest += count - count // 2
        return changes


def packed_rows(changes: list[Change]) -> list[SparkRow]:
    return [SparkRow(**record) for record in pack((0, key_text(()), c.port, c.row, c.weight) for c in changes)]


def run_batch(tester: TwsTester, changes: list[Change]) -> tuple[dict, float]:
    start = time.perf_counter()
    out = tester.test(0, packed_rows(changes))
    seconds = time.perf_counter() - start
    emitted: Counter = Counter()
    for packed in out:
        for _, _, row, weight in unpack(packed.changes):
            emitted[row] += weight
    return {row: weight for row, weight in emitted.items() if weight}, seconds


def chunk_bytes(tester: TwsTester) -> int:
    return sum(len(data) for (data,) in tester.peekMapState("stage_0", 0).values())


def load(stage: GjtStage, testers: dict[str, TwsTester], window: Window, size: int) -> dict[str, float]:
    """``size`` rows of the window into both layouts' MapStates, as their processors store them, built
    in memory in large batches (the chunk layout would otherwise re-pickle its growing state per load
    batch); the seconds each took."""
    seconds = {}
    start, state, backend = time.perf_counter(), None, DictBackend()
    batches = []
    while window.clock < size:
        batches.append(window.inserts(min(LOAD_BATCH, size - window.clock)))
    for changes in batches:
        state, _ = stage.without_changes().process((), state, changes)
    text = key_text(())
    chunk = chunk_of(text, DEFAULT_BUCKETS, DEFAULT_CHUNKS)
    testers["chunk"].updateMapState("stage_0", 0, {(chunk,): (pickle.dumps({text: state}, PICKLE_PROTOCOL),)})
    seconds["chunk"] = time.perf_counter() - start
    start = time.perf_counter()
    for changes in batches:
        store = PageStore(backend)
        paged = PagedGjtState(stage, store, ())
        stage.without_changes().process((), paged, changes)
        paged.save()
        store.flush()
    testers["pages"].updateMapState("stage_0_pages", 0, {(page,): (data,) for page, data in backend.pages.items()})
    seconds["pages"] = time.perf_counter() - start
    return seconds


def measure(stage: GjtStage, size: int, batch: int, batches: int) -> dict[str, dict]:
    node = StageNode(0, stage, downstream=None)
    layouts = {"chunk": PackedStageProcessor(node, None), "pages": PagedStateProcessor(node, None)}
    testers = {name: TwsTester(processor) for name, processor in layouts.items()}
    window = Window()
    load_seconds = load(stage, testers, window, size)
    report = {name: {"seconds": [], "entries": [], "bytes": [], "load_seconds": load_seconds[name]}
              for name in layouts}
    for _ in range(batches):
        changes = window.slide(batch)
        before = chunk_bytes(testers["chunk"])
        outputs = {}
        for name, tester in testers.items():
            outputs[name], seconds = run_batch(tester, changes)
            report[name]["seconds"].append(seconds)
        assert outputs["chunk"] == outputs["pages"], "the layouts disagree"
        assert outputs["pages"], "the batch changed nothing: it would measure too little"
        report["chunk"]["entries"].append(2)
        report["chunk"]["bytes"].append(before + chunk_bytes(testers["chunk"]))
        pages = layouts["pages"].last_batch
        report["pages"]["entries"].append(pages.pages_read + pages.pages_written)
        report["pages"]["bytes"].append(pages.bytes_read + pages.bytes_written)
    return report


def spark_updates(changes: list[Change], first_seq: int) -> list[Update]:
    """The window's changes as base-table updates of IEDyn's schema (``id`` from the row's value)."""
    updates = []
    for seq, change in enumerate(changes, first_seq):
        value, payload = change.row
        row = (value, value, payload, 0, 0) if change.port == 0 else (value, value, payload, "c", 0)
        updates.append(Update(seq, "s" if change.port == 0 else "r", change.weight, row))
    return updates


def chunk_layout(stage_input, node, downstream, buckets, chunks):
    """The runner's layout choice with GJT stages in one chunk, as before the paged layout."""
    if isinstance(node.stage, GjtStage):
        return run_packed(stage_input, node, downstream, buckets, chunks)
    return packed_layout(stage_input, node, downstream, buckets, chunks)


def measure_on_spark(size: int, batch: int, batches: int, spark) -> dict[str, list[float]]:
    """Seconds per measured micro-batch of each layout on the Spark runner, after loading ``size`` rows."""
    catalog = catalog_from_ddl(SCHEMA.read_text())
    seconds: dict[str, list[float]] = {}
    for name in ("chunk", "pages"):
        window, seq = Window(), 1
        spark_runner.packed_layout = chunk_layout if name == "chunk" else packed_layout
        with tempfile.TemporaryDirectory() as work_dir, MaintainedView(SQL, catalog, engine="spark", spark=spark,
                                                                       work_dir=work_dir) as view:
            while window.clock < size:
                updates = spark_updates(window.inserts(min(LOAD_BATCH, size - window.clock)), seq)
                seq += len(updates)
                view.apply(updates)
            seconds[name] = []
            for _ in range(batches):
                updates = spark_updates(window.slide(batch), seq)
                seq += len(updates)
                start = time.perf_counter()
                assert view.apply(updates), "the batch changed nothing"
                seconds[name].append(time.perf_counter() - start)
    spark_runner.packed_layout = packed_layout
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--batch", type=int, default=200, help="changes per measured batch")
    parser.add_argument("--batches", type=int, default=5, help="measured batches per size (medians reported)")
    parser.add_argument("--spark", action="store_true", help="time micro-batches on the Spark runner instead")
    args = parser.parse_args()
    stage = band_stage()

    def median(values: list[float]) -> float:
        return sorted(values)[len(values) // 2]

    if args.spark:
        spark = make_spark_session(app="gjt-spark-state")
        print(f"{SQL}\nSpark runner, {args.batch} changes per micro-batch, median of {args.batches}\n")
        print("| state rows | chunk s per batch | pages s per batch | chunk/pages |")
        print("|---:|---:|---:|---:|")
        for size in args.sizes:
            seconds = measure_on_spark(size, args.batch, args.batches, spark)
            chunk, pages = median(seconds["chunk"]), median(seconds["pages"])
            print(f"| {size:,} | {chunk:.2f} | {pages:.2f} | {chunk / pages:.2f}× |", flush=True)
        return

    print(f"{SQL}\n{args.batch} changes per batch (half inserts, half deletes of the oldest rows), medians of "
          f"{args.batches} batches\n")
    print("| state rows | layout | entries read+written | KiB (un)pickled | ms per batch | load s | chunk/pages time |")
    print("|---:|---|---:|---:|---:|---:|---:|")
    for size in args.sizes:
        report = measure(stage, size, args.batch, args.batches)
        ratio = median(report["chunk"]["seconds"]) / median(report["pages"]["seconds"])
        for name in ("chunk", "pages"):
            row = report[name]
            print(f"| {size:,} | {name} | {median(row['entries']):,.0f} | {median(row['bytes']) / 1024:,.1f} | "
                  f"{1000 * median(row['seconds']):,.1f} | {row['load_seconds']:,.1f} | "
                  f"{f'{ratio:.1f}×' if name == 'pages' else ''} |", flush=True)


if __name__ == "__main__":
    main()
