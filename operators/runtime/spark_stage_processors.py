"""Faster layouts of keyed stages under ``transformWithState``: buckets of keys, chunks, packed rows.

The runner's ``StageProcessor`` makes every distinct stage key its own Spark group with its own
ValueState. Per key pyspark's Row API then pays three socket round trips to the JVM state server
(set the implicit key, ``get``, ``update``), an Arrow record batch for the key's output
(``RecordBatch.from_pylist`` per group, in ``pyspark/worker.py``), and a cell-by-cell conversion of
every input row and a ``Row`` and a dict per output row. Three layouts cut those costs; all keep the
state O(changed) per batch (examples/benchmarks/spark_state_access.py measures them side by side):

- **Buckets** (``BucketedStageProcessor``, ``run_bucketed``): Spark groups by ``bucket = crc32(key
  text) mod buckets``; the processor regroups a bucket's rows by key text. With ``chunks=None`` each
  key's state is one entry of the bucket's MapState (key text → pickled state): two round trips per
  touched key, no per-key group. Input and output keep ``ROW_SCHEMA``; ``with_bucket`` adds the
  grouping column in Spark from ``key``, so it drops into today's plumbing.
- **Chunks** (same class, ``chunks=n``): the MapState holds one entry per chunk of a bucket's keys
  (chunk → pickled dict of key text → state); a batch reads and writes each touched chunk once, so
  round trips fall to two per touched chunk, at the price of (un)pickling a chunk's untouched keys.
- **Packed rows** (``PackedStageProcessor``, ``run_packed``, ``PACKED_SCHEMA``): chunks, and one
  Spark row per (destination stage, bucket) carrying the pickled list of its changes, in and out, so
  the per-row conversions vanish. The upstream fills ``bucket`` itself: ``pack`` does it, with the
  same CRC-32 of the key text (the result's rows go to bucket 0); a source writes ``pack``ed rows.

The bucket and chunk counts are part of the state layout: a checkpoint must be resumed with the same
counts.

Stages keyed by a constant keep one state object for the whole stage, which a one-value layout
re-pickles every batch. ``TopKProcessor`` is the layout for top-k: the multiset of rows in a MapState
by row (written per changed row) and a bounded buffer of the best rows (O(k)); see its docstring.
The same split applies to the other constant-keyed stages (not built): the durable state is a
MapState by sub-key (an RPAI tree's inner key → its aggregate; a threshold stage's value → count),
and the ordered structure computed over it is either bounded (as the top-k buffer) or rebuilt from the
map when missing from a worker-side cache validated by a token the batch writes next to the map.
"""

from __future__ import annotations

import os
import pickle
import zlib
from collections.abc import Callable, Iterable, Iterator
from functools import reduce
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import Column, DataFrame
from pyspark.sql.functions import col, crc32, lit, pmod
from pyspark.sql.streaming import StatefulProcessor, StatefulProcessorHandle, StreamingQuery
from pyspark.sql.streaming.stateful_processor import TimerValues
from pyspark.sql.types import Row as SparkRow
from sortedcontainers import SortedDict

from operators.runtime.dataflow import Dataflow, StageNode
from operators.runtime.spark_runner import (
    PICKLE_PROTOCOL,
    RESULT,
    ROW_SCHEMA,
    SparkRunner,
    key_text,
    state_name,
)
from operators.stages.base import Change
from operators.stages.top_k import TopKStage
from operators.zset import Changelog, Row, consolidate

#: Buckets (Spark groups) per stage: many more than shuffle partitions so the groups spread, few
#: enough that the per-group toll is paid a few hundred times per batch (see the benchmark).
DEFAULT_BUCKETS = 256
BUCKET_COLUMN = "bucket"
#: Chunks of keys per bucket, each one MapState entry. A batch that touches a key (un)pickles its whole
#: chunk, so keys per chunk (state keys / (buckets · chunks)) should stay within ~3–50: 256 · 64 chunks
#: suit states of 50 000–800 000 keys. Larger states need more chunks (not adaptive yet).
DEFAULT_CHUNKS = 64
#: Many changes per Spark row: the pickled list of (key text, port, row, weight) of one (stage, bucket).
PACKED_SCHEMA = f"stage int, {BUCKET_COLUMN} int, changes binary"
PACKED_ARROW_SCHEMA = pa.schema([("stage", pa.int32()), (BUCKET_COLUMN, pa.int32()), ("changes", pa.binary())])


