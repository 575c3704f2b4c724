"""Where an incremental view inside a Spark Declarative Pipeline leaves its results.

A pipeline's flows write tables and sinks, not ``foreachBatch`` functions, so the runner's sink
(``spark_sink.ResultSink`` under ``foreachBatch``) is split in two, each exactly once:

- ``ChangeFeedRows`` (a ``mapInArrow`` function at the end of the view's stateful query) turns the
  packed rows the last stage addresses to the result into typed rows: the result's visible columns
  in their Spark types and ``_weight`` (+n inserts n copies, −n deletes them). The pipeline writes
  them to a streaming table, the view's **change feed**; Spark's file sink commits each micro-batch
  once (its ``_spark_metadata`` log).
- ``ResultTableSink`` (a Python data source, format ``spark_ivm_result``) is the target of a second,
  stateless flow that reads that change feed. Its writer's ``commit(messages, batchId)`` runs once
  per micro-batch on the driver and applies the batch's ± to the result with
  ``ResultSink.commit_changes``, which names each result version by the batch id and builds it from
  the version before that id: a batch re-run after a crash (same id, same input) rewrites the same
  version instead of applying its changes twice. It then publishes the newest version as
  ``part-00000.parquet`` of the **result table's** directory (written under a hidden name and
  renamed over the old one), which a Spark table reads.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path

import attrs
import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql.datasource import (
    DataSource,
    DataSourceStreamArrowWriter,
    DataSourceStreamWriter,
    WriterCommitMessage,
)

from catalog.types import DataType, parse_type
from operators.runtime.result_files import rows_table, unique_names
from operators.runtime.spark_edges import RESULT, unpack
from operators.runtime.spark_sink import INITIAL, ResultSink, table_rows
from operators.zset import consolidate

FORMAT = "spark_ivm_result"
WEIGHT = "_weight"
#: The one file of a result table's directory.
TABLE_FILE = "part-00000.parquet"


def feed_schema(names: Sequence[str], dtypes: Sequence[DataType]) -> str:
    """The DDL schema of a change feed: the result's columns (as ``rows_table`` names them) and ``_weight``."""
    columns = [f"`{name}` {dtype}" for name, dtype in zip(unique_names(names, reserved=[WEIGHT]), dtypes, strict=True)]
    return ", ".join([*columns, f"{WEIGHT} bigint"])


class ChangeFeedRows:
    """``mapInArrow`` function: packed rows addressed to ``RESULT`` → the result's visible columns and
    ``_weight``, consolidated per Arrow batch. A pipeline's view runs under the ``error`` policy, so
    no rejects reach it: an invalid change fails the flow instead."""

    def __init__(self, names: Sequence[str], dtypes: Sequence[DataType]):
        self.names, self.dtypes = tuple(names), tuple(dtypes)

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        width = len(self.names)
        for batch in batches:
            changes = consolidate(
                (row[:width], weight)
                for stage, packed in zip(batch.column("stage").to_pylist(), batch.column("changes").to_pylist(), strict=True)
                if stage == RESULT
                for _, _, row, weight in unpack(packed)
            )
            if changes:
                table = rows_table([row for row, _ in changes], self.names, self.dtypes,
                                   {WEIGHT: [weight for _, weight in changes]})
                yield from table.to_batches()


def result_options(directory: Path, table_dir: Path, names: Sequence[str], dtypes: Sequence[DataType]) -> dict[str, str]:
    """The options of a ``spark_ivm_result`` sink: where the result's versions and its table live."""
    return {"directory": str(directory), "table": str(table_dir), "names": json.dumps(list(names)),
            "types": json.dumps([str(dtype) for dtype in dtypes])}


def result_sink(options: dict[str, str], initial: Sequence[tuple] | None = None) -> ResultSink:
    """The ``ResultSink`` a sink with ``options`` keeps its versions in; ``initial`` (the result over
    empty tables) is given once, by whoever creates the directory, and read back from it afterwards."""
    directory = Path(options["directory"])
    names = json.loads(options["names"])
    dtypes = [parse_type(text) for text in json.loads(options["types"])]
    if initial is None:
        initial = table_rows(pq.read_table(directory / "result" / INITIAL))
    return ResultSink(directory, names, dtypes, initial, keep_outputs=False)


def publish(sink: ResultSink, table_dir: Path) -> None:
    """Make the sink's newest result version the one file of ``table_dir`` (renamed into place)."""
    table_dir.mkdir(parents=True, exist_ok=True)
    staged = table_dir / f".{TABLE_FILE}.tmp"
    shutil.copyfile(sink.current_result_path(), staged)
    os.replace(staged, table_dir / TABLE_FILE)


@attrs.frozen
class ChangesMessage(WriterCommitMessage):
    """What one write task received: its part of the batch's change feed rows."""

    changes: pa.Table | None


class ResultTableSink(DataSource):
    """``format("spark_ivm_result")``; options as ``result_options`` gives them."""

    @classmethod
    def name(cls) -> str:
        return FORMAT

    def streamWriter(self, schema, overwrite: bool) -> DataSourceStreamWriter:
        return ResultTableWriter(dict(self.options))


class ResultTableWriter(DataSourceStreamArrowWriter):
    """Tasks hand their change rows to ``commit``, which applies them once per batch id."""

    def __init__(self, options: dict[str, str]):
        self.options = options

    def write(self, iterator: Iterator[pa.RecordBatch]) -> ChangesMessage:
        batches = list(iterator)
        return ChangesMessage(pa.Table.from_batches(batches) if batches else None)

    def commit(self, messages: Sequence[ChangesMessage | None], batchId: int) -> None:
        changes = []
        for message in messages:
            if message is not None and message.changes is not None:
                rows = table_rows(message.changes)
                changes.extend((row[:-1], row[-1]) for row in rows)  # the last column is _weight
        sink = result_sink(self.options)
        sink.commit_changes(batchId, changes)
        publish(sink, Path(self.options["table"]))

    def abort(self, messages: Sequence[ChangesMessage | None], batchId: int) -> None:
        """Nothing to undo: ``commit`` is the only step that writes."""
