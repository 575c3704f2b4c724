"""The Spark runner: a dataflow's keyed stages as ONE Structured Streaming query.

Every stage becomes ``groupBy("key").transformWithState(StageProcessor(...))``; a stage's input is
the source rows addressed to it unioned (``unionByName``) with the outputs of the stages feeding it,
so the whole tree of stages runs in one micro-batch per ``apply`` (ARCHITECTURE.md, "Physical
execution"; measured facts in notes/spark-facts.md).

All edges of the query carry one uniform row schema, ``ROW_SCHEMA``: the destination stage, its key
as canonical text (``key_text``), the port, the row pickled, and the weight. One schema means one
generic processor class, unions that always line up, and no Spark type mapping of row values: the
rows stay Python values end to end, exactly as the local runner sees them.

Input is a directory of parquet files read by a file stream source, one file per ``apply``, renamed
into place atomically so Spark never sees half a file; ``processAllAvailable`` then waits for the
micro-batch. Results leave through ``foreachBatch``, which stores each micro-batch's result rows on
the driver under its batch id: a re-run batch overwrites its own entry instead of appending twice,
and ``apply`` takes exactly the batches that ran since the previous call. (A memory sink would
have neither the batch id nor a way to read "only the new rows".)

Cost on 2 cores: a warm micro-batch takes ~1.4 s for 1k input rows through three stages, so the
runner is for large state and sizeable batches; the local runner is faster below that.

A failed batch (a stage raising in a Python worker) fails its micro-batch before its commit: the
state store versions of that batch are not committed and no commit-log entry is written, so the
checkpoint still holds the state after the previous batch, and ``foreachBatch`` delivered nothing.
The driver keeps no state of its own beyond the results of finished batches; ``MaintainedView``
commits its validator rows and result only after ``apply`` returned. Unlike the local runner's,
the query itself does not survive the failure: Structured Streaming stops it, and a restart from
the checkpoint would run the same planned batch (its input file is in the offset log) again. So
after a failed batch the runner refuses further batches with that error; the view is rebuilt.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from decimal import Decimal
from functools import reduce
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.functions import col
from pyspark.sql.streaming import StatefulProcessor, StatefulProcessorHandle, StreamingQuery
from pyspark.sql.streaming.stateful_processor import TimerValues
from pyspark.sql.types import Row as SparkRow

from operators.runtime.dataflow import Dataflow, StageNode
from operators.runtime.spark_session import make_spark_session
from operators.stages.base import Change
from operators.zset import Changelog, Row, consolidate

ROW_SCHEMA = "stage int, key string, port int, row binary, w long"
ARROW_SCHEMA = pa.schema(
    [("stage", pa.int32()), ("key", pa.string()), ("port", pa.int32()), ("row", pa.binary()), ("w", pa.int64())]
)
#: ``stage`` of the rows a last stage emits: they go to the result, not to a stage.
RESULT = -1
PICKLE_PROTOCOL = pickle.HIGHEST_PROTOCOL


def state_name(stage_id: int) -> str:
    """The one ValueState a stage keeps per key (its state object, pickled), named after the stage so
    the checkpoint's state metadata tells which operator runs which stage."""
    return f"stage_{stage_id}"


def key_text(key: tuple) -> str:
    """The grouping column value of a stage key: ``repr`` of the tuple after normalising equal values.

    Spark groups by the text, the local runner by tuple equality, so equal keys must give equal text.
    ``repr`` is deterministic for the plain values rows hold (int, str, bool, None, date, Decimal,
    and float, whose repr is the shortest round-trip form). Two kinds of equal values print
    differently and are normalised: Decimals with different exponents (``1.0`` vs ``1.00``) and
    signed zeros. Values of different types that compare equal (``1`` vs ``1.0``) are not merged: a
    key column holds one type, the column's catalog type. (Pickle is no alternative: its bytes
    depend on object identity through the memo.)

    >>> key_text((1, "a", Decimal("2.50"), -0.0))
    "(1, 'a', Decimal('2.5'), 0.0)"
    """
    return repr(tuple(_canonical(value) for value in key))


