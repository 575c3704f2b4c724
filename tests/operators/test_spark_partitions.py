"""The state partitions of a view's query: chosen at its first start from the cluster's cores, whatever
the session's spark.sql.shuffle.partitions says, recorded in the work directory and read back after."""

from __future__ import annotations

from types import SimpleNamespace

from operators.runtime.spark_session import PARTITIONS_FILE, recorded_partitions


def session(cores: int) -> SimpleNamespace:
    return SimpleNamespace(sparkContext=SimpleNamespace(defaultParallelism=cores))


def test_the_count_is_the_cores_at_the_first_start_and_stays_on_resume(tmp_path):
    assert recorded_partitions(session(3), tmp_path, fresh=True) == 3
    assert (tmp_path / PARTITIONS_FILE).read_text() == "3"
    assert recorded_partitions(session(8), tmp_path, fresh=False) == 3  # a resumed query keeps its count


def test_a_work_dir_written_before_the_count_was_recorded_records_it_now(tmp_path):
    assert recorded_partitions(session(2), tmp_path, fresh=False) == 2
    assert (tmp_path / PARTITIONS_FILE).read_text() == "2"
