"""The top-k stage's Spark state backend (operators/runtime/spark_top_k.py, run by
operators/runtime/spark_stage_processors.py's ``TopKProcessor``) against the local runner.

The toy dataflow plus a top-k over a table of scores runs through the Spark runner with few buckets
and chunks (so they hold several keys each); after every batch the result changes must equal the
local runner's. The top-k processor's buffer is also driven without a JVM through enough batches to
trim and refill it.
"""

from __future__ import annotations

import pickle
import random
from collections import Counter
from operator import itemgetter

import pytest
from pyspark.sql.streaming.tws_tester import TwsTester
from pyspark.sql.types import Row as SparkRow

from catalog.schema import Catalog, Column, Table
from operators.runtime.dataflow import Dataflow, SourceRoute, StageNode
from operators.runtime.local_runner import LocalRunner
from operators.runtime.spark_edges import pack, unpack
from operators.runtime.spark_runner import SparkRunner
from operators.runtime.spark_session import make_spark_session
from operators.runtime.spark_stage_processors import PagedStateProcessor, TopKProcessor
from operators.runtime.spark_top_k import SparkOrderedRows
from operators.stages.base import Change, StageDescription
from operators.stages.top_k import TopKStage
from tests.operators.test_gjt_stage import Q3, R, S, Stream, T, rows3, stage_of
from tests.operators.test_spark_runner import TOY_CATALOG, as_updates, batches
from tests.operators.toy_stages import toy_dataflow

#: Scores are shaped like the toy result's rows (string, int, int): the Spark runner's result files
#: hold one row shape, as every real query's result does.
CATALOG = Catalog.of([*TOY_CATALOG.tables.values(),
                      Table("scores", (Column("id", "string"), Column("score", "int"), Column("bonus", "int")))])
TOP = 2


def toy_with_top_k() -> Dataflow:
    """The toy dataflow plus ``SELECT id, score, bonus FROM scores ORDER BY score DESC, id LIMIT 2`` as stage 3."""
    toy = toy_dataflow()
    top = TopKStage("top scores", ((itemgetter(1), False), (itemgetter(0), True)), TOP, ("id", "score", "bonus"),
                    StageDescription("TopK"))
    return Dataflow(stages=(*toy.stages, StageNode(3, top, downstream=None)),
                    sources=(*toy.sources, SourceRoute("scores", 3, 0, (0, 1, 2))),
                    output_columns=toy.output_columns)