def _canonical(value: Any) -> Any:
    if isinstance(value, Decimal):
        return (value + 0).normalize()
    if isinstance(value, float) and value == 0.0:
        return 0.0
    return value


def encode_change(stage_id: int, key: str, change: Change) -> dict[str, Any]:
    """One row of ``ROW_SCHEMA``."""
    return {
        "stage": stage_id,
        "key": key,
        "port": change.port,
        "row": pickle.dumps(change.row, PICKLE_PROTOCOL),
        "w": change.weight,
    }


class StageProcessor(StatefulProcessor):
    """Runs one ``KeyedStage`` under ``transformWithState`` (Row API), for any stage.

    Per key and micro-batch it reads the pickled state once, hands all the key's rows to
    ``stage.process`` in one call (the contract of operators/stages/base.py), writes or clears the state
    once, and emits the output already keyed for the downstream stage, or addressed to ``RESULT``.
    """

    def __init__(self, node: StageNode, downstream: StageNode | None):
        self.node = node
        self.downstream = downstream

    def init(self, handle: StatefulProcessorHandle) -> None:
        self.state = handle.getValueState(state_name(self.node.id), "state binary")
        if self.downstream is not None:
            self.downstream_key = self.downstream.stage.key_function(self.node.downstream_port)

    def handleInputRows(self, key: Any, rows: Iterator[SparkRow], timerValues: TimerValues) -> Iterator[SparkRow]:
        stage = self.node.stage
        changes = [Change(row.port, pickle.loads(row.row), row.w) for row in rows]
        # The grouping key is only text; the stage wants the tuple, which any of its rows gives back.
        first = changes[0]
        stage_key = stage.key_of(first.port, first.row)
        stored = self.state.get()
        old_state = None if stored is None else pickle.loads(stored[0])
        new_state, emitted = stage.process(stage_key, old_state, changes)
        if new_state is not None:
            self.state.update((pickle.dumps(new_state, PICKLE_PROTOCOL),))
        elif stored is not None:
            self.state.clear()
        # Computed eagerly: state calls act on the implicit key, which is only set during this call.
        return iter([self._output(row, weight) for row, weight in emitted])

    def _output(self, row: Row, weight: int) -> SparkRow:
        if self.downstream is None:
            destination, key, port = RESULT, "", 0
        else:
            port = self.node.downstream_port
            destination, key = self.downstream.id, key_text(self.downstream_key(row))
        return SparkRow(stage=destination, key=key, port=port, row=pickle.dumps(row, PICKLE_PROTOCOL), w=weight)

    def close(self) -> None:
        pass


