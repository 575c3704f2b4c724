"""Delta change data feeds drive a view through the Spark runner (``operators/runtime/spark_delta_source.py``).

Two Delta tables made and changed by delta-rs (``delta_tables.py``) feed ``IncrementalViews`` through
one streaming source, in micro-batches of at most a few commits; the view must equal ``spark.sql``
over the tables' latest versions (read with delta-rs), after the backlog and again after more commits
land while the query runs.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from itertools import pairwise
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import DeltaTable

from catalog.delta import catalog_from_delta
from operators.runtime.column_types import arrow_type
from operators.runtime.delta_sink import DeltaBatchWriter
from operators.runtime.spark_changes import change_schema
from operators.runtime.spark_delta_source import delta_changes
from operators.runtime.spark_session import make_spark_session
from tests.operators.delta_tables import QUERY, change_delta_tables, latest_rows, make_delta_tables

pytestmark = [pytest.mark.spark, pytest.mark.slow]
MAX_VERSIONS = 4


@pytest.fixture(scope="module")
def spark():
    return make_spark_session(app="test-delta-source")


def latest_result(spark, catalog, paths) -> list[tuple]:
    """``spark.sql(QUERY)`` over each table's latest version, registered as a temporary view."""
    for name, path in paths.items():
        table = catalog.table(name)
        schema = pa.schema([pa.field(c.name, arrow_type(c.type)) for c in table.columns])
        rows = pa.Table.from_pylist([dict(zip(schema.names, row, strict=True)) for row in latest_rows(path)], schema=schema)
        spark.createDataFrame(rows.to_pandas(), schema=change_schema(table).rsplit(", _op", 1)[0]).createOrReplaceTempView(name)
    try:
        return [tuple(row) for row in spark.sql(QUERY).collect()]
    finally:
        for name in paths:
            spark.catalog.dropTempView(name)


def delta_offsets(checkpoint: Path) -> list[int]:
    """The Delta source's ``rank`` in each micro-batch's offsets in the checkpoint, in batch order."""
    logs = [path for path in checkpoint.rglob("offsets") if path.is_dir()]
    assert len(logs) == 1, logs
    files = sorted((path for path in logs[0].iterdir() if path.name.isdigit()), key=lambda path: int(path.name))
    return [json.loads(line)["rank"] for path in files for line in path.read_text().splitlines() if '"rank"' in line]


def test_a_delta_feed_drives_a_view_in_bounded_micro_batches(spark, tmp_path):
    from planner.session import IncrementalViews

    paths = make_delta_tables(tmp_path / "delta", steps=24, seed=11)
    catalog = catalog_from_delta(paths)
    ivm = IncrementalViews(spark, work_dir=tmp_path / "views", catalog=catalog)
    view = ivm.create("by_segment", QUERY, sources=delta_changes(spark, paths, max_versions_per_batch=MAX_VERSIONS))
    view.start().process_available()
    expected = latest_result(spark, catalog, paths)
    assert expected and [tuple(row) for row in view.result().collect()] == expected

    change_delta_tables(paths, steps=6, rng=random.Random(5))
    view.process_available()
    expected_after = latest_result(spark, catalog, paths)
    assert expected_after and [tuple(row) for row in view.result().collect()] == expected_after

    ends = [0, *delta_offsets(view.checkpoint)]  # the rank (commits read so far) after each micro-batch
    spans = list(pairwise(ends))
    commits = sum(DeltaTable(path).version() + 1 for path in paths.values())  # a change that matched no row made none
    assert spans and max(end - start for start, end in spans) <= MAX_VERSIONS, spans
    assert max(end for _, end in spans) == commits

    sink = str(tmp_path / "by_segment_changes")
    query = (view.changes().writeStream.foreachBatch(DeltaBatchWriter(sink, app_id="by_segment"))
             .option("checkpointLocation", str(tmp_path / "sink_checkpoint")).start())
    try:
        query.processAllAvailable()
    finally:
        query.stop()
    assert weighted_rows(sink) == Counter(expected_after)
    view.stop()


def weighted_rows(path: str) -> Counter:
    """The rows a change feed in a Delta table adds up to: each row's ``_weight`` summed over batches."""
    total: Counter = Counter()
    for row in DeltaTable(path).to_pyarrow_table().to_pylist():
        weight = row.pop("_weight")
        row.pop("_batch")
        total[tuple(row.values())] += weight
    return +total
