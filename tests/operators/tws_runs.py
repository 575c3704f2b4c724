"""Running one constant-keyed stage's processor under pyspark's ``TwsTester`` (no JVM): shared by the
tests of the paged states (test_spark_rpai_pages, test_spark_aggregate_pages)."""

from __future__ import annotations

from collections import Counter

from pyspark.sql.streaming.tws_tester import TwsTester
from pyspark.sql.types import Row as SparkRow

from operators.runtime.dataflow import StageNode
from operators.runtime.spark_edges import pack, unpack
from operators.stages.base import Change


def run(tester: TwsTester, node: StageNode, changes: list[Change]) -> Counter:
    """One micro-batch of ``changes`` into ``node``'s processor (its one key, the constant ``()``):
    the rows it emitted, summed by weight, zero weights dropped."""
    rows = [SparkRow(**packed) for packed in pack((node.id, "()", c.port, c.row, c.weight) for c in changes)]
    emitted = Counter()
    for packed in tester.test(0, rows):
        for _, _, row, weight in unpack(packed.changes):
            emitted[row] += weight
    return +emitted
