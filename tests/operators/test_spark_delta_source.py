"""Delta change data feeds drive a view through the Spark runner (``operators/runtime/spark_delta_source.py``).

Two Delta tables made and changed by delta-rs (``delta_tables.py``) feed ``IncrementalViews`` through
one streaming source, in micro-batches of at most a few commits; the view must equal ``spark.sql``
over the tables' latest versions (read with delta-rs), after the backlog and again after more commits
land while the query runs.
"""

from __future__ import annotations

import json
import random

import pyarrow as pa
import pytest

from catalog.delta import catalog_from_delta
from operators.runtime.column_types import arrow_type
from operators.runtime.spark_changes import change_schema
from operators.runtime.spark_delta_source import FORMAT, delta_changes
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

    progress = view.view.runner.query.recentProgress
    offsets = [(source.startOffset, source.endOffset) for p in progress for source in p.sources
               if FORMAT in source.description and source.endOffset]
    spans = [(json.loads(start)["rank"] if start else 0, json.loads(end)["rank"]) for start, end in offsets]
    commits = 2 + 2 + 24 + 6  # two creations, two key properties, the changes
    assert spans and max(end - start for start, end in spans) <= MAX_VERSIONS, spans
    assert max(end for _, end in spans) == commits
    view.stop()
