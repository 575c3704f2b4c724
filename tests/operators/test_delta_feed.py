"""Delta change data feeds as changes, without Spark (``operators/runtime/delta_feed.py``, ``catalog/delta.py``).

The tables are made and changed by delta-rs itself (``delta_tables.py``); the feed converted to a
stream directory drives the local runner, compared with DuckDB after every batch, and the stream's
final state must be each Delta table's latest version.
"""

from __future__ import annotations

from collections import Counter

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable, write_deltalake

from catalog.delta import catalog_from_delta
from operators.runtime.delta_feed import (
    ROW_BITS,
    Commit,
    FeedStart,
    admitted,
    feed_start,
    merged_commits,
    write_delta_stream,
)
from operators.runtime.stream import StreamFormatError, read_stream
from planner.workloads.oracle import DuckDBOracle
from tests.maintenance.checking import check_against_recomputation, stream_tables
from tests.operators.delta_tables import CDF, QUERY, latest_rows, make_delta_tables


def test_commits_merge_by_timestamp_and_each_table_keeps_its_version_order():
    orders = [Commit(10, "orders", 0), Commit(30, "orders", 1), Commit(20, "orders", 2)]  # a clock went back
    customers = [Commit(10, "customers", 0), Commit(25, "customers", 1)]
    merged = merged_commits([orders, customers])
    assert [(c.table, c.version) for c in merged] == [
        ("customers", 0), ("orders", 0), ("customers", 1), ("orders", 1), ("orders", 2)]


def test_an_update_is_a_delete_then_an_insert_with_seq_from_the_commit_rank(tmp_path):
    path = str(tmp_path / "t")
    write_deltalake(path, pa.table({"k": pa.array([1, 2], pa.int64()), "v": ["a", "b"]}), configuration=CDF)
    DeltaTable(path).update(updates={"v": "'z'"}, predicate="k = 2")
    _, stream = write_delta_stream({"t": path}, tmp_path / "stream")
    rows = pq.read_table(stream / "t.parquet").to_pylist()
    assert rows == [
        {"k": 1, "v": "a", "_op": 1, "_seq": 0}, {"k": 2, "v": "b", "_op": 1, "_seq": 1},
        {"k": 2, "v": "b", "_op": -1, "_seq": 1 << ROW_BITS}, {"k": 2, "v": "z", "_op": 1, "_seq": (1 << ROW_BITS) + 1},
    ]


def test_the_catalog_comes_from_the_delta_schema_and_properties(tmp_path):
    path = str(tmp_path / "t")
    data = pa.table({"K": pa.array([1], pa.int16()), "blob": pa.array([b"x"]), "p": pa.array([1.5], pa.float32())})
    write_deltalake(path, data, configuration=CDF)
    DeltaTable(path).alter.set_table_properties({"ivm.primary_key": "k"}, raise_if_not_exists=False)
    table = catalog_from_delta({"T": path}).table("t")
    assert [(c.name, str(c.type), c.nullable) for c in table.columns] == [("k", "int", False), ("p", "double", True)]
    assert table.primary_key == ("k",)
    assert [(c.name, str(c.type)) for c in table.unsupported_columns] == [("blob", "binary")]


@pytest.mark.parametrize("late_feed", [False, True], ids=["feed-from-creation", "feed-turned-on-late"])
def test_the_local_runner_follows_a_delta_feed_to_each_tables_latest_version(tmp_path, late_feed):
    paths = make_delta_tables(tmp_path, steps=30, seed=7, late_feed=late_feed)
    catalog, stream = write_delta_stream(paths, tmp_path / "stream")
    assert catalog == catalog_from_delta(paths)
    updates = read_stream(stream, catalog)
    assert {u.table for u in updates} == {"customers", "orders"}
    check_against_recomputation(QUERY, catalog, updates, batch_size=6, informative_at_least=0.8)
    with DuckDBOracle(catalog) as oracle:
        oracle.load_stream(stream_tables(catalog, updates))
        oracle.as_of(updates[-1].seq)
        for name, path in paths.items():
            expected = Counter(latest_rows(path))
            assert expected, f"{name} ends empty: the comparison would prove little"
            data = oracle.table(name)
            assert Counter(zip(*(data.column(c).to_pylist() for c in data.column_names), strict=True)) == expected


def test_a_table_without_a_change_data_feed_is_refused_by_name(tmp_path):
    write_deltalake(str(tmp_path / "t"), pa.table({"k": [1]}))
    with pytest.raises(StreamFormatError, match="Delta table t at .* has no change data feed: set delta.enableChangeDataFeed"):
        write_delta_stream({"t": str(tmp_path / "t")}, tmp_path / "stream")


def test_a_feed_turned_on_late_starts_with_the_snapshot_where_it_starts(tmp_path):
    path = str(tmp_path / "t")
    write_deltalake(path, pa.table({"k": pa.array([1, 2, 3], pa.int64())}))  # version 0: no feed
    DeltaTable(path).delete("k = 2")                                         # 1: no feed
    DeltaTable(path).alter.set_table_properties(CDF, raise_if_not_exists=False)  # 2: the feed from here on
    DeltaTable(path).delete("k = 3")                                         # 3
    assert feed_start(path, 3, 0) == FeedStart(2, snapshot=True)
    assert feed_start(path, 3, 3) == FeedStart(3)
    _, stream = write_delta_stream({"t": path}, tmp_path / "stream")
    assert pq.read_table(stream / "t.parquet").to_pylist() == [
        {"k": 1, "_op": 1, "_seq": 0}, {"k": 3, "_op": 1, "_seq": 1}, {"k": 3, "_op": -1, "_seq": 1 << ROW_BITS}]


def test_admission_takes_whole_commits_up_to_both_limits_and_at_least_one():
    commits = [Commit(version, "t", version) for version in range(5)]
    rows = {0: 3, 1: 10, 2: 1, 3: 1, 4: 1}.__getitem__
    count = lambda commit: rows(commit.version)  # noqa: E731
    assert admitted(commits, None, None, count) == commits
    assert admitted(commits, 2, None, count) == commits[:2]
    assert admitted(commits, None, 5, count) == commits[:1]      # the second commit would make 13
    assert admitted(commits[1:], None, 5, count) == commits[1:2]  # larger than the limit: alone
    assert admitted(commits[2:], None, 5, count) == commits[2:]
    assert admitted(commits[2:], 2, 5, count) == commits[2:4]
