"""The stage layouts of operators/runtime/spark_stage_processors.py against the local runner.

The toy dataflow runs as one streaming query with its stages grouped by bucket (``ROW_SCHEMA``
rows, state per key or per chunk of keys), and again on packed rows together with a top-k over a
table of scores. After every batch the result changes must equal the local runner's. The top-k
processor's buffer is also driven without a JVM through enough batches to trim and refill it.
"""

from __future__ import annotations

import pickle
import random
from collections import Counter
from operator import itemgetter

import pytest
from pyspark.sql.streaming.tws_tester import TwsTester
from pyspark.sql.types import Row as SparkRow

from operators.runtime.dataflow import Dataflow, SourceRoute, StageNode
from operators.runtime.local_runner import LocalRunner
from operators.runtime.spark_runner import ROW_SCHEMA, SparkRunner
from operators.runtime.spark_session import make_spark_session
from operators.runtime.spark_stage_processors import (
    PackedSparkRunner,
    TopKProcessor,
    pack,
    run_bucketed,
    stage_chain,
    unpack,
)
from operators.stages.base import Change, StageDescription
from operators.stages.top_k import TopKStage
from tests.operators.test_spark_runner import batches
from tests.operators.toy_stages import toy_dataflow

#: Fewer buckets than keys, so that buckets hold several keys and the per-key regrouping is exercised.
BUCKETS = 3


TOP = 2


class LayoutRunner(SparkRunner):
    """The Spark runner with each stage run by ``run_stage`` (sources, sink and files as they are)."""

    def __init__(self, dataflow: Dataflow, spark, run_stage):
        self.run_stage = run_stage
        super().__init__(dataflow, spark=spark)

    def _start_query(self):
        source = self.spark.readStream.schema(ROW_SCHEMA).option("maxFilesPerTrigger", 1).parquet(str(self.source_dir))
        return (stage_chain(self.dataflow, source, self.run_stage).writeStream.foreachBatch(self._collect_result)
                .option("checkpointLocation", str(self.checkpoint_dir)).start())


class PackedRunner(PackedSparkRunner):
    """``PackedSparkRunner`` with few buckets and chunks, so that they hold several keys each."""

    buckets = BUCKETS
    chunks = 2


def toy_with_top_k() -> Dataflow:
    """The toy dataflow plus ``SELECT id, score FROM scores ORDER BY score DESC, id LIMIT 2`` as stage 3."""
    toy = toy_dataflow()
    top = TopKStage("top scores", ((itemgetter(1), False), (itemgetter(0), True)), TOP, ("id", "score"),
                    StageDescription("TopK"))
    return Dataflow(stages=(*toy.stages, StageNode(3, top, downstream=None)),
                    sources=(*toy.sources, SourceRoute("scores", 3, 0, (0, 1))),
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
        inserted = [(rng.randrange(20), rng.randrange(10)) for _ in range(rng.randrange(10, 30))]
        live.extend(inserted)
        result.append({**batch, "scores": [(row, -1) for row in deleted] + [(row, 1) for row in inserted]})
    return result


@pytest.fixture(scope="module")
def spark():
    session = make_spark_session(app="test-spark-stage-processors")
    yield session
    session.stop()


@pytest.mark.spark
@pytest.mark.parametrize("chunks", [None, 2], ids=["state per key", "state per chunk"])
def test_bucketed_stages_emit_the_local_runners_changes_after_every_batch(spark, chunks):
    flow = toy_dataflow()
    local = LocalRunner(flow)
    run_stage = lambda rows, node, downstream: run_bucketed(rows, node, downstream, BUCKETS, chunks)  # noqa: E731
    with LayoutRunner(flow, spark, run_stage) as on_spark:
        for number, batch in enumerate(batches(seed=5, count=4, inserts_per_table=25)):
            expected = local.apply(batch)
            assert expected, f"batch {number} changes nothing: the comparison would prove nothing"
            assert sorted(on_spark.apply(batch)) == sorted(expected), f"batch {number}"
        sizes = on_spark.state_size()
        if chunks is None:  # one MapState entry per key, as the local runner's dict
            assert sizes == local.state_size() and all(sizes.values())


@pytest.mark.spark
def test_packed_stages_and_top_k_emit_the_local_runners_changes_after_every_batch(spark):
    flow = toy_with_top_k()
    local = LocalRunner(flow)
    with PackedRunner(flow, spark=spark) as on_spark:
        for number, batch in enumerate(with_scores(seed=11, count=5)):
            expected = local.apply(batch)
            assert any(len(row) == TOP for row, _ in expected), f"batch {number}: the top-k changes nothing"
            assert Counter(on_spark.apply(batch)) == Counter(expected), f"batch {number}"


def test_the_top_k_processor_keeps_a_bounded_buffer_and_emits_the_stages_changes(monkeypatch):
    """Without a JVM (TwsTester): 40 batches that insert and delete many rows, mostly from the top,
    so the buffer is trimmed and refilled; the output must equal ``TopKStage.process`` every batch."""
    rng = random.Random(7)
    stage = TopKStage("top", ((itemgetter(1), False),), 3, ("id", "score"), StageDescription("TopK"))
    tester = TwsTester(TopKProcessor(StageNode(0, stage, downstream=None), None))
    live: list[tuple[int, int]] = []
    state = None
    refills = []
    trimmed = False
    refill = TopKProcessor._refill
    monkeypatch.setattr(TopKProcessor, "_refill", lambda self: refills.append(1) or refill(self))
    monkeypatch.setattr(TopKProcessor, "ROW_CHUNKS", 3)  # several rows per chunk
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
        assert buffered <= TopKProcessor.TRIM_FACTOR * stage.count or best[2]
        trimmed = trimmed or (best is not None and not best[2])
    assert trimmed and refills, "the run never trimmed or never refilled the buffer: it tested too little"
