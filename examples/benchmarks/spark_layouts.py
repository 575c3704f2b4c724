"""Keyed-stage layouts under ``transformWithState`` that the runner does not use, kept to be measured.

The Spark runner runs every keyed stage on packed rows (operators/runtime/spark_stage_processors.py).
``spark_state_access.py`` compares that layout with the ones here, which all carry one Spark row per
change (``ROW_SCHEMA``: destination stage, key text, port, pickled row, weight):

- ``RowKeyProcessor``: the runner's former layout, Row API, one Spark group and one ValueState per key;
- ``RowBucketProcessor``: Row API, one Spark group per bucket of keys (``with_bucket``), the bucket's
  states in a MapState by key text or, with a chunk count, by chunk (``process_chunks``, the runner's);
- ``PandasKeyProcessor`` and ``PandasBucketProcessor``: the same two under
  ``transformWithStateInPandas``.

Their numbers are in RESULTS.md, "Keyed-stage layouts"; they are why the runner packs its rows.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterable, Iterator
from typing import Any

import pandas as pd
import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql.functions import col, crc32, lit, pmod
from pyspark.sql.streaming import StatefulProcessor, StatefulProcessorHandle
from pyspark.sql.streaming.stateful_processor import TimerValues
from pyspark.sql.types import Row as SparkRow

from operators.runtime.dataflow import StageNode
from operators.runtime.spark_edges import BUCKET_COLUMN, PICKLE_PROTOCOL
from operators.runtime.spark_stage_processors import (
    downstream_key_text,
    output_address,
    process_chunks,
    state_name,
)
from operators.stages.base import Change, KeyedStage
from operators.zset import Row

#: One Spark row per change.
ROW_SCHEMA = "stage int, key string, port int, row binary, w long"
ROW_COLUMNS = ("stage", "key", "port", "row", "w")
ARROW_SCHEMA = pa.schema(
    [("stage", pa.int32()), ("key", pa.string()), ("port", pa.int32()), ("row", pa.binary()), ("w", pa.int64())]
)

#: (key text, port, pickled row, weight): a change as it arrives in one row of ``ROW_SCHEMA``.
Entry = tuple[str, int, bytes, int]


def row_records(changes: Iterable[tuple[int, str, int, Row, int]]) -> list[dict[str, Any]]:
    """Records of ``ROW_SCHEMA`` from (stage, key text, port, row, weight): what a source writes and a
    processor emits."""
    return [{"stage": stage, "key": key, "port": port, "row": pickle.dumps(row, PICKLE_PROTOCOL), "w": weight}
            for stage, key, port, row, weight in changes]


def with_bucket(stage_input: DataFrame, buckets: int) -> DataFrame:
    """``ROW_SCHEMA`` rows with the column a bucketed layout groups by: the CRC-32 of the key text
    modulo ``buckets``, as ``spark_edges.bucket_of`` computes it in Python."""
    return stage_input.withColumn(BUCKET_COLUMN, pmod(crc32(col("key").cast("binary")), lit(buckets)).cast("int"))


def by_key(entries: Iterable[Entry]) -> dict[str, list[Change]]:
    """Changes grouped by key text, rows unpickled."""
    grouped: dict[str, list[Change]] = {}
    for text, port, row, weight in entries:
        grouped.setdefault(text, []).append(Change(port, pickle.loads(row), weight))
    return grouped


def step(stage: KeyedStage, stored: tuple | None, changes: list[Change]) -> tuple[tuple | None, list[tuple[Row, int]]]:
    """``stage.process`` of one key's changes on its stored state (a one-field state row, or None);
    the state row to store (None: clear it) and the output."""
    # The key text is only text; the stage wants the tuple, which any of its rows gives back.
    first = changes[0]
    old_state = None if stored is None else pickle.loads(stored[0])
    new_state, output = stage.process(stage.key_of(first.port, first.row), old_state, changes)
    return (None if new_state is None else (pickle.dumps(new_state, PICKLE_PROTOCOL),)), output


def process_key(stage: KeyedStage, state: Any, changes: list[Change]) -> list[tuple[Row, int]]:
    """One key's changes on its ValueState ``state``: read once, written or cleared once."""
    stored = state.get()
    new_row, output = step(stage, stored, changes)
    if new_row is not None:
        state.update(new_row)
    elif stored is not None:
        state.clear()
    return output


