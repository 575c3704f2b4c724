"""IncrementalViews: views in a Spark session over its tables, fed by streaming DataFrames.

Two small tables with data already in them (customers and their orders, keys in TBLPROPERTIES); views
bootstrap from that data, then follow changes that arrive as Parquet files in a directory read by
Spark's file source. The reference is ``spark.sql(query)`` over the tables' contents after the same
changes (temporary views of the final contents shadow the tables for that one query).
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from operators.runtime.spark_changes import ChangeSourceError
from operators.runtime.spark_session import make_spark_session

pytestmark = pytest.mark.spark

DB = "ivm_test_session"
QUERY = ("SELECT c_segment, SUM(o_price) AS total, COUNT(*) AS orders FROM orders JOIN customers "
         "ON o_custkey = c_custkey GROUP BY c_segment ORDER BY c_segment")
CUSTOMERS = [(1, "AUTO"), (2, "BUILD"), (3, "AUTO"), (4, "FURNITURE")]
ORDERS = [(10, 1, Decimal("5.50")), (11, 2, Decimal("7.25")), (12, 3, Decimal("1.00")), (13, 3, Decimal("2.00"))]


@pytest.fixture(scope="module")
def spark(tmp_path_factory):
    session = make_spark_session(app="test-session-api")
    warehouse = tmp_path_factory.mktemp("warehouse")
    previous = session.catalog.currentDatabase()
    session.sql(f"CREATE DATABASE {DB} LOCATION '{warehouse / DB}'")
    session.catalog.setCurrentDatabase(DB)
    session.sql("CREATE TABLE customers (c_custkey INT, c_segment STRING) USING parquet "
                "TBLPROPERTIES ('ivm.primary_key' = 'c_custkey')")
    session.sql("CREATE TABLE orders (o_orderkey INT, o_custkey INT, o_price DECIMAL(12,2)) USING parquet "
                "TBLPROPERTIES ('ivm.primary_key' = 'o_orderkey', 'ivm.fk.o_custkey' = 'customers.c_custkey')")
    session.createDataFrame(CUSTOMERS, "c_custkey int, c_segment string").write.insertInto("customers")
    session.createDataFrame(ORDERS, "o_orderkey int, o_custkey int, o_price decimal(12,2)").write.insertInto("orders")
    yield session
    session.catalog.setCurrentDatabase(previous)
    session.sql(f"DROP DATABASE {DB} CASCADE")


def write_changes(directory: Path, number: int, rows: list[tuple], ops: list[int], schema: pa.Schema) -> None:
    """One file of order changes (the table's columns and ``_op``) dropped into a watched directory."""
    columns = list(zip(*rows, strict=True))
    arrays = [pa.array(values, field.type) for values, field in zip(columns, schema, strict=True)]
    table = pa.Table.from_arrays([*arrays, pa.array(ops, pa.int32())], names=[*schema.names, "_op"])
    staged = directory.parent / f".{number}.parquet"
    pq.write_table(table, staged)
    staged.rename(directory / f"{number}.parquet")


ORDER_SCHEMA = pa.schema([("o_orderkey", pa.int32()), ("o_custkey", pa.int32()), ("o_price", pa.decimal128(12, 2))])


def reference(spark, orders: list[tuple]) -> list[tuple]:
    """``spark.sql(QUERY)`` with ``orders`` holding ``orders`` (a temporary view shadows the table)."""
    spark.createDataFrame(orders, "o_orderkey int, o_custkey int, o_price decimal(12,2)").createOrReplaceTempView("orders")
    try:
        return [tuple(row) for row in spark.sql(QUERY).collect()]
    finally:
        spark.catalog.dropTempView("orders")


def test_a_sql_view_bootstraps_from_the_tables_and_follows_a_file_stream(spark, tmp_path):
    from planner.session import IncrementalViews

    inbox = tmp_path / "changes"
    inbox.mkdir()
    ivm = IncrementalViews(spark, work_dir=tmp_path / "views")
    changes = spark.readStream.schema("o_orderkey int, o_custkey int, o_price decimal(12,2), _op int").parquet(str(inbox))
    view = ivm.create("by_segment", QUERY, sources={"orders": changes}).start()
    assert "Aggregate" in view.explain()
    view.process_available()
    assert [tuple(r) for r in view.result().collect()] == reference(spark, ORDERS) != []

    # a delete of a bootstrapped order, an insert, and an update (delete then insert of one key)
    write_changes(inbox, 1, [ORDERS[0], (14, 4, Decimal("9.99")), ORDERS[1], (11, 2, Decimal("8.00"))],
                  [-1, 1, -1, 1], ORDER_SCHEMA)
    view.process_available()
    now = [ORDERS[2], ORDERS[3], (14, 4, Decimal("9.99")), (11, 2, Decimal("8.00"))]
    assert [tuple(r) for r in view.result().collect()] == reference(spark, now)

    feed = spark.read.parquet(str(view.view.runner.sink.changes_dir))
    assert {"_batch", "_weight"} <= set(feed.columns) and feed.count() > 0
    assert view.changes().isStreaming
    ivm.drop("by_segment")
    assert not (tmp_path / "views" / "by_segment").exists()


def test_a_change_data_feed_updates_in_place_and_a_bad_change_is_quarantined(spark, tmp_path):
    from planner.session import IncrementalViews

    inbox = tmp_path / "cdf"
    inbox.mkdir()
    ivm = IncrementalViews(spark, work_dir=tmp_path / "views")
    schema = "o_orderkey int, o_custkey int, o_price decimal(12,2), _change_type string, _commit_version long"
    feed = spark.readStream.schema(schema).parquet(str(inbox))
    view = ivm.create("cdf", QUERY, sources={"orders": feed}, change_data_feed=True, on_invalid="quarantine").start()
    rows = [(12, 3, Decimal("1.00")), (12, 3, Decimal("4.00")), (99, 1, Decimal("1.00")), (10, 1, Decimal("5.50"))]
    kinds = ["update_preimage", "update_postimage", "delete", "delete"]
    table = pa.Table.from_arrays(
        [*(pa.array(values, field.type) for values, field in zip(zip(*rows, strict=True), ORDER_SCHEMA, strict=True)),
         pa.array(kinds), pa.array([5, 5, 5, 6], pa.int64())],
        names=[*ORDER_SCHEMA.names, "_change_type", "_commit_version"],
    )
    pq.write_table(table, inbox / "0.parquet")
    view.process_available()
    now = [ORDERS[1], (12, 3, Decimal("4.00")), ORDERS[3]]
    assert [tuple(r) for r in view.result().collect()] == reference(spark, now)
    rejects = (view.view.runner.sink.rejects_dir).glob("*.jsonl")
    reasons = [line for path in rejects for line in path.read_text().splitlines()]
    assert len(reasons) == 1 and "delete of an absent row" in reasons[0] and '"seq": 5' in reasons[0]
    ivm.drop("cdf")


def test_create_explain_and_drop_through_sql_statements(spark, tmp_path):
    from planner.session import IncrementalViewError, IncrementalViews

    ivm = IncrementalViews(spark, work_dir=tmp_path / "views")
    view = ivm.sql(f"CREATE INCREMENTAL VIEW segments AS {QUERY}")
    view.process_available()
    assert [tuple(r) for r in view.result().collect()] == reference(spark, ORDERS)
    assert ivm.sql("EXPLAIN INCREMENTAL VIEW segments") == view.explain() and "Aggregate" in view.explain()
    ivm.sql("DROP INCREMENTAL VIEW segments")
    ivm.sql("DROP INCREMENTAL VIEW IF EXISTS segments")
    with pytest.raises(IncrementalViewError, match="no incremental view segments"):
        ivm.sql("DROP INCREMENTAL VIEW segments")
    with pytest.raises(IncrementalViewError, match="one of"):
        ivm.sql("CREATE INCREMENTAL VIEW broken")
    assert ivm.sql("SELECT 1 AS one").collect()[0].one == 1


def test_changes_whose_columns_do_not_fit_the_table_are_refused_when_the_view_is_created(spark, tmp_path):
    from planner.session import IncrementalViews

    ivm = IncrementalViews(spark, work_dir=tmp_path / "views")
    doubles = spark.readStream.schema("o_orderkey int, o_custkey int, o_price double, _op int").parquet(str(tmp_path))
    with pytest.raises(ChangeSourceError, match="column o_price is double, the table's is decimal"):
        ivm.create("bad", QUERY, sources={"orders": doubles})
    missing = spark.readStream.schema("o_orderkey int, o_price decimal(12,2), _op int").parquet(str(tmp_path))
    with pytest.raises(ChangeSourceError, match="lack column.*o_custkey"):
        ivm.create("bad", QUERY, sources={"orders": missing})


def test_a_view_given_as_a_dataframe_is_planned_from_its_catalyst_plan(spark, tmp_path):
    from pyspark.sql import functions as F

    from planner.session import IncrementalViews

    ivm = IncrementalViews(spark, work_dir=tmp_path / "views")
    frame = (spark.table("orders").join(spark.table("customers"), F.col("o_custkey") == F.col("c_custkey"))
             .groupBy("c_segment").agg(F.sum("o_price").alias("total"), F.count("*").alias("orders"))
             .orderBy("c_segment"))
    view = ivm.create("from_dataframe", frame).start()
    assert "GROUP BY" in view.compiled.sql.upper()
    view.process_available()
    assert [tuple(r) for r in view.result().collect()] == reference(spark, ORDERS) == [tuple(r) for r in frame.collect()]
    ivm.drop("from_dataframe")
