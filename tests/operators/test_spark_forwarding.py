"""The Spark query's line of operators (``spark_forwarding``): an operator runs its processor on the
rows addressed to it and forwards the others unchanged; a bucket holding only forwarded rows never
reaches the processor (no state call)."""

from __future__ import annotations

from pyspark.sql.types import Row as SparkRow

from operators.runtime.spark_edges import REJECTED, RESULT
from operators.runtime.spark_forwarding import Forwarding


class Recording:
    """A processor that records the rows it is given and answers one row per call."""

    def __init__(self):
        self.calls: list[list[SparkRow]] = []

    def init(self, handle) -> None:
        self.handle = handle

    def handleInputRows(self, key, rows, timerValues):
        seen = list(rows)
        self.calls.append(seen)
        return iter([SparkRow(stage=RESULT, bucket=0, changes=b"out")])

    def close(self) -> None:
        self.closed = True


def _row(stage: int, bucket: int, changes: bytes) -> SparkRow:
    return SparkRow(stage=stage, bucket=bucket, changes=changes)


def test_own_rows_reach_the_processor_and_the_others_pass_unchanged():
    inner = Recording()
    forwarding = Forwarding(inner, {3, -1003})
    rows = [_row(3, 7, b"a"), _row(REJECTED, 7, b"r"), _row(-1003, 7, b"v"), _row(5, 7, b"later")]
    out = list(forwarding.handleInputRows((7,), iter(rows), None))
    assert inner.calls == [[rows[0], rows[2]]]
    assert [(r.stage, r.bucket, r.changes) for r in out] == [(REJECTED, 7, b"r"), (5, 7, b"later"), (RESULT, 0, b"out")]


def test_a_bucket_of_forwarded_rows_only_never_reaches_the_processor():
    inner = Recording()
    forwarding = Forwarding(inner, {3})
    out = list(forwarding.handleInputRows((2,), iter([_row(REJECTED, 2, b"r")]), None))
    assert inner.calls == []
    assert [(r.stage, r.changes) for r in out] == [(REJECTED, b"r")]


def test_init_and_close_reach_the_processor():
    inner = Recording()
    forwarding = Forwarding(inner, {3})
    forwarding.init("handle")
    forwarding.close()
    assert inner.handle == "handle" and inner.closed
