"""The stream-format directory as Spark streaming sources, one per table, in batches of ``_seq``.

Spark's own file source makes one micro-batch of each new file; a stream directory holds one file
per table and ``ivm run --batch-size N`` wants micro-batches of N updates across all tables. So this
is a Python data source (``pyspark.sql.datasource``) whose offset is a batch number: batch k holds
the changes with ``first_seq + k·N <= _seq < first_seq + (k+1)·N``. Every table's source gets the same
``first_seq``, ``N`` and batch count, and Spark advances each source by one batch per trigger, so a
micro-batch is the same ``_seq`` range of every table: a prefix of the stream, as on the local
runner. With a dense ``_seq`` (what ``ivm tpch stream`` writes) a batch is exactly N updates; with
gaps it holds fewer. The offsets live in the checkpoint, so a restarted query re-reads exactly the
batch that was planned and not committed.

The driver only plans: ``_seq`` bounds come from the Parquet footers' statistics, and the rows are
read by the executors' Python workers (``read``), row groups the batch's range cannot touch skipped,
values cast to the catalog's Arrow types by an exact cast (``exact_numbers``: a float into a DECIMAL
column only when its shortest text is exactly a value of it). A value that does not convert exactly
fails the micro-batch with ``InvalidChangeError`` naming the table, ``_seq``, column and value, as the
local reader words it, before anything is committed. Unlike the local reader, it does so under the
``quarantine`` policy too: a source's rows have the table's column types, and a value that is none of
them has no way to travel to the validation stage that sets changes aside.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import attrs
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition

from catalog.literals import sql_literal
from catalog.schema import Column, Table
from catalog.types import parse_type
from operators.runtime.column_types import arrow_type, value_defect
from operators.runtime.exact_numbers import CAST_ERRORS, casts_exactly, exact_cast
from operators.runtime.spark_changes import OP, SEQ, change_schema
from operators.runtime.stream import StreamFormatError, Update
from operators.runtime.validate import InvalidChangeError

FORMAT = "spark_ivm_stream"


@attrs.frozen
class SeqBatches:
    """How the ``_seq`` axis is cut: batch k is ``[first + k·size, first + (k+1)·size)``."""

    first: int
    size: int
    count: int

    def bounds(self, batch: int) -> tuple[int, int]:
        low = self.first + batch * self.size
        return low, low + self.size


def table_files(stream_dir: Path, table: str) -> list[Path]:
    """A table's Parquet files in a stream directory (``<table>.parquet`` or ``<table>/``), or none."""
    single, directory = stream_dir / f"{table}.parquet", stream_dir / table
    if single.is_file():
        return [single]
    return sorted(directory.rglob("*.parquet")) if directory.is_dir() else []


def plan_batches(stream_dir: Path, tables: Sequence[str], size: int) -> SeqBatches:
    """The batches of ``size`` ``_seq`` values covering every change of ``tables``, from footer statistics."""
    if size < 1:
        raise ValueError(f"the batch size must be positive, got {size}")
    low, high = None, None
    for table in tables:
        for path in table_files(stream_dir, table):
            metadata = pq.ParquetFile(path).metadata
            names = metadata.schema.names
            if SEQ not in names:
                raise StreamFormatError(f"{path}: no {SEQ} column")
            position = names.index(SEQ)
            for group in range(metadata.num_row_groups):
                stats = metadata.row_group(group).column(position).statistics
                if metadata.row_group(group).num_rows == 0:
                    continue
                if stats is None or not stats.has_min_max:
                    raise StreamFormatError(f"{path}: row group {group} has no {SEQ} statistics to plan batches by")
                low = stats.min if low is None else min(low, stats.min)
                high = stats.max if high is None else max(high, stats.max)
    if low is None:
        return SeqBatches(0, size, 0)
    return SeqBatches(low, size, math.ceil((high - low + 1) / size))


