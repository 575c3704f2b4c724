"""The parts of incremental views in Spark Declarative Pipelines that run without Spark: landing a
stream in slices, the change feed rows, the result sink's exactly-once commits, and what
``ivm pipelines run`` hands ``spark-submit``. The pipeline itself runs in
``tests/maintenance/test_pipeline_tpch_q3.py`` (slow)."""

from __future__ import annotations

import json
import os
from datetime import date
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from catalog import types
from catalog.tpch import tpch_catalog
from operators.runtime.spark_edges import RESULT, pack
from operators.runtime.spark_pipeline_outputs import (
    TABLE_FILE,
    ChangeFeedRows,
    ChangesMessage,
    ResultTableWriter,
    feed_schema,
    publish,
    result_options,
    result_sink,
)
from operators.runtime.spark_sink import ResultResetError
from operators.runtime.stream import Update, write_stream
from planner.pipelines import PipelineViewError, driver
from planner.pipelines.definitions import _same_view
from planner.pipelines.landing import land
from planner.pipelines.launcher import _forget_results, _refresh_names, pipeline_command

NAMES = ("k", "amount", "day")
DTYPES = (types.INT, types.DecimalType(15, 2), types.DATE)


def _stream(directory: Path) -> Path:
    catalog = tpch_catalog()
    region = [(seq, "region", 1, (seq, f"r{seq}", "c")) for seq in range(1, 8)]
    nation = [(seq, "nation", 1, (seq, f"n{seq}", 1, "c")) for seq in range(8, 11)]
    updates = [Update(seq, table, op, row) for seq, table, op, row in region + nation]
    updates.append(Update(11, "region", -1, (1, "r1", "c")))
    stream = write_stream(directory, catalog, updates)
    (stream / "_SUCCESS").write_text("")
    return stream


def test_land_cuts_the_stream_into_slices_of_equal_count_by_seq(tmp_path):
    stream, changes = _stream(tmp_path / "stream"), tmp_path / "changes"
    counts = [land(stream, changes, part, 3, tpch_catalog()) for part in (1, 2, 3)]
    assert counts == [{"nation": 0, "region": 3}, {"nation": 0, "region": 4}, {"nation": 3, "region": 1}]
    seqs = {part: pq.read_table(changes / "region" / f"part-{part:05d}-of-00003.parquet").column("_seq").to_pylist()
            for part in (1, 2, 3)}
    assert seqs == {1: [1, 2, 3], 2: [4, 5, 6, 7], 3: [11]}
    landed = pq.read_table(changes / "region" / "part-00003-of-00003.parquet")
    assert landed.schema.field("_op").type == pa.int32() and landed.schema.field("r_regionkey").type == pa.int32()
    assert not (changes / "_SUCCESS").exists()
    names = pq.read_table(stream / "region.parquet")
    viewed = names.set_column(1, "r_name", names.column("r_name").cast(pa.string_view()))
    pq.write_table(viewed, stream / "region.parquet")  # string_view, as tpchgen-cli writes strings
    land(stream, tmp_path / "again", 1, 1, tpch_catalog())
    assert pq.read_table(tmp_path / "again" / "region" / "part-00001-of-00001.parquet").column("r_name").type == pa.string()
    with pytest.raises(ValueError, match="part 4 of 3"):
        land(stream, changes, 4, 3, tpch_catalog())


def test_change_feed_rows_are_the_results_visible_columns_and_weights():
    packed = pack([(RESULT, "", 0, (1, Decimal("2.50"), date(2024, 1, 2), "hidden"), 1),
                   (RESULT, "", 0, (2, Decimal("1.00"), date(2024, 1, 3), "hidden"), -1),
                   (RESULT, "", 0, (2, Decimal("1.00"), date(2024, 1, 3), "other"), 1)])
    batch = pa.RecordBatch.from_pylist(packed, schema=pa.schema([("stage", pa.int32()), ("bucket", pa.int32()),
                                                                 ("changes", pa.binary())]))
    rows = pa.Table.from_batches(list(ChangeFeedRows(NAMES, DTYPES)([batch]))).to_pylist()
    # the hidden ORDER BY column dropped, so the second row's delete and insert cancel
    assert rows == [{"k": 1, "amount": Decimal("2.50"), "day": date(2024, 1, 2), "_weight": 1}]
    assert feed_schema(NAMES, DTYPES) == "`k` int, `amount` decimal(15,2), `day` date, _weight bigint"


def _message(*changes: tuple[tuple, int]) -> ChangesMessage:
    columns = list(zip(*[(*row, weight) for row, weight in changes], strict=True))
    arrays = [pa.array(values, type) for values, type in
              zip(columns, [pa.int32(), pa.decimal128(15, 2), pa.date32(), pa.int64()], strict=True)]
    return ChangesMessage(pa.Table.from_arrays(arrays, names=[*NAMES, "_weight"]))