class SparkRunner:
    """Same API as ``LocalRunner``: ``apply`` a batch of base-table changes, get the result's changes.

    ``spark`` defaults to ``make_spark_session()``; ``work_dir`` (default: a temporary directory,
    deleted by ``close``) holds the input files and the query checkpoint. Given an existing
    ``work_dir`` of the same dataflow, the query resumes from its checkpoint with its state (Spark's
    restart path, measured in notes/spark-facts.md Q5; the tests here do not exercise it).
    """

    def __init__(self, dataflow: Dataflow, spark: SparkSession | None = None, work_dir: str | Path | None = None):
        self.dataflow = dataflow
        self.spark = spark if spark is not None else make_spark_session()
        self._owns_work_dir = work_dir is None
        self.work_dir = Path(tempfile.mkdtemp(prefix="spark-ivm-") if work_dir is None else work_dir)
        self.source_dir = self.work_dir / "source"
        self.staging_dir = self.work_dir / "staging"
        self.checkpoint_dir = self.work_dir / "checkpoint"
        for directory in (self.source_dir, self.staging_dir):
            directory.mkdir(parents=True, exist_ok=True)
        self._files_written = len(list(self.source_dir.glob("batch-*.parquet")))
        # Routing base-table changes to stage ports is the local runner's logic, reused as is.
        self._results: dict[int, Changelog] = {}
        try:
            self.query = self._start_query()
        except Exception:
            self._remove_own_work_dir()
            raise

    def apply(self, changes_by_table: Mapping[str, Changelog]) -> Changelog:
        """Apply one batch of base-table changes (validated, by table); return the result's changes."""
        routed = self.dataflow.route(changes_by_table)
        records = []
        for stage_id, changes in routed.items():
            stage = self.dataflow.stage(stage_id).stage
            key_functions = {port: stage.key_function(port) for port in {change.port for change in changes}}
            records.extend(
                encode_change(stage_id, key_text(key_functions[change.port](change.row)), change) for change in changes
            )
        if not records:
            return []
        if not self.query.isActive:
            raise RuntimeError(f"the Spark query stopped after a failed batch ({self.query.exception()}); "
                               "every state is as after the last successful batch: build a new view to go on")
        self._write_input_file(records)
        self.query.processAllAvailable()
        collected = [self._results.pop(batch_id) for batch_id in sorted(self._results)]
        return consolidate(change for changes in collected for change in changes)

    def state_size(self) -> dict[str, int]:
        """Number of keys held by each stage, counted in the checkpoint's state store (batch jobs).

        Spark numbers stateful operators its own way, so the operator of a stage is found through the
        state variable named after the stage in the checkpoint's state metadata.
        """
        sizes = {node.stage.name: 0 for node in self.dataflow.stages}
        if not any(self.checkpoint_dir.glob("commits/[0-9]*")):
            return sizes  # no micro-batch has run: no state metadata yet
        stage_names = {state_name(node.id): node.stage.name for node in self.dataflow.stages}
        for operator in self.spark.read.format("state-metadata").load(str(self.checkpoint_dir)).collect():
            for variable in json.loads(operator.operatorProperties)["stateVariables"]:
                store = (
                    self.spark.read.format("statestore")
                    .option("operatorId", operator.operatorId)
                    .option("stateVarName", variable["stateName"])
                    .load(str(self.checkpoint_dir))
                )
                sizes[stage_names[variable["stateName"]]] = store.count()
        return sizes

    def close(self) -> None:
        """Stop the query; delete the work directory if the runner made it."""
        self.query.stop()
        self._remove_own_work_dir()

    def _remove_own_work_dir(self) -> None:
        if self._owns_work_dir:
            shutil.rmtree(self.work_dir, ignore_errors=True)

    def __enter__(self) -> SparkRunner:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _start_query(self) -> StreamingQuery:
        source = (
            self.spark.readStream.schema(ROW_SCHEMA).option("maxFilesPerTrigger", 1).parquet(str(self.source_dir))
        )
        routed_stages = {route.stage for route in self.dataflow.sources}
        feeds: dict[int, list[DataFrame]] = {}
        results: list[DataFrame] = []
        for node in self.dataflow.stages:
            inputs = feeds.pop(node.id, [])
            if node.id in routed_stages:
                inputs.insert(0, source.where(col("stage") == node.id))
            if not inputs:
                raise ValueError(
                    f"stage {node.id} ({node.stage.name}) has no input: no source route ends at it and no stage feeds it"
                )
            downstream = None if node.downstream is None else self.dataflow.stage(node.downstream)
            output = (
                reduce(DataFrame.unionByName, inputs)
                .groupBy("key")
                .transformWithState(StageProcessor(node, downstream), ROW_SCHEMA, "Append", "None")
            )
            if downstream is None:
                results.append(output)
            else:
                feeds.setdefault(downstream.id, []).append(output)
        return (
            reduce(DataFrame.unionByName, results)
            .writeStream.foreachBatch(self._collect_result)
            .option("checkpointLocation", str(self.checkpoint_dir))
            .start()
        )

    def _collect_result(self, batch: DataFrame, batch_id: int) -> None:
        table = batch.select("row", "w").toArrow()
        rows, weights = table.column("row").to_pylist(), table.column("w").to_pylist()
        self._results[batch_id] = [(pickle.loads(row), weight) for row, weight in zip(rows, weights, strict=True)]

    def _write_input_file(self, records: list[dict[str, Any]]) -> None:
        name = f"batch-{self._files_written:09d}.parquet"
        staged = self.staging_dir / name
        pq.write_table(pa.Table.from_pylist(records, schema=ARROW_SCHEMA), staged)
        os.rename(staged, self.source_dir / name)
        self._files_written += 1
