"""Benchmark: how one keyed stage should sit on ``transformWithState`` (state layout and API).

One real stage (a ring aggregate: SUM and COUNT by ``k``) runs as a streaming query per strategy, fed
by parquet files of the rows its layout reads (``ROW_SCHEMA`` or packed), four micro-batches each:

    cold   ``--changes`` changes over ``--keys`` keys (first batch: worker and RocksDB start-up)
    big    ``--changes`` changes over ``--keys`` keys, all keys already present (warm)
    mid    a tenth of the keys, one change each
    tiny   ``--tiny`` keys, one change each: the fixed cost of a warm micro-batch

Per-key cost is the slope (big − tiny) / (keys − tiny), and the same from the mid batch (which
shows what chunking costs when a batch touches a tenth of the keys). Every batch's output row count is checked
against the local run of the same stage (``run_keyed``), so a strategy that loses rows shows.

With ``--stage top-k`` the stage is a top 10 keyed by a constant instead, over fresh inserts (the
state grows to 2·``--changes`` rows): ``row-key`` re-pickles the whole state every batch, ``packed``
runs ``TopKProcessor`` (a MapState by chunk of rows plus a bounded buffer).

Strategies (all with the runner's session, ``make_spark_session``, 2 cores); the runner's layout is
``packed`` (operators/runtime/spark_stage_processors.py), the others are in spark_layouts.py:
  row-key      the runner's former layout: Row API, ``groupBy(key)``, ValueState of the pickled state
  row-bucket   Row API, ``groupBy(bucket)``, MapState(key text → pickled state) per bucket, for
               several bucket counts
  row-bucket C=… as row-bucket, the MapState by chunk of keys (chunk → pickled dict of states)
  packed       the runner's: the chunked layout on packed rows, one Spark row per (stage, bucket)
               holding the pickled list of its changes (``PACKED_SCHEMA``), in and out
  pandas-key   ``transformWithStateInPandas``, ``groupBy(key)``, ValueState
  pandas-bucket ``transformWithStateInPandas``, ``groupBy(bucket)``, MapState
  …-notrack    as above with ``spark.sql.streaming.stateStore.rocksdb.trackTotalNumberOfRows=false``
               (RocksDB otherwise reads every key before writing it, to count rows)

    python examples/benchmarks/spark_state_access.py --keys 50000 --changes 100000

Not a test: nothing asserts but the row counts; the machine is shared and noisy, so compare strategies
within one run, not across runs.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import tempfile
import time
from operator import itemgetter
from pathlib import Path
from typing import NamedTuple

import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from examples.benchmarks.spark_layouts import (  # noqa: E402
    ARROW_SCHEMA,
    ROW_SCHEMA,
    PandasBucketProcessor,
    PandasKeyProcessor,
    RowBucketProcessor,
    RowKeyProcessor,
    row_records,
    with_bucket,
)
from operators.runtime.dataflow import StageNode  # noqa: E402
from operators.runtime.spark_edges import (  # noqa: E402
    BUCKET_COLUMN,
    PACKED_ARROW_SCHEMA,
    PACKED_SCHEMA,
    key_text,
    pack,
    unpack,
)
from operators.runtime.spark_session import make_spark_session  # noqa: E402
from operators.runtime.spark_stage_processors import packed_layout  # noqa: E402
from operators.stages.aggregate import AggregateSpec, RingAggregateStage  # noqa: E402
from operators.stages.base import Change, StageDescription, run_keyed  # noqa: E402
from operators.stages.top_k import TopKStage  # noqa: E402

TRACK_ROWS = "spark.sql.streaming.stateStore.rocksdb.trackTotalNumberOfRows"


def aggregate_node() -> StageNode:
    stage = RingAggregateStage(
        ("k",), (itemgetter(0),), (AggregateSpec("sum", itemgetter(1)), AggregateSpec("count", None)),
        finish=lambda row: row, output_columns=("k", "total", "n"),
    )
    return StageNode(0, stage, downstream=None)


def top_k_node() -> StageNode:
    """ORDER BY score DESC, id LIMIT 10: one key, so its whole state is one value under row-key."""
    stage = TopKStage("top 10", ((itemgetter(1), False), (itemgetter(0), True)), 10, ("id", "score"),
                      StageDescription("TopK"))
    return StageNode(0, stage, downstream=None)


def top_k_batches(changes: int, tiny: int, seed: int = 0) -> list[tuple[str, list[Change]]]:
    """Inserts of fresh (id, score) rows: the state grows to 2·``changes`` rows, all under one key."""
    rng = random.Random(seed)
    ids = iter(range(10**9))

    def inserts(count: int) -> list[Change]:
        # one row beats every earlier one, so each batch changes the top 10 (and its output is checked)
        best = Change(0, (next(ids), 10**6 + next(ids)), 1)
        return [best] + [Change(0, (next(ids), rng.randrange(10**6)), 1) for _ in range(count - 1)]

    return [("cold", inserts(changes)), ("big", inserts(changes)), ("mid", inserts(changes // 10)),
            ("tiny", inserts(tiny))]


def make_batches(keys: int, changes: int, tiny: int, seed: int = 0) -> list[tuple[str, list[Change]]]:
    """Inserts only (a ring aggregate takes any weight), so every batch is valid on its own."""
    rng = random.Random(seed)

    def spread(count: int, over: int) -> list[Change]:
        # every key at least once, the rest at random: exactly ``over`` distinct keys
        picks = list(range(over)) + [rng.randrange(over) for _ in range(count - over)]
        return [Change(0, (k, rng.randrange(1, 100)), 1) for k in picks]

    return [("cold", spread(changes, keys)), ("big", spread(changes, keys)),
            ("mid", spread(keys // 10, keys // 10)), ("tiny", spread(tiny, tiny))]


def expected_output_counts(node: StageNode, batches: list[tuple[str, list[Change]]]) -> list[int]:
    states: dict = {}
    return [len(run_keyed(node.stage, states, changes)) for _, changes in batches]


def build(strategy: str, buckets: int, node: StageNode, source, chunks: int | None = None):
    if strategy == "row-key":
        return source.groupBy("key").transformWithState(RowKeyProcessor(node, None), ROW_SCHEMA, "Append", "None")
    if strategy == "row-bucket":
        return (with_bucket(source, buckets).groupBy(BUCKET_COLUMN)
                .transformWithState(RowBucketProcessor(node, None, buckets, chunks), ROW_SCHEMA, "Append", "None"))
    if strategy == "packed":
        return packed_layout(source, node, None, buckets, chunks)
    if strategy == "pandas-key":
        return source.groupBy("key").transformWithStateInPandas(PandasKeyProcessor(node, None), ROW_SCHEMA, "Append", "None")
    if strategy == "pandas-bucket":
        return (with_bucket(source, buckets).groupBy(BUCKET_COLUMN)
                .transformWithStateInPandas(PandasBucketProcessor(node, None), ROW_SCHEMA, "Append", "None"))
    raise ValueError(strategy)


class Strategy(NamedTuple):
    label: str
    api: str  # row-key, row-bucket, pandas-key, pandas-bucket
    buckets: int = 0
    chunks: int | None = None
    track_rows: bool = True


def run_strategy(spark, strategy: Strategy, node: StageNode, batches, expected: list[int],
                 work: Path) -> dict[str, float]:
    key_of = node.stage.key_function(0)
    source_dir, staging, checkpoint = work / "source", work / "staging", work / "checkpoint"
    for directory in (source_dir, staging):
        directory.mkdir(parents=True)
    spark.conf.set(TRACK_ROWS, str(strategy.track_rows).lower())
    counts: dict[int, int] = {}
    packed = strategy.api == "packed"

    def count(frame, batch_id: int) -> None:
        if packed:
            counts[batch_id] = sum(len(unpack(c)) for c in frame.select("changes").toArrow()["changes"].to_pylist())
        else:
            counts[batch_id] = frame.count()

    schema = PACKED_SCHEMA if packed else ROW_SCHEMA
    source = spark.readStream.schema(schema).option("maxFilesPerTrigger", 1).parquet(str(source_dir))
    query = (build(strategy.api, strategy.buckets, node, source, strategy.chunks).writeStream
             .foreachBatch(count).option("checkpointLocation", str(checkpoint)).start())
    timings = {}
    try:
        for number, (name, changes) in enumerate(batches):
            addressed = ((0, key_text(key_of(c.row)), c.port, c.row, c.weight) for c in changes)
            if packed:
                table = pa.Table.from_pylist(pack(addressed, strategy.buckets), schema=PACKED_ARROW_SCHEMA)
            else:
                table = pa.Table.from_pylist(row_records(addressed), schema=ARROW_SCHEMA)
            file = f"batch-{number:04d}.parquet"
            pq.write_table(table, staging / file)
            started = time.perf_counter()
            os.rename(staging / file, source_dir / file)
            query.processAllAvailable()
            timings[name] = time.perf_counter() - started
            if counts.get(number) != expected[number]:
                raise AssertionError(f"{strategy.label}: batch {name} emitted {counts.get(number)} rows, "
                                     f"the local run {expected[number]}")
    finally:
        query.stop()
        spark.conf.set(TRACK_ROWS, "true")
    return timings


STRATEGIES = (
    Strategy("row-key", "row-key"),
    Strategy("row-bucket B=16", "row-bucket", 16),
    Strategy("row-bucket B=256", "row-bucket", 256),
    Strategy("row-bucket B=4096", "row-bucket", 4096),
    Strategy("row-bucket B=256 C=4", "row-bucket", 256, 4),
    Strategy("row-bucket B=256 C=16", "row-bucket", 256, 16),
    Strategy("row-bucket B=256 C=64", "row-bucket", 256, 64),
    Strategy("row-bucket B=256 notrack", "row-bucket", 256, track_rows=False),
    Strategy("row-bucket B=256 C=16 notrack", "row-bucket", 256, 16, track_rows=False),
    Strategy("row-key notrack", "row-key", track_rows=False),
    Strategy("packed B=256 C=16", "packed", 256, 16),
    Strategy("packed B=64 C=64", "packed", 64, 64),
    Strategy("packed B=256 C=16 notrack", "packed", 256, 16, track_rows=False),
    Strategy("packed B=64 C=64 notrack", "packed", 64, 64, track_rows=False),
    Strategy("pandas-bucket B=256", "pandas-bucket", 256),
    Strategy("pandas-key", "pandas-key"),
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=50_000)
    parser.add_argument("--changes", type=int, default=100_000)
    parser.add_argument("--tiny", type=int, default=10)
    parser.add_argument("--stage", choices=("aggregate", "top-k"), default="aggregate",
                        help="top-k: a constant-keyed top 10 over --changes inserts per big batch (keys unused)")
    parser.add_argument("--only", nargs="*", help="labels of strategies to run (default: all)")
    args = parser.parse_args()
    spark = make_spark_session(app="spark-state-access")
    if args.stage == "top-k":
        node, batches = top_k_node(), top_k_batches(args.changes, args.tiny)
    else:
        node, batches = aggregate_node(), make_batches(args.keys, args.changes, args.tiny)
    expected = expected_output_counts(node, batches)
    # what a big batch touches: distinct keys, or for the constant-keyed top-k distinct rows
    touched = args.changes if args.stage == "top-k" else args.keys
    print(f"{args.stage}: {args.changes} changes over {touched} keys (top-k: rows) per big batch; "
          f"output rows per batch {expected}")
    print(f"{'strategy':30} {'cold s':>7} {'big s':>7} {'mid s':>7} {'tiny s':>7} {'µs/key big':>10} {'µs/key mid':>10}")
    root = Path(tempfile.mkdtemp(prefix="spark-state-access-"))
    try:
        for number, strategy in enumerate(STRATEGIES):
            if args.only and strategy.label not in args.only:
                continue
            t = run_strategy(spark, strategy, node, batches, expected, root / str(number))
            per_key_big = (t["big"] - t["tiny"]) / (touched - args.tiny) * 1e6
            per_key_mid = (t["mid"] - t["tiny"]) / (touched // 10 - args.tiny) * 1e6
            print(f"{strategy.label:30} {t['cold']:7.2f} {t['big']:7.2f} {t['mid']:7.2f} {t['tiny']:7.2f} "
                  f"{per_key_big:10.1f} {per_key_mid:10.1f}", flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)
        spark.stop()


if __name__ == "__main__":
    main()