def test_the_result_sink_applies_each_batch_once_and_publishes_the_result(tmp_path):
    options = result_options(tmp_path / "output", tmp_path / "table", NAMES, DTYPES)
    publish(result_sink(options, []), tmp_path / "table")
    assert pq.read_table(tmp_path / "table" / TABLE_FILE).num_rows == 0
    writer = ResultTableWriter(options)
    first = (1, Decimal("2.50"), date(2024, 1, 2))
    second = (2, Decimal("1.00"), date(2024, 1, 3))
    writer.commit([_message((first, 2)), None], 0)
    writer.commit([_message((first, 2))], 0)  # the batch re-run after a crash: the same version again
    writer.commit([_message((first, -1), (second, 1))], 1)

    def table() -> list[tuple]:
        return sorted(tuple(row.values()) for row in pq.read_table(tmp_path / "table" / TABLE_FILE).to_pylist())

    assert table() == [first, second]
    assert json.loads(options["names"]) == list(NAMES)
    with pytest.raises(ResultResetError, match="reset"):
        writer.commit([_message((first, 1))], 0)  # a new checkpoint's batch 0 on the old result
    assert table() == [first, second]


def test_ivm_pipelines_run_hands_spark_submit_a_persistent_catalog_under_storage(tmp_path):
    command = pipeline_command(Path("/p/spark-pipeline.yml"), tmp_path, {"spark.ui.enabled": "true"}, ["q3_changes"],
                               False, [], dry=False)
    assert command[1:6] == ["org.apache.spark.deploy.SparkPipelines", driver.__file__, "run", "--spec",
                            "/p/spark-pipeline.yml"]
    settings = dict(command[i + 1].split("=", 1) for i, word in enumerate(command) if word == "--conf")
    assert settings["spark.sql.catalogImplementation"] == "hive"
    assert settings["spark.sql.warehouse.dir"] == f"{tmp_path}/warehouse"
    assert f"databaseName={tmp_path}/metastore_db" in settings["spark.hadoop.javax.jdo.option.ConnectionURL"]
    assert settings["spark.ui.enabled"] == "true"  # the caller's setting wins
    assert command[command.index("--full-refresh") + 1] == "q3_changes"


def test_a_full_refresh_of_a_view_forgets_its_result_and_refreshes_its_change_feed(tmp_path):
    for view in ("q3", "other"):
        (tmp_path / "ivm" / view / "output" / "result").mkdir(parents=True)
        (tmp_path / "_checkpoints" / f"{view}_result" / f"{view}_apply" / "0").mkdir(parents=True)
    assert _refresh_names(tmp_path, ["q3", "some_table"]) == ["q3_changes", "some_table"]
    _forget_results(tmp_path, ["q3"], False)
    assert not (tmp_path / "ivm" / "q3" / "output").exists()
    assert not (tmp_path / "_checkpoints" / "q3_result").exists()  # the sink's flow reads the rebuilt feed afresh
    assert (tmp_path / "ivm" / "other" / "output").exists() and (tmp_path / "_checkpoints" / "other_result").exists()
    _forget_results(tmp_path, [], True)
    assert not (tmp_path / "ivm" / "other" / "output").exists()


def test_every_spark_submit_setting_reaches_the_local_connect_server(monkeypatch):
    groups = [{f"spark.k{i}": str(i) for i in range(start, start + 10)} for start in (0, 10)] + [{"spark.k20": "20"}]
    monkeypatch.setenv("PYSPARK_REMOTE_INIT_CONF_LEN", str(len(groups)))
    for index, group in enumerate(groups):
        monkeypatch.setenv(f"PYSPARK_REMOTE_INIT_CONF_{index}", json.dumps(group))
    driver._keep_every_setting()
    assert os.environ["PYSPARK_REMOTE_INIT_CONF_LEN"] == "1"
    assert json.loads(os.environ["PYSPARK_REMOTE_INIT_CONF_0"]) == {f"spark.k{i}": str(i) for i in range(21)}
    assert "PYSPARK_REMOTE_INIT_CONF_2" not in os.environ


def test_a_view_declared_otherwise_than_its_state_is_refused_until_a_full_refresh(tmp_path):
    record = tmp_path / "ivm" / "q3" / "output" / "view.json"
    _same_view(record, {"query": "SELECT 1"})
    _same_view(record, {"query": "SELECT 1"})  # the next run, declared alike
    with pytest.raises(PipelineViewError, match="--full-refresh q3"):
        _same_view(record, {"query": "SELECT 2"})
    _forget_results(tmp_path, ["q3"], False)
    _same_view(record, {"query": "SELECT 2"})