def bucket_column(buckets: int = DEFAULT_BUCKETS) -> Column:
    """The bucket of a ``key`` column: CRC-32 of its UTF-8 bytes, modulo ``buckets``."""
    return pmod(crc32(col("key").cast("binary")), lit(buckets)).cast("int")


def with_bucket(stage_input: DataFrame, buckets: int = DEFAULT_BUCKETS) -> DataFrame:
    """A stage's input (``ROW_SCHEMA`` rows) with the bucket column the processor is grouped by."""
    return stage_input.withColumn(BUCKET_COLUMN, bucket_column(buckets))


def run_bucketed(stage_input: DataFrame, node: StageNode, downstream: StageNode | None,
                 buckets: int = DEFAULT_BUCKETS, chunks: int | None = None) -> DataFrame:
    """``stage_input`` (``ROW_SCHEMA``) through ``node``'s stage, one Spark group per bucket; the
    drop-in replacement for the runner's ``groupBy("key").transformWithState(StageProcessor(...))``."""
    return (
        with_bucket(stage_input, buckets)
        .groupBy(BUCKET_COLUMN)
        .transformWithState(BucketedStageProcessor(node, downstream, buckets, chunks), ROW_SCHEMA, "Append", "None")
    )


def stage_chain(dataflow: Dataflow, source: DataFrame,
                run_stage: Callable[[DataFrame, StageNode, StageNode | None], DataFrame]) -> DataFrame:
    """The dataflow as one streaming DataFrame of result rows addressed to ``RESULT``.

    ``source`` holds the routed base-table changes of every stage; each stage reads its own rows of it
    unioned with the outputs of the stages feeding it and runs through ``run_stage``, so the layout of
    a stage is a choice made per stage.
    """
    routed_stages = {route.stage for route in dataflow.sources}
    feeds: dict[int, list[DataFrame]] = {}
    results: list[DataFrame] = []
    for node in dataflow.stages:
        inputs = feeds.pop(node.id, [])
        if node.id in routed_stages:
            inputs.insert(0, source.where(col("stage") == node.id))
        if not inputs:
            raise ValueError(f"stage {node.id} ({node.stage.name}) has no input: "
                             "no source route ends at it and no stage feeds it")
        downstream = None if node.downstream is None else dataflow.stage(node.downstream)
        output = run_stage(reduce(DataFrame.unionByName, inputs), node, downstream)
        (results if downstream is None else feeds.setdefault(downstream.id, [])).append(output)
    return reduce(DataFrame.unionByName, results)


class BucketedStageProcessor(StatefulProcessor):
    """Runs one ``KeyedStage`` over the keys of a bucket; their states in the bucket's MapState.

    With ``chunks`` None the map holds one entry per key (key text → pickled state). With a chunk
    count it holds one entry per chunk of keys (chunk → pickled dict of key text → state), where
    ``chunk_of`` spreads a bucket's keys over ``chunks`` chunks: fewer state calls per batch when a
    batch touches many keys, at the price of (un)pickling the chunk's untouched keys too.
    """

    def __init__(self, node: StageNode, downstream: StageNode | None, buckets: int = DEFAULT_BUCKETS,
                 chunks: int | None = None):
        self.node = node
        self.downstream = downstream
        self.buckets = buckets
        self.chunks = chunks

    def init(self, handle: StatefulProcessorHandle) -> None:
        user_key = "key string" if self.chunks is None else "chunk int"
        self.states = handle.getMapState(state_name(self.node.id), user_key, "state binary")
        self.address = output_address(self.node, self.downstream)
        self.downstream_key = downstream_key_text(self.node, self.downstream)

    def handleInputRows(self, key: Any, rows: Iterator[SparkRow], timerValues: TimerValues) -> Iterator[SparkRow]:
        by_key: dict[str, list[Change]] = {}
        for row in rows:
            change = Change(row.port, pickle.loads(row.row), row.w)
            by_key.setdefault(row.key, []).append(change)
        if self.chunks is None:
            emitted = process_keys(self.node, self.states, by_key)
        else:
            emitted = process_chunks(self.node, self.states, by_key, self.buckets, self.chunks)
        destination, port = self.address
        downstream_key = self.downstream_key
        # Built eagerly: state calls act on the implicit key, which is only set during this call.
        return iter([
            SparkRow(stage=destination, key=downstream_key(row), port=port,
                     row=pickle.dumps(row, PICKLE_PROTOCOL), w=weight)
            for row, weight in emitted
        ])

    def close(self) -> None:
        pass