def with_scores(seed: int, count: int) -> list[dict]:
    """The toy batches, each with inserts and deletes of (id, score) rows, duplicates and ties included;
    deletes favour the best rows so that the top-k buffer runs dry and is refilled."""
    rng = random.Random(seed)
    live: list[tuple[int, int]] = []
    result = []
    for batch in batches(seed=seed, count=count, inserts_per_table=25):
        ranked = sorted(live, key=lambda row: (-row[1], row[0]))
        deleted = ranked[: len(ranked) // 3] + rng.sample(ranked[len(ranked) // 3:], k=len(ranked) // 6)
        for row in deleted:
            live.remove(row)
        inserted = [(f"s{rng.randrange(20)}", rng.randrange(10), 0) for _ in range(rng.randrange(10, 30))]
        live.extend(inserted)
        result.append({**batch, "scores": [(row, -1) for row in deleted] + [(row, 1) for row in inserted]})
    return result


@pytest.fixture(scope="module")
def spark():
    session = make_spark_session(app="test-spark-stage-processors")
    yield session
    session.stop()


@pytest.mark.spark
def test_packed_stages_and_top_k_emit_the_local_runners_changes_after_every_batch(spark):
    flow = toy_with_top_k()
    local = LocalRunner(flow)
    seq = 0
    with SparkRunner(flow, CATALOG, spark=spark, buckets=3, chunks=2) as on_spark:
        for number, batch in enumerate(with_scores(seed=11, count=5)):
            expected = local.apply(batch)
            assert any(row[0].startswith("s") for row, _ in expected), f"batch {number}: the top-k changes nothing"
            updates = as_updates(batch, seq)
            seq += len(updates)
            assert Counter(on_spark.apply(updates).changes) == Counter(expected), f"batch {number}"


def test_the_top_k_processor_keeps_a_bounded_buffer_and_emits_the_stages_changes(monkeypatch):
    """Without a JVM (TwsTester): 40 batches that insert and delete many rows, mostly from the top,
    so the buffer is trimmed and refilled; the output must equal ``TopKStage.process`` (the stage's
    ``step`` over its in-memory backend) every batch."""
    rng = random.Random(7)
    stage = TopKStage("top", ((itemgetter(1), False),), 3, ("id", "score"), StageDescription("TopK"))
    tester = TwsTester(TopKProcessor(StageNode(0, stage, downstream=None), None))
    live: list[tuple[int, int]] = []
    state = None
    refills = []
    trimmed = False
    refill = SparkOrderedRows._refill
    monkeypatch.setattr(SparkOrderedRows, "_refill", lambda self: refills.append(1) or refill(self))
    monkeypatch.setattr(SparkOrderedRows, "ROW_CHUNKS", 3)  # several rows per chunk
    for number in range(40):
        ranked = sorted(live, key=lambda row: -row[1])
        deleted = ranked[: rng.randrange(len(ranked) + 1)] if number % 5 == 4 else ranked[:2]
        for row in deleted:
            live.remove(row)
        inserted = [(rng.randrange(30), rng.randrange(15)) for _ in range(rng.randrange(25))]
        live.extend(inserted)
        changes = [Change(0, row, -1) for row in deleted] + [Change(0, row, 1) for row in inserted]
        state, expected = stage.process((), state, list(changes))
        rows = [SparkRow(**packed) for packed in pack((0, "()", 0, c.row, c.weight) for c in changes)]
        emitted = Counter()
        for packed in tester.test(0, rows):
            for _, _, row, weight in unpack(packed.changes):
                emitted[row] += weight
        assert emitted == Counter(dict(expected)), f"batch {number}"
        best = tester.peekValueState("stage_0_best", 0)
        buffered = 0 if best is None else sum(n for _, n in pickle.loads(best[0]))
        assert buffered <= SparkOrderedRows.TRIM_FACTOR * stage.count or best[2]
        trimmed = trimmed or (best is not None and not best[2])
    assert trimmed and refills, "the run never trimmed or never refilled the buffer: it tested too little"


def test_the_paged_gjt_processor_emits_the_stages_changes_and_stores_only_pages():
    """Without a JVM (TwsTester): a constant-key GJT (Q3 of IEDyn, a pure inequality join) through the
    paged processor over 25 batches with NULLs and deletes equals ``GjtStage.process`` in memory; the
    MapState holds small pages (no entry near the state's size), and is empty once every row is deleted."""
    rng = random.Random(5)
    stage = stage_of(Q3, output=tuple("abcdefghi"))
    tester = TwsTester(PagedStateProcessor(StageNode(0, stage, downstream=None), None))
    stream, state, nonempty = Stream(rng, {R: rows3, S: rows3, T: rows3}), None, 0
    for number in range(26):
        if number < 25:
            changes = stream.batch(16)
        else:  # delete everything left
            changes = [Change(port, row, -n) for port, rows in stream.db.items() for row, n in rows.items()]
        state, expected = stage.process((), state, list(changes))
        rows = [SparkRow(**packed) for packed in pack((0, "()", c.port, c.row, c.weight) for c in changes)]
        emitted = Counter()
        for packed in tester.test(0, rows):
            for _, _, row, weight in unpack(packed.changes):
                emitted[row] += weight
        assert {row: w for row, w in emitted.items() if w} == dict(expected), f"batch {number}"
        nonempty += bool(expected)
        pages = tester.peekMapState("stage_0_pages", 0)
        whole = 0 if state is None else len(pickle.dumps(state))
        assert all(len(data) < max(whole / 4, 2000) for (data,) in pages.values()), f"batch {number}"
    assert nonempty > 12 and state is None and not tester.peekMapState("stage_0_pages", 0)
