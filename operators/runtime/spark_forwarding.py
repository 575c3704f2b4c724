"""The Spark runner's query is one line of stateful operators, each forwarding what is not addressed to it.

Why a line: within a micro-batch, Structured Streaming cannot share one stateful operator's output
between two consumers. A DataFrame read by two branches of the query (a stage's output to the stage
above it *and* its rejects to the sink, or a table's validated changes to two stages) is planned once
per branch, and each copy is a stateful operator of its own (its own operator id and state store) that
redoes the whole subtree's work and keeps an identical copy of its state. Measured with
``examples/benchmarks/spark_profile.py`` on TPC-H Q3 (RESULTS.md, "one line of operators"): the
validation of orders ran 4 times per micro-batch, the live-orders stage 3 times, the live-lineitem
stage twice.

So the runner (``spark_runner.result_stream``) threads one DataFrame through the operators in the
dataflow's order: each operator's input is the line so far plus the sources that enter there, it runs
its processor on the rows whose ``stage`` is one of its own tags, and forwards every other row
unchanged (a row's bucket is already the one of the stage it goes to). The line's end holds the rows
addressed to ``RESULT`` and ``REJECTED``. A forwarded row costs a shuffle and no state call: a Spark
group holding only forwarded rows never reaches the processor.
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Iterator
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql.streaming import StatefulProcessor, StatefulProcessorHandle
from pyspark.sql.streaming.stateful_processor import TimerValues
from pyspark.sql.types import Row as SparkRow

from operators.runtime.spark_edges import BUCKET_COLUMN, PACKED_SCHEMA


class Forwarding(StatefulProcessor):
    """``inner`` run on a bucket's rows tagged with one of ``own``; the bucket's other rows forwarded."""

    def __init__(self, inner: StatefulProcessor, own: Collection[int]):
        self.inner = inner
        self.own = frozenset(own)

    def init(self, handle: StatefulProcessorHandle) -> None:
        self.inner.init(handle)

    def handleInputRows(self, key: Any, rows: Iterator[SparkRow], timerValues: TimerValues) -> Iterator[SparkRow]:
        mine, forwarded = [], []
        for row in rows:
            if row.stage in self.own:
                mine.append(row)
            else:
                forwarded.append(SparkRow(stage=row.stage, **{BUCKET_COLUMN: row[BUCKET_COLUMN]}, changes=row.changes))
        if not mine:
            return iter(forwarded)
        return itertools.chain(forwarded, self.inner.handleInputRows(key, iter(mine), timerValues))

    def close(self) -> None:
        self.inner.close()


def run_operator(line: DataFrame, processor: StatefulProcessor, own: Collection[int]) -> DataFrame:
    """``line`` (packed rows) through one stateful operator running ``processor`` on the rows tagged
    ``own``, one Spark group per bucket; the other rows pass through."""
    return line.groupBy(BUCKET_COLUMN).transformWithState(Forwarding(processor, own), PACKED_SCHEMA, "Append", "None")