def stream_changes(spark: SparkSession, stream_dir: Path, table: Table, batches: SeqBatches) -> DataFrame:
    """A streaming DataFrame of ``table``'s changes in ``stream_dir`` (``change_schema``), batch by batch."""
    spark.dataSource.register(StreamDirectorySource)
    files = [str(path) for path in table_files(stream_dir, table.name)]
    return (
        spark.readStream.format(FORMAT)
        .schema(change_schema(table))
        .option("table", json.dumps(_table_spec(table)))
        .option("files", json.dumps(files))
        .option("batches", json.dumps(attrs.asdict(batches)))
        .load()
    )


def _table_spec(table: Table) -> dict:
    return {"name": table.name, "columns": [[c.name, str(c.type)] for c in table.columns]}


class StreamDirectorySource(DataSource):
    """``spark.readStream.format("spark_ivm_stream")``; options as ``stream_changes`` sets them."""

    @classmethod
    def name(cls) -> str:
        return FORMAT

    def streamReader(self, schema) -> DataSourceStreamReader:
        return StreamDirectoryReader(self.options)


@attrs.frozen
class BatchSlice(InputPartition):
    """One file's part of one batch: a Spark task reads it."""

    path: str
    low: int
    high: int


class StreamDirectoryReader(DataSourceStreamReader):
    def __init__(self, options: Mapping[str, str]):
        self.files: list[str] = json.loads(options["files"])
        self.batches = SeqBatches(**json.loads(options["batches"]))
        spec = json.loads(options["table"])
        self.table_name: str = spec["name"]
        self.columns: list[tuple[str, str]] = [tuple(column) for column in spec["columns"]]

    def initialOffset(self) -> dict:
        return {"batch": 0}

    def latestOffset(self, start: dict, limit) -> dict:
        return {"batch": min(start["batch"] + 1, self.batches.count)}

    def reportLatestOffset(self) -> dict:
        return {"batch": self.batches.count}

    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        slices = []
        for batch in range(start["batch"], end["batch"]):
            low, high = self.batches.bounds(batch)
            slices.extend(BatchSlice(path, low, high) for path in self.files)
        return slices

    def read(self, partition: BatchSlice) -> Iterator[pa.RecordBatch]:
        names = [name for name, _ in self.columns]
        targets = [pa.field(name, arrow_type(parse_type(type_text))) for name, type_text in self.columns]
        schema = pa.schema([*targets, pa.field(OP, pa.int32()), pa.field(SEQ, pa.int64())])
        seq = ds.field(SEQ)
        data = ds.dataset(partition.path, format="parquet").to_table(
            columns=[*names, OP, SEQ], filter=(seq >= partition.low) & (seq < partition.high)
        )
        columns = []
        for field in schema:
            try:
                columns.append(exact_cast(data.column(field.name), field.type))
            except CAST_ERRORS as err:
                if field.name in (OP, SEQ):
                    raise StreamFormatError(f"{partition.path}: column {field.name} of table {self.table_name} does "
                                            f"not convert exactly to {field.type}: {err}") from None
                raise self._inexact(data, field) from None
        yield from pa.Table.from_arrays(columns, schema=schema).to_batches()

    def _inexact(self, data: pa.Table, field: pa.Field) -> InvalidChangeError:
        """The error naming the first change (by ``_seq``) whose ``field`` value is not exactly one of its
        column's, as the local reader words it (``column_types.value_defect``)."""
        column = data.column(field.name)
        bad = [row for row in range(len(data)) if not casts_exactly(column.slice(row, 1), field.type)]
        row = min(bad, key=lambda row: data.column(SEQ)[row].as_py())
        values = tuple(data.column(name)[row].as_py() for name, _ in self.columns)
        update = Update(data.column(SEQ)[row].as_py(), self.table_name, data.column(OP)[row].as_py(), values)
        catalog_column = Column(field.name, dict(self.columns)[field.name])
        value = column[row].as_py()
        reason = value_defect(catalog_column, value) or (
            f"column {field.name} expects {catalog_column.type}, got {column.type} {sql_literal(value)}, "
            f"which is not exactly a {catalog_column.type}")
        return InvalidChangeError(update, reason)

    def commit(self, end: dict) -> None:
        pass