def process_keys(stage: KeyedStage, states: Any, grouped: dict[str, list[Change]]) -> list[tuple[Row, int]]:
    """A bucket's changes on its MapState ``states`` (key text → state): one read and one write or
    removal per key."""
    emitted: list[tuple[Row, int]] = []
    for text, changes in grouped.items():
        stored = states.getValue((text,))
        new_row, output = step(stage, stored, changes)
        if new_row is not None:
            states.updateValue((text,), new_row)
        elif stored is not None:
            states.removeKey((text,))
        emitted.extend(output)
    return emitted


class _Layout(StatefulProcessor):
    """What every layout here shares: the stage, where its output goes, and emitting it as records."""

    def __init__(self, node: StageNode, downstream: StageNode | None):
        self.node = node
        self.downstream = downstream

    def init(self, handle: StatefulProcessorHandle) -> None:
        self.address = output_address(self.node, self.downstream)
        self.downstream_key = downstream_key_text(self.node, self.downstream)

    def records(self, emitted: list[tuple[Row, int]]) -> list[dict[str, Any]]:
        destination, port = self.address
        downstream_key = self.downstream_key
        return row_records((destination, downstream_key(row), port, row, weight) for row, weight in emitted)

    def close(self) -> None:
        pass


class RowKeyProcessor(_Layout):
    """Row API, one Spark group per key: per key three state round trips (set the implicit key, get,
    update) and one Arrow batch of output."""

    def init(self, handle: StatefulProcessorHandle) -> None:
        super().init(handle)
        self.state = handle.getValueState(state_name(self.node.id), "state binary")

    def handleInputRows(self, key: Any, rows: Iterator[SparkRow], timerValues: TimerValues) -> Iterator[SparkRow]:
        (changes,) = by_key((row.key, row.port, row.row, row.w) for row in rows).values()
        emitted = process_key(self.node.stage, self.state, changes)
        # Built eagerly: state calls act on the implicit key, which is only set during this call.
        return iter([SparkRow(**record) for record in self.records(emitted)])


class RowBucketProcessor(_Layout):
    """Row API, one Spark group per bucket (``with_bucket``): with ``chunks`` None a MapState entry per
    key (two round trips per touched key), else one per chunk of keys (two per touched chunk)."""

    def __init__(self, node: StageNode, downstream: StageNode | None, buckets: int, chunks: int | None = None):
        super().__init__(node, downstream)
        self.buckets = buckets
        self.chunks = chunks

    def init(self, handle: StatefulProcessorHandle) -> None:
        super().init(handle)
        user_key = "key string" if self.chunks is None else "chunk int"
        self.states = handle.getMapState(state_name(self.node.id), user_key, "state binary")

    def handleInputRows(self, key: Any, rows: Iterator[SparkRow], timerValues: TimerValues) -> Iterator[SparkRow]:
        grouped = by_key((row.key, row.port, row.row, row.w) for row in rows)
        if self.chunks is None:
            emitted = process_keys(self.node.stage, self.states, grouped)
        else:
            emitted = process_chunks(self.node, self.states, grouped, self.buckets, self.chunks)
        return iter([SparkRow(**record) for record in self.records(emitted)])


def frame_entries(frames: Iterator[pd.DataFrame]) -> Iterator[Entry]:
    """The changes of a group's pandas frames."""
    for frame in frames:
        yield from zip(frame["key"], frame["port"], frame["row"], frame["w"], strict=True)


class PandasKeyProcessor(_Layout):
    """``RowKeyProcessor`` under ``transformWithStateInPandas``."""

    def init(self, handle: StatefulProcessorHandle) -> None:
        super().init(handle)
        self.state = handle.getValueState(state_name(self.node.id), "state binary")

    def handleInputRows(self, key: Any, rows: Iterator[pd.DataFrame], timerValues: TimerValues) -> Iterator[pd.DataFrame]:
        (changes,) = by_key(frame_entries(rows)).values()
        emitted = process_key(self.node.stage, self.state, changes)
        if emitted:
            yield pd.DataFrame(self.records(emitted), columns=ROW_COLUMNS)


class PandasBucketProcessor(_Layout):
    """``RowBucketProcessor`` by key under ``transformWithStateInPandas``."""

    def init(self, handle: StatefulProcessorHandle) -> None:
        super().init(handle)
        self.states = handle.getMapState(state_name(self.node.id), "key string", "state binary")

    def handleInputRows(self, key: Any, rows: Iterator[pd.DataFrame], timerValues: TimerValues) -> Iterator[pd.DataFrame]:
        emitted = process_keys(self.node.stage, self.states, by_key(frame_entries(rows)))
        if emitted:
            yield pd.DataFrame(self.records(emitted), columns=ROW_COLUMNS)
