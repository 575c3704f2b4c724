"""Delta Lake change data feeds (read with delta-rs, ``deltalake``) as the project's changes.

delta-rs reads a table's change data feed commit by commit (``load_cdf``): the table's columns and
``_change_type`` (insert, delete, update_preimage, update_postimage), ``_commit_version`` and
``_commit_timestamp``. This module turns one commit's feed into changes (the table's columns in their
catalog types, ``_op``, ``_seq``) and puts the commits of several tables in one order; the Spark
source (``spark_delta_source``) and the stream-directory writer (``write_delta_stream``, for the local
runner) share it, so both engines see the same changes in the same order.

**One order across tables.** Each table has its own versions, so the changes of several tables are
ordered by their commits: by commit timestamp, then table name, then version (``merged_commits``).
A table's versions keep their own order even where its writers' clocks went back: the order merges
the tables' version lists, it does not sort their union. The commits are numbered in that order
from the first one read (a commit's *rank*), and the k-th change of a commit (deletes first, then
inserts, each in delta-rs's row order) gets ``_seq = rank · 2³² + k``: unique across tables,
increasing along the order, and the same every time the same commits are read. Deletes come first
because a commit is a change of state: where it deletes and inserts the same key (an update's pre-
and post-image, an overwrite) the old row goes before the new one. A commit that only changes
metadata has no rows but still takes a rank.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import attrs
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from deltalake import DeltaTable

from catalog.delta import delta_table, open_delta
from catalog.schema import Catalog, Table
from operators.runtime.column_types import arrow_type
from operators.runtime.exact_numbers import CAST_ERRORS, exact_cast
from operators.runtime.spark_changes import CHANGE_TYPES, OP, SEQ
from operators.runtime.stream import StreamFormatError

#: ``_seq = rank << ROW_BITS | row``: 2³² changes per commit, 2³¹ commits.
ROW_BITS = 32
CHANGE_TYPE = "_change_type"
CHANGE_FEED_PROPERTY = "delta.enableChangeDataFeed"


@attrs.frozen(order=True)
class Commit:
    """One version of one table, ordered as ``merged_commits`` orders commits."""

    timestamp: int  # milliseconds since the epoch, as Delta's commit info records it
    table: str
    version: int


@attrs.frozen
class FeedStart:
    """Where reading a table starts: at ``version``, read as that version's feed or, when ``snapshot``,
    as the table's rows at that version (inserts); see the module docstring."""

    version: int
    snapshot: bool = False


def commit_timestamps(table: DeltaTable, first: int, last: int) -> list[int]:
    """The commit timestamps of versions ``first..last`` of ``table`` (whose loaded version is ``last``
    or later), from its history."""
    if last < first:
        return []
    history = {entry["version"]: entry["timestamp"] for entry in table.history(limit=table.version() - first + 1)}
    missing = [version for version in range(first, last + 1) if version not in history]
    if missing:
        raise StreamFormatError(f"Delta table {table.table_uri}: no commit info for version {missing[0]} "
                                "(its log was cleaned up?)")
    return [history[version] for version in range(first, last + 1)]


def feed_table(name: str, path: str, storage_options: Mapping[str, str] | None = None,
               starting_version: int = 0) -> tuple[Table, DeltaTable, FeedStart]:
    """The catalog table ``name`` of the Delta table at ``path``, the opened table and where reading it
    from ``starting_version`` starts (``feed_start``). Its change data feed must be on in its latest
    version (else a ``StreamFormatError`` naming the table and the property)."""
    table = open_delta(path, storage_options)
    if not _feed_on(table):
        raise StreamFormatError(f"Delta table {name} at {path} has no change data feed: set {CHANGE_FEED_PROPERTY} "
                                "to true")
    return delta_table(name, table), table, feed_start(path, table.version(), starting_version, storage_options)


def feed_start(path: str, latest: int, starting_version: int,
               storage_options: Mapping[str, str] | None = None) -> FeedStart:
    """Where reading the table at ``path`` (feed on in version ``latest``) from ``starting_version``
    starts: there, if its feed is on there (or the table has not reached it yet); else the snapshot at
    the first version with the feed on, found by bisection (a feed once on is taken to stay on)."""
    if starting_version >= latest or _feed_on(open_delta(path, storage_options, starting_version)):
        return FeedStart(starting_version)
    low, high = starting_version + 1, latest  # off at low - 1, on at high
    while low < high:
        middle = (low + high) // 2
        if _feed_on(open_delta(path, storage_options, middle)):
            high = middle
        else:
            low = middle + 1
    return FeedStart(low, snapshot=True)


def _feed_on(table: DeltaTable) -> bool:
    return table.metadata().configuration.get(CHANGE_FEED_PROPERTY, "false").lower() == "true"


def table_commits(name: str, table: DeltaTable, first: int, last: int) -> list[Commit]:
    """Versions ``first..last`` of the table ``name`` as commits, in version order."""
    return [Commit(timestamp, name, first + offset) for offset, timestamp in enumerate(commit_timestamps(table, first, last))]


def pending_commits(pending: Mapping[str, tuple[DeltaTable, int, int]]) -> list[Commit]:
    """The commits ``first..last`` of each table (``pending``: name → (table, first, last)), merged."""
    return merged_commits([table_commits(name, *span) for name, span in pending.items()])


def merged_commits(per_table: Sequence[Sequence[Commit]]) -> list[Commit]:
    """The tables' commits (each table's in version order) in one order: by timestamp, table name and
    version, each table's versions kept in their own order (see the module docstring)."""
    return list(heapq.merge(*per_table))


def read_commit(table: DeltaTable, version: int, columns: list[str] | None = None) -> pa.Table:
    """The change data feed of one version of ``table`` (its ``columns`` only, if given), as delta-rs reads it."""
    return pa.table(table.load_cdf(starting_version=version, ending_version=version, columns=columns).read_all())