class PackedStageProcessor(StatefulProcessor):
    """``BucketedStageProcessor`` by chunk, on *packed* rows (``PACKED_SCHEMA``): one Spark row per
    (destination stage, bucket) per task, holding the pickled list of its changes.

    The Row API converts every input row cell by cell and builds a ``Row`` and a dict per output row;
    for small changes that costs more than the stage itself. Packed, a micro-batch moves a few
    hundred Spark rows per stage and each change is one element of a pickled list.
    """

    def __init__(self, node: StageNode, downstream: StageNode | None, buckets: int = DEFAULT_BUCKETS,
                 chunks: int = DEFAULT_CHUNKS):
        self.node = node
        self.downstream = downstream
        self.buckets = buckets
        self.chunks = chunks

    def init(self, handle: StatefulProcessorHandle) -> None:
        self.states = handle.getMapState(state_name(self.node.id), "chunk int", "state binary")
        self.address = output_address(self.node, self.downstream)
        self.downstream_key = downstream_key_text(self.node, self.downstream)

    def handleInputRows(self, key: Any, rows: Iterator[SparkRow], timerValues: TimerValues) -> Iterator[SparkRow]:
        by_key: dict[str, list[Change]] = {}
        for packed in rows:
            for text, port, row, weight in unpack(packed.changes):
                by_key.setdefault(text, []).append(Change(port, row, weight))
        emitted = process_chunks(self.node, self.states, by_key, self.buckets, self.chunks)
        destination, port = self.address
        downstream_key = self.downstream_key
        addressed = ((destination, downstream_key(row), port, row, weight) for row, weight in emitted)
        return iter([SparkRow(**record) for record in pack(addressed, self.buckets)])

    def close(self) -> None:
        pass


def pack(changes: Iterable[tuple[int, str, int, Row, int]], buckets: int = DEFAULT_BUCKETS) -> list[dict[str, Any]]:
    """Rows of ``PACKED_SCHEMA`` from (stage, key text, port, row, weight): one per (stage, bucket of
    the key); the result's rows all go to bucket 0. What a source writes and a packed stage emits. A
    key's state lives in its bucket's group, so every writer into a stage must use the same ``buckets``."""
    groups: dict[tuple[int, int], list[tuple[str, int, Row, int]]] = {}
    for stage, key, port, row, weight in changes:
        bucket = 0 if stage == RESULT else zlib.crc32(key.encode()) % buckets
        groups.setdefault((stage, bucket), []).append((key, port, row, weight))
    return [{"stage": stage, "bucket": bucket, "changes": pickle.dumps(packed, PICKLE_PROTOCOL)}
            for (stage, bucket), packed in groups.items()]


def unpack(changes: bytes) -> list[tuple[str, int, Row, int]]:
    """The (key text, port, row, weight) changes of one packed row."""
    return pickle.loads(changes)


def run_packed(stage_input: DataFrame, node: StageNode, downstream: StageNode | None,
               buckets: int = DEFAULT_BUCKETS, chunks: int = DEFAULT_CHUNKS) -> DataFrame:
    """Packed rows (``PACKED_SCHEMA``) through ``node``'s stage, one Spark group per bucket."""
    processor = PackedStageProcessor(node, downstream, buckets, chunks)
    return stage_input.groupBy(BUCKET_COLUMN).transformWithState(processor, PACKED_SCHEMA, "Append", "None")


