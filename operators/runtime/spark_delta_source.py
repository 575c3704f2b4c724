"""Delta tables' change data feeds as ONE Spark streaming source, read with delta-rs (no Delta jars).

    changes = delta_changes(spark, {"orders": "/data/orders", "lineitem": "/data/lineitem"},
                            max_versions_per_batch=10)
    ivm.create("q", sql, sources=changes)      # planner/session.py

Why one source for all the tables. A view over several tables needs each micro-batch to be a prefix
of one order of all their commits (``delta_feed``'s: commit timestamp, table, version), or a batch
could hold an order line whose order arrives only in the next. Per-table sources cannot agree on a
cut: within a trigger the driver asks each source for its latest offset in turn, and a commit landing
between two of those calls is seen by some of them only (the inbox has the same problem;
``spark_inbox`` says more). So, as the inbox does, one source reads every table, its rows shaped as
``inbox_schema`` (``_table``, ``_op``, ``_seq``, a struct column per table), and each table's changes
are a branch of it (``table_branches``): Spark keys sources by the streaming relation, so one offset
decides every table's part of a micro-batch.

The offset is the next version to read of each table and the number of commits read so far (the rank
of the next commit, from which ``_seq`` is computed): ``{"rank": 7, "versions": {"orders": 4, ...}}``.
Admission control: with ``max_versions_per_batch`` N a backlog becomes micro-batches of at most N
commits (of all tables together) in the order above; Spark's read limit for it is ``ReadMaxFiles``,
a commit being one file of a Delta log. With ``max_rows_per_batch`` R, also at most R changes (one
commit larger than R makes a micro-batch alone; a commit is never split): the driver counts a
pending commit's changes by reading its feed's ``_change_type`` column alone (``version_rows``,
remembered per commit). Spark's read limit for it is ``ReadMaxRows`` when it is the only one; both
limits are the source's own, applied unless Spark asks for everything (``ReadAllAvailable``).

The driver only plans, from the Delta logs: versions and commit timestamps (``pending_commits``). Each
commit is one partition, read by an executor's Python worker with delta-rs (``read_version``: a
commit's feed, or a table's snapshot where its feed was turned on late) and turned into changes
there (``commit_changes``). The offsets live in the checkpoint, so a restarted
query re-reads exactly the commits of the batch that was planned and not committed, with the same
``_seq``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence

import attrs
import pyarrow as pa
from deltalake import DeltaTable
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadLimit, ReadMaxFiles, ReadMaxRows

from catalog.delta import open_delta
from catalog.schema import Column, Table
from operators.runtime.column_types import arrow_type
from operators.runtime.delta_feed import (
    Commit,
    FeedStart,
    admitted,
    commit_changes,
    feed_table,
    pending_commits,
    read_version,
    version_rows,
)
from operators.runtime.spark_changes import OP, SEQ
from operators.runtime.spark_inbox import TABLE, inbox_schema, table_branches

FORMAT = "spark_ivm_delta_feed"


def delta_changes(spark: SparkSession, paths: Mapping[str, str], max_versions_per_batch: int | None = None,
                  starting_version: int = 0, storage_options: Mapping[str, str] | None = None,
                  max_rows_per_batch: int | None = None) -> dict[str, DataFrame]:
    """Per table (``paths``: table name → Delta table path or URI), its changes from ``starting_version``
    on as a streaming DataFrame (``change_schema`` shape), all branches of one source; see the module
    docstring. Each table's columns and types come from its Delta schema (``catalog.delta``). The
    change data feed must be on (``delta.enableChangeDataFeed``) in the latest version; a table whose
    feed was turned on after ``starting_version`` is read from its snapshot where the feed starts
    (``delta_feed.feed_start``)."""
    for limit, value in (("max_versions_per_batch", max_versions_per_batch), ("max_rows_per_batch", max_rows_per_batch)):
        if value is not None and value < 1:
            raise ValueError(f"{limit} must be positive, got {value}")
    feeds = [(feed_table(name, path, storage_options, starting_version), path) for name, path in paths.items()]
    spark.dataSource.register(DeltaFeedSource)
    spec = {
        "tables": {table.name: {"path": path, "columns": [[c.name, str(c.type)] for c in table.columns],
                                "start": [start.version, start.snapshot]}
                   for (table, _, start), path in feeds},
        "max_versions": max_versions_per_batch,
        "max_rows": max_rows_per_batch,
        "storage_options": dict(storage_options or {}),
    }
    tables = [table for (table, _, _), _ in feeds]
    stream = spark.readStream.format(FORMAT).schema(inbox_schema(tables)).option("spec", json.dumps(spec)).load()
    return table_branches(stream, tables)


class DeltaFeedSource(DataSource):
    """``spark.readStream.format("spark_ivm_delta_feed")``; its one option, ``spec``, as ``delta_changes`` sets it."""

    @classmethod
    def name(cls) -> str:
        return FORMAT

    def streamReader(self, schema) -> DataSourceStreamReader:
        return DeltaFeedReader(json.loads(self.options["spec"]))


@attrs.frozen
class CommitSlice(InputPartition):
    """One commit of one table, numbered ``rank`` in the order of all commits: a Spark task reads it."""

    table: str
    version: int
    rank: int


class DeltaFeedReader(DataSourceStreamReader):
    def __init__(self, spec: dict):
        self.spec = spec
        self.tables = {name: Table(name, tuple(Column(column, type_text) for column, type_text in entry["columns"]))
                       for name, entry in spec["tables"].items()}
        self.starts = {name: FeedStart(*entry["start"]) for name, entry in spec["tables"].items()}
        self._opened: dict[str, DeltaTable] = {}
        self._rows: dict[Commit, int] = {}

    def initialOffset(self) -> dict:
        return {"rank": 0, "versions": {name: start.version for name, start in self.starts.items()}}

    def getDefaultReadLimit(self) -> ReadLimit:
        if self.spec["max_versions"] is not None:
            return ReadMaxFiles(self.spec["max_versions"])
        if self.spec["max_rows"] is not None:
            return ReadMaxRows(self.spec["max_rows"])
        return ReadAllAvailable()

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        pending = {}
        for name in self.tables:
            table = self._table(name)
            table.update_incremental()
            pending[name] = (table, start["versions"][name], table.version())
        commits = pending_commits(pending)
        if not isinstance(limit, ReadAllAvailable):
            commits = admitted(commits, self.spec["max_versions"], self.spec["max_rows"], self._commit_rows)
        versions = dict(start["versions"])
        for commit in commits:
            versions[commit.table] = commit.version + 1
        return {"rank": start["rank"] + len(commits), "versions": versions}

    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        pending = {name: (self._table(name), start["versions"][name], end["versions"][name] - 1) for name in self.tables}
        commits = pending_commits(pending)
        if len(commits) != end["rank"] - start["rank"]:
            raise RuntimeError(f"Delta change feed source: offsets {start} → {end} span {len(commits)} commits")
        return [CommitSlice(commit.table, commit.version, start["rank"] + number) for number, commit in enumerate(commits)]

    def read(self, partition: CommitSlice) -> Iterator[pa.RecordBatch]:
        table = self.tables[partition.table]
        feed = read_version(self.spec["tables"][table.name]["path"], partition.version, self.starts[table.name],
                            self.spec["storage_options"])
        changes = commit_changes(table, feed, partition.version, partition.rank)
        yield from _inbox_rows(self.tables.values(), table.name, changes).to_batches()

    def commit(self, end: dict) -> None:
        pass

    def _commit_rows(self, commit: Commit) -> int:
        """``version_rows`` of ``commit``, counted once per reader (a version never changes)."""
        if commit not in self._rows:
            self._rows[commit] = version_rows(self._table(commit.table), self.spec["tables"][commit.table]["path"],
                                              commit.version, self.starts[commit.table], self.spec["storage_options"])
        return self._rows[commit]

    def _table(self, name: str) -> DeltaTable:
        """The table's ``DeltaTable``, opened once per reader (``update_incremental`` brings it forward)."""
        if name not in self._opened:
            self._opened[name] = open_delta(self.spec["tables"][name]["path"], self.spec["storage_options"])
        return self._opened[name]


def _inbox_rows(tables: Iterable[Table], name: str, changes: pa.Table) -> pa.Table:
    """``changes`` of table ``name`` as rows of ``inbox_schema(tables)``: the other tables' struct columns NULL."""
    rows = len(changes)
    columns = {TABLE: pa.array([name] * rows, pa.string()), OP: changes.column(OP), SEQ: changes.column(SEQ)}
    for table in tables:
        struct_type = pa.struct([pa.field(c.name, arrow_type(c.type)) for c in table.columns])
        if table.name != name:
            columns[table.name] = pa.nulls(rows, struct_type)
        else:
            arrays = [changes.column(c.name).combine_chunks() for c in table.columns]
            columns[table.name] = pa.StructArray.from_arrays(arrays, fields=list(struct_type))
    return pa.table(columns)
