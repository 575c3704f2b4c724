"""The dataflow's start step on Spark (``Dataflow.start``): rows the stages emit over empty input.

A global aggregate has its row (COUNT 0, SUM NULL) before any change, and every stage above it must
see that row as its first input: a UNION of two global aggregates holds both rows, a join pairs with
it. On the local runners the start step runs in-process; here the stages live in the executors'
state stores, so the rows a stage emits at start and sends to another stage (not to the result)
are written once as packed rows (``spark_edges``) to ``start.parquet`` in a directory read by one
more file source of the query, which delivers them in the query's first micro-batch, as if the
emitting stage had sent them. The runner runs that micro-batch as soon as it starts a fresh query,
so the result table holds the query's rows over empty tables before any ``apply``. The rows a
stage sends to the result at start are the sink's initial version instead (``result_start``).

The file source records the file as read in the checkpoint, so a resumed query does not read it again.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import DataFrame, SparkSession

from operators.runtime.dataflow import Dataflow
from operators.runtime.spark_edges import PACKED_ARROW_SCHEMA, PACKED_SCHEMA, key_text, pack
from operators.zset import Row

START_FILE = "start.parquet"


def result_start(dataflow: Dataflow) -> tuple[Row, ...]:
    """The rows the last stage emits at start: the result table's version before the start batch."""
    return tuple(row for node in dataflow.stages if node.downstream is None
                 for row, weight in node.stage.start_output() for _ in range(weight))


def start_changes(dataflow: Dataflow, buckets: int) -> list[dict[str, Any]]:
    """The start rows sent between stages, packed (``PACKED_SCHEMA``); none in most dataflows."""
    addressed = []
    for node in dataflow.stages:
        if node.downstream is None:
            continue
        downstream = dataflow.stage(node.downstream)
        key_of = downstream.stage.key_function(node.downstream_port)
        addressed += [(downstream.id, key_text(key_of(row)), node.downstream_port, row, weight)
                      for row, weight in node.stage.start_output()]
    return pack(addressed, buckets)


def start_stream(spark: SparkSession, directory: Path, changes: list[dict[str, Any]]) -> DataFrame:
    """``changes`` (``start_changes``) as a streaming DataFrame that holds them once (the file is
    written on first use)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / START_FILE
    if not path.exists():
        staged = directory / f".{START_FILE}"
        pq.write_table(pa.Table.from_pylist(changes, schema=PACKED_ARROW_SCHEMA), staged)
        staged.rename(path)
    return spark.readStream.schema(PACKED_SCHEMA).parquet(str(directory))