def output_address(node: StageNode, downstream: StageNode | None) -> tuple[int, int]:
    """(stage id, port) the stage's output rows go to; ``RESULT`` for the last stage."""
    return (RESULT, 0) if downstream is None else (downstream.id, node.downstream_port)


def downstream_key_text(node: StageNode, downstream: StageNode | None) -> Callable[[Row], str]:
    """The key text of an output row at the stage it goes to ("" for the result)."""
    if downstream is None:
        return lambda row: ""
    key_of = downstream.stage.key_function(node.downstream_port)
    return lambda row: key_text(key_of(row))


def chunk_of(key: str, buckets: int, chunks: int) -> int:
    """The chunk of a key text within its bucket: the CRC-32 bits above the bucket's, so a bucket's
    keys spread over all its chunks."""
    return zlib.crc32(key.encode()) // buckets % chunks


def process_chunks(node: StageNode, chunk_states: Any, by_key: dict[str, list[Change]], buckets: int,
                   chunks: int) -> list[tuple[Row, int]]:
    """``stage.process`` once per key text of a bucket, reading and writing the bucket's MapState
    ``chunk_states`` once per touched chunk; returns the stage's output rows."""
    by_chunk: dict[int, list[str]] = {}
    for text in by_key:
        by_chunk.setdefault(chunk_of(text, buckets, chunks), []).append(text)
    stage = node.stage
    emitted: list[tuple[Row, int]] = []
    for chunk, texts in by_chunk.items():
        user_key = (chunk,)
        stored = chunk_states.getValue(user_key)
        states: dict[str, Any] = {} if stored is None else pickle.loads(stored[0])
        for text in texts:
            changes = by_key[text]
            first = changes[0]
            new_state, output = stage.process(stage.key_of(first.port, first.row), states.get(text), changes)
            if new_state is None:
                states.pop(text, None)
            else:
                states[text] = new_state
            emitted.extend(output)
        if states:
            chunk_states.updateValue(user_key, (pickle.dumps(states, PICKLE_PROTOCOL),))
        elif stored is not None:
            chunk_states.removeKey(user_key)
    return emitted


def process_keys(node: StageNode, states: Any, by_key: dict[str, list[Change]]) -> list[tuple[Row, int]]:
    """``stage.process`` once per key text of a bucket, reading and writing only those keys of the
    bucket's MapState ``states``; returns the stage's output rows."""
    stage = node.stage
    emitted: list[tuple[Row, int]] = []
    for text, changes in by_key.items():
        user_key = (text,)
        stored = states.getValue(user_key)
        old_state = None if stored is None else pickle.loads(stored[0])
        # The grouping text is only text; the stage wants the tuple, which any of its rows gives back.
        first = changes[0]
        new_state, output = stage.process(stage.key_of(first.port, first.row), old_state, changes)
        if new_state is not None:
            states.updateValue(user_key, (pickle.dumps(new_state, PICKLE_PROTOCOL),))
        elif stored is not None:
            states.removeKey(user_key)
        emitted.extend(output)
    return emitted