def read_version(path: str, version: int, start: FeedStart, storage_options: Mapping[str, str] | None = None,
                 table: DeltaTable | None = None) -> pa.Table:
    """What version ``version`` of the table at ``path`` adds to its changes, shaped as its feed: the
    feed (``read_commit``, from ``table`` if it is open already), or the snapshot ``start`` names as inserts."""
    if start.snapshot and version == start.version:
        rows = open_delta(path, storage_options, version).to_pyarrow_table()
        return rows.append_column(CHANGE_TYPE, pa.array(["insert"] * len(rows), pa.string()))
    return read_commit(table or open_delta(path, storage_options), version)


def version_rows(table: DeltaTable, path: str, version: int, start: FeedStart,
                 storage_options: Mapping[str, str] | None = None) -> int:
    """The number of changes ``read_version`` gives, counted from the feed's ``_change_type`` column or,
    for a snapshot, from its files' row counts."""
    if start.snapshot and version == start.version:
        return open_delta(path, storage_options, version).to_pyarrow_dataset().count_rows()
    return read_commit(table, version, columns=[CHANGE_TYPE]).num_rows


def admitted(commits: Sequence[Commit], max_versions: int | None, max_rows: int | None,
             rows: Callable[[Commit], int]) -> list[Commit]:
    """The longest prefix of ``commits`` with at most ``max_versions`` commits and ``rows`` summing to at
    most ``max_rows`` (``None``: no limit), but at least the first commit."""
    chosen, total = [], 0
    for commit in commits[:max_versions]:
        if max_rows is not None:
            total += rows(commit)
            if chosen and total > max_rows:
                break
        chosen.append(commit)
    return chosen


def commit_changes(table: Table, feed: pa.Table, version: int, rank: int) -> pa.Table:
    """One commit's feed (``read_commit``) as changes of ``table``: its columns in catalog order and Arrow
    types (an exact cast), ``_op`` (int32) and ``_seq`` (int64; see the module docstring)."""
    where = f"Delta table {table.name}, version {version}"
    change_types = feed.column(CHANGE_TYPE).cast(pa.string()).to_pylist()
    unknown = sorted({kind for kind in change_types if kind not in CHANGE_TYPES}, key=str)
    if unknown:
        raise StreamFormatError(f"{where}: unknown {CHANGE_TYPE} {unknown[0]!r} (known: {', '.join(CHANGE_TYPES)})")
    if len(change_types) >= 1 << ROW_BITS:
        raise StreamFormatError(f"{where}: {len(change_types)} changes in one commit, more than 2^{ROW_BITS}")
    ops = np.array([CHANGE_TYPES[kind] for kind in change_types], dtype=np.int32)
    order = np.argsort(ops, kind="stable")  # deletes (-1) before inserts (+1), each in the feed's order
    by_name = {name.lower(): name for name in feed.column_names}
    columns = []
    for column in table.columns:
        target = arrow_type(column.type)
        try:
            columns.append(exact_cast(feed.column(by_name[column.name]), target).take(order))
        except KeyError:
            raise StreamFormatError(f"{where}: the change data feed has no column {column.name}") from None
        except CAST_ERRORS as err:
            raise StreamFormatError(f"{where}: column {column.name} does not convert exactly to {column.type}: "
                                    f"{err}") from None
    seqs = (np.int64(rank) << ROW_BITS) + np.arange(len(ops), dtype=np.int64)
    return pa.Table.from_arrays([*columns, pa.array(ops[order]), pa.array(seqs)], schema=change_arrow_schema(table))


def change_arrow_schema(table: Table) -> pa.Schema:
    """The Arrow schema of ``table``'s changes: its columns (``arrow_type``), ``_op`` int32, ``_seq`` int64."""
    return pa.schema([*(pa.field(c.name, arrow_type(c.type)) for c in table.columns),
                      pa.field(OP, pa.int32(), nullable=False), pa.field(SEQ, pa.int64(), nullable=False)])


def write_delta_stream(paths: Mapping[str, str], stream_dir: Path | str, starting_version: int = 0,
                       storage_options: Mapping[str, str] | None = None) -> tuple[Catalog, Path]:
    """Write the change data feeds of the Delta tables at ``paths`` (name → path), from
    ``starting_version`` of each (``feed_start``) to its latest version, as a stream directory
    (docs/stream-format.md) that ``ivm run`` and the local runner read; return the tables' catalog
    (``catalog.delta``) and the directory. Every table gets a file, empty when it has no changes."""
    tables = {name.lower(): feed_table(name, path, storage_options, starting_version) for name, path in paths.items()}
    catalog = Catalog.of(table for table, _, _ in tables.values())
    paths = {name.lower(): path for name, path in paths.items()}
    commits = pending_commits({name: (delta, start.version, delta.version()) for name, (_, delta, start) in tables.items()})
    parts: dict[str, list[pa.Table]] = {name: [] for name in tables}
    for rank, commit in enumerate(commits):
        _, delta, start = tables[commit.table]
        feed = read_version(paths[commit.table], commit.version, start, storage_options, delta)
        parts[commit.table].append(commit_changes(catalog.table(commit.table), feed, commit.version, rank))
    stream_dir = Path(stream_dir)
    stream_dir.mkdir(parents=True, exist_ok=True)
    for name, tables in parts.items():
        pq.write_table(_concatenated(catalog.table(name), tables), stream_dir / f"{name}.parquet")
    return catalog, stream_dir


def _concatenated(table: Table, parts: Sequence[pa.Table]) -> pa.Table:
    return pa.concat_tables(parts) if parts else change_arrow_schema(table).empty_table()
