"""Delta change data feeds drive a view through the Spark runner (``operators/runtime/spark_delta_source.py``).

Two Delta tables made and changed by delta-rs (``delta_tables.py``; one has its change data feed
turned on only after three changes) feed ``IncrementalViews`` through one streaming source, in
micro-batches of at most a few commits and a few changes; the view must equal ``spark.sql`` over the
tables' latest versions (read with delta-rs), after the backlog and again after more commits land
while the query runs. Its change feed and its result are then kept in Delta tables.
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
from operators.runtime.delta_feed import feed_table, pending_commits, version_rows
from operators.runtime.delta_sink import DeltaBatchWriter, DeltaResultWriter
from operators.runtime.spark_changes import change_schema
from operators.runtime.spark_delta_source import delta_changes
from operators.runtime.spark_session import make_spark_session
from tests.operators.delta_tables import QUERY, change_delta_tables, latest_rows, make_delta_tables

pytestmark = [pytest.mark.spark, pytest.mark.slow]
MAX_VERSIONS = 4
MAX_ROWS = 6


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

    paths = make_delta_tables(tmp_path / "delta", steps=24, seed=11, late_feed=True)
    catalog = catalog_from_delta(paths)
    ivm = IncrementalViews(spark, work_dir=tmp_path / "views", catalog=catalog)
    changes = delta_changes(spark, paths, max_versions_per_batch=MAX_VERSIONS, max_rows_per_batch=MAX_ROWS)
    view = ivm.create("by_segment", QUERY, sources=changes)
    view.start().process_available()
    expected = latest_result(spark, catalog, paths)
    assert expected and [tuple(row) for row in view.result().collect()] == expected

    change_delta_tables(paths, steps=6, rng=random.Random(5))
    view.process_available()
    expected_after = latest_result(spark, catalog, paths)
    assert expected_after and [tuple(row) for row in view.result().collect()] == expected_after

    ends = [0, *delta_offsets(view.checkpoint)]  # the rank (commits read so far) after each micro-batch
    spans = list(pairwise(ends))
    rows = commit_rows(paths)  # a change that matched no row made no commit
    assert spans and max(end - start for start, end in spans) <= MAX_VERSIONS, spans
    assert all(end - start == 1 or sum(rows[start:end]) <= MAX_ROWS for start, end in spans), (spans, rows)
    assert max(end for _, end in spans) == len(rows) and max(rows) > MAX_ROWS  # the late feed's snapshot

    feed, result = str(tmp_path / "by_segment_changes"), str(tmp_path / "by_segment")
    for writer in (DeltaBatchWriter(feed, app_id="by_segment"), DeltaResultWriter(result, app_id="by_segment")):
        query = (view.changes().writeStream.foreachBatch(writer)
                 .option("checkpointLocation", str(tmp_path / f"sink_{type(writer).__name__}")).start())
        try:
            query.processAllAvailable()
        finally:
            query.stop()
    assert weighted_rows(feed) == Counter(expected_after)
    kept = DeltaTable(result).to_pyarrow_table().to_pylist()
    assert Counter({tuple(row[name] for name in row if name != "_count"): row["_count"] for row in kept}) == Counter(
        expected_after)
    view.stop()


def commit_rows(paths) -> list[int]:
    """The number of changes of each commit the source reads, in its order (``delta_feed``'s functions)."""
    feeds = {name: feed_table(name, path) for name, path in paths.items()}
    commits = pending_commits({name: (delta, start.version, delta.version()) for name, (_, delta, start) in feeds.items()})
    return [version_rows(feeds[c.table][1], paths[c.table], c.version, feeds[c.table][2]) for c in commits]


def weighted_rows(path: str) -> Counter:
    """The rows a change feed in a Delta table adds up to: each row's ``_weight`` summed over batches."""
    total: Counter = Counter()
    for row in DeltaTable(path).to_pyarrow_table().to_pylist():
        weight = row.pop("_weight")
        row.pop("_batch")
        total[tuple(row.values())] += weight
    return +total