class TopKProcessor(StatefulProcessor):
    """A ``TopKStage`` (keyed by a constant) whose batch touches O(changed + k) state, not O(all rows).

    The stage's own state is a SortedList of every input row, re-pickled whole each batch under the
    generic processors. Here the one key holds two state variables instead:

    - ``rows``, a MapState chunk → pickled dict row → multiplicity: the multiset of all input rows in
      ``ROW_CHUNKS`` chunks (by CRC-32 of the row's ``key_text``), read and written once per chunk a
      batch changes (one entry per row measured 110 µs per changed row: two state calls each);
    - ``best``, a ValueState of the *buffer*: every row whose order entry is ≤ ``bound``, with its
      multiplicity, kept between k and ``TRIM_FACTOR``·k rows (or all rows, when ``complete``).

    The top k is the head of the buffer. A change beyond ``bound`` touches only ``rows``. When deletes
    leave fewer than k rows in an incomplete buffer, it is refilled from a full scan of ``rows`` to its
    ``REFILL_FACTOR``·k smallest rows: O(all rows), but only after ~k deletes from the top since the last
    refill. Ties and order follow ``TopKStage.order_key`` exactly, so the output equals the stage's.
    """

    REFILL_FACTOR = 2
    TRIM_FACTOR = 4
    ROW_CHUNKS = 4096

    def __init__(self, node: StageNode, downstream: StageNode | None, buckets: int = DEFAULT_BUCKETS):
        self.node = node
        self.downstream = downstream
        self.buckets = buckets

    def init(self, handle: StatefulProcessorHandle) -> None:
        name = state_name(self.node.id)
        self.rows = handle.getMapState(f"{name}_rows", "chunk int", "rows binary")
        self.best = handle.getValueState(f"{name}_best", "buffer binary, bound binary, complete boolean")
        self.address = output_address(self.node, self.downstream)
        self.downstream_key = downstream_key_text(self.node, self.downstream)

    def handleInputRows(self, key: Any, rows: Iterator[SparkRow], timerValues: TimerValues) -> Iterator[SparkRow]:
        stage, count = self.node.stage, self.node.stage.count
        net = consolidate((row, weight) for packed in rows for _, _, row, weight in unpack(packed.changes))
        # Order entries first: evaluating a sort key may raise, and then nothing may have changed.
        entries = [((stage.order_key(row), row), weight) for row, weight in net]
        buffer, bound, complete = self._load_buffer()
        before = head(buffer, count)
        self._count(net)
        for (entry, weight) in entries:
            if complete or entry <= bound:
                multiplicity = buffer.get(entry, 0) + weight
                if multiplicity:
                    buffer[entry] = multiplicity
                else:
                    del buffer[entry]
        if not complete and sum(buffer.values()) < count:
            buffer, bound, complete = self._refill()
        elif sum(buffer.values()) > self.TRIM_FACTOR * count:
            bound, complete = trim(buffer, self.REFILL_FACTOR * count), False
        self._store_buffer(buffer, bound, complete)
        emitted = consolidate([*((row, -1) for row in before), *((row, 1) for row in head(buffer, count))])
        destination, port = self.address
        addressed = ((destination, self.downstream_key(row), port, row, weight) for row, weight in emitted)
        return iter([SparkRow(**record) for record in pack(addressed, self.buckets)])

    def _count(self, changes: Changelog) -> None:
        """Add the weighted rows to the multiset ``rows``, one read and one write per touched chunk."""
        by_chunk: dict[int, Changelog] = {}
        for row, weight in changes:
            by_chunk.setdefault(zlib.crc32(key_text(row).encode()) % self.ROW_CHUNKS, []).append((row, weight))
        for chunk, chunk_changes in by_chunk.items():
            stored = self.rows.getValue((chunk,))
            counts: dict[Row, int] = {} if stored is None else pickle.loads(stored[0])
            for row, weight in chunk_changes:
                multiplicity = counts.pop(row, 0) + weight
                if multiplicity < 0:
                    raise ValueError(f"{self.node.stage.name}: delete of absent row {row!r}")
                if multiplicity:
                    counts[row] = multiplicity
            if counts:
                self.rows.updateValue((chunk,), (pickle.dumps(counts, PICKLE_PROTOCOL),))
            elif stored is not None:
                self.rows.removeKey((chunk,))

    def _load_buffer(self) -> tuple[SortedDict, tuple | None, bool]:
        stored = self.best.get()
        if stored is None:
            return SortedDict(), None, True
        order_key = self.node.stage.order_key
        buffer = SortedDict(((order_key(row), row), n) for row, n in pickle.loads(stored[0]))
        bound_row = pickle.loads(stored[1])
        return buffer, None if bound_row is None else (order_key(bound_row), bound_row), stored[2]

    def _store_buffer(self, buffer: SortedDict, bound: tuple | None, complete: bool) -> None:
        if complete and not buffer:
            self.best.clear()
            return
        listed = [(row, n) for (_, row), n in buffer.items()]
        bound_row = None if bound is None else bound[1]
        self.best.update((pickle.dumps(listed, PICKLE_PROTOCOL), pickle.dumps(bound_row, PICKLE_PROTOCOL), complete))

    def _refill(self) -> tuple[SortedDict, tuple | None, bool]:
        """The buffer rebuilt from every row: the smallest ``REFILL_FACTOR``·k, or all of them."""
        order_key = self.node.stage.order_key
        buffer = SortedDict()
        for _, (chunk,) in self.rows.iterator():
            for row, multiplicity in pickle.loads(chunk).items():
                buffer[(order_key(row), row)] = multiplicity
        if sum(buffer.values()) <= self.REFILL_FACTOR * self.node.stage.count:
            return buffer, None, True
        return buffer, trim(buffer, self.REFILL_FACTOR * self.node.stage.count), False

    def close(self) -> None:
        pass


def head(buffer: SortedDict, count: int) -> list[Row]:
    """The first ``count`` rows of a buffer, repeated by multiplicity."""
    rows: list[Row] = []
    for (_, row), multiplicity in buffer.items():
        if len(rows) >= count:
            break
        rows.extend([row] * multiplicity)
    return rows[:count]


def trim(buffer: SortedDict, keep: int) -> tuple:
    """Drop the largest entries of ``buffer`` while at least ``keep`` rows remain; the new bound (the
    largest entry kept). Whole entries go, so the buffer still holds every copy of a row ≤ the bound."""
    total = sum(buffer.values())
    while total - buffer.peekitem(-1)[1] >= keep:
        total -= buffer.popitem(-1)[1]
    return buffer.peekitem(-1)[0]


def run_top_k(stage_input: DataFrame, node: StageNode, downstream: StageNode | None,
              buckets: int = DEFAULT_BUCKETS) -> DataFrame:
    """Packed rows (``PACKED_SCHEMA``) through a ``TopKStage`` with the O(changed + k) layout above (its
    one key's rows all arrive in one bucket)."""
    processor = TopKProcessor(node, downstream, buckets)
    return stage_input.groupBy(BUCKET_COLUMN).transformWithState(processor, PACKED_SCHEMA, "Append", "None")


def packed_layout(stage_input: DataFrame, node: StageNode, downstream: StageNode | None,
                  buckets: int = DEFAULT_BUCKETS, chunks: int = DEFAULT_CHUNKS) -> DataFrame:
    """The layout of a stage on packed rows: top-k by its buffer, every other stage by chunks."""
    if isinstance(node.stage, TopKStage):
        return run_top_k(stage_input, node, downstream, buckets)
    return run_packed(stage_input, node, downstream, buckets, chunks)


class PackedSparkRunner(SparkRunner):
    """``SparkRunner`` with every stage on packed rows (``packed_layout``): the same ``apply``, input
    files of ``pack``ed rows, results unpacked. A bridge that overrides the runner's query, input and
    sink methods until the runner itself adopts packed rows; its ``state_size`` counts chunks, not keys.
    """

    buckets = DEFAULT_BUCKETS
    chunks = DEFAULT_CHUNKS

    def _start_query(self) -> StreamingQuery:
        source = self.spark.readStream.schema(PACKED_SCHEMA).option("maxFilesPerTrigger", 1).parquet(str(self.source_dir))
        chain = stage_chain(self.dataflow, source,
                            lambda rows, node, down: packed_layout(rows, node, down, self.buckets, self.chunks))
        return (chain.writeStream.foreachBatch(self._collect_result)
                .option("checkpointLocation", str(self.checkpoint_dir)).start())

    def _write_input_file(self, records: list[dict[str, Any]]) -> None:
        packed = pack(((r["stage"], r["key"], r["port"], pickle.loads(r["row"]), r["w"]) for r in records),
                      self.buckets)
        name = f"batch-{self._files_written:09d}.parquet"
        pq.write_table(pa.Table.from_pylist(packed, schema=PACKED_ARROW_SCHEMA), self.staging_dir / name)
        os.rename(self.staging_dir / name, self.source_dir / name)
        self._files_written += 1

    def _collect_result(self, batch: DataFrame, batch_id: int) -> None:
        packed = batch.select("changes").toArrow().column("changes").to_pylist()
        self._results[batch_id] = [(row, weight) for changes in packed for _, _, row, weight in unpack(changes)]
