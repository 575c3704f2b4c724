"""The Spark runner's inbox: each ``apply`` as ONE Parquet file holding every table's changes, read
by ONE file source, so that one ``apply`` is exactly one micro-batch.

Why one file and one source. The runner's query runs continuously: a trigger may fire at any moment
while ``apply`` writes, and Spark plans a micro-batch of what each source shows at that moment. With a
file per table, a trigger between two tables' renames saw part of the batch and split it into two
micro-batches; when the second failed, the first was committed already, so the state held half a
batch that ``apply`` reported as not applied (and a re-sent batch applied that half twice). One file
renamed into place is listed whole or not at all. Per-table sources whose offset is an apply counter
sealed after the files would still split: within a trigger the driver asks each source for its
latest offset in turn, and a seal written between two of those calls is seen by some sources only.

So the tables are branches of one streaming DataFrame (``inbox_changes``): Spark maps the one
streaming relation of the analysed plan to one source (``MicroBatchExecution`` keys sources by the
relation), however many branches read it. Measured: a two-table probe's checkpoint holds one source
log, ``sources/0``, and the five-table toy view's ``lastProgress`` lists one source
(tests/operators/test_spark_runner.py asserts it). Each branch scans the file for its own table:
each row group holds one table's rows, so Parquet filter pushdown on ``_table`` can skip the others',
and a branch reads only its own table's struct column.

The file's columns: ``_table`` (the table's name), ``_op``, ``_seq``, and per table a struct column
named after the table holding its columns (NULL in the other tables' rows). A file is staged under a
hidden name (``.batch-...``, which Spark's file source skips) and renamed into place.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.functions import col
from pyspark.sql.types import StructType

from catalog.schema import Table
from operators.runtime.spark_changes import OP, SEQ
from operators.runtime.stream import Update, arrow_from_rows, arrow_schema

TABLE = "_table"
_FILE = "batch-{:09d}.parquet"
_NUMBERED = re.compile(r"^batch-(\d+)\.parquet$")


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def inbox_schema(tables: Sequence[Table]) -> str:
    """The DDL schema of an inbox file: ``_table``, ``_op``, ``_seq``, and a struct column per table."""
    clashing = [table.name for table in tables if table.name.lower() in (TABLE, OP, SEQ)]
    if clashing:
        raise ValueError(f"table {clashing[0]} is named like a column of the Spark runner's inbox; rename it")
    structs = [f"{_quoted(t.name)} struct<{', '.join(f'{_quoted(c.name)}: {c.type}' for c in t.columns)}>" for t in tables]
    return ", ".join([f"{TABLE} string", f"{OP} int", f"{SEQ} bigint", *structs])


def inbox_changes(spark: SparkSession, directory: Path, tables: Sequence[Table]) -> dict[str, DataFrame]:
    """Per table, its changes in the inbox (``change_schema`` shape), all branches of one file source."""
    directory.mkdir(parents=True, exist_ok=True)
    stream = spark.readStream.schema(StructType.fromDDL(inbox_schema(tables))).parquet(str(directory))
    return table_branches(stream, tables)


def table_branches(stream: DataFrame, tables: Sequence[Table]) -> dict[str, DataFrame]:
    """Per table, its changes (``change_schema`` shape) in ``stream``, a streaming DataFrame of
    ``inbox_schema``: branches of the one source, so that one micro-batch holds every table's part."""
    return {
        table.name: stream.where(col(TABLE) == table.name).select(
            *(col(_quoted(table.name)).getField(c.name).alias(c.name) for c in table.columns), OP, SEQ)
        for table in tables
    }


def next_file_number(directory: Path) -> int:
    """The number of the next inbox file: one past the newest published one. (A withdrawn file's number
    may come again after a restart: its source-log entry was withdrawn too, so Spark never listed it.)"""
    numbers = [int(m.group(1)) for path in directory.iterdir() if (m := _NUMBERED.match(path.name))]
    return max(numbers) + 1 if numbers else 0


def write_inbox_file(directory: Path, number: int, tables: Sequence[Table],
                     by_table: Mapping[str, Sequence[Update]]) -> Path:
    """One ``apply``'s changes (``by_table``: by table name) as the inbox file ``number``, row groups of
    one table each, staged under a hidden name and renamed into place, so the file source lists the
    whole batch or none of it."""
    # nullable fields: a struct NULL in another table's rows has NULL fields (validation checks NOT NULL)
    structs = {table.name: pa.struct([f.with_nullable(True) for f in arrow_schema(table)]) for table in tables}
    schema = pa.schema([(TABLE, pa.string()), (OP, pa.int32()), (SEQ, pa.int64()), *structs.items()])
    parts = []
    for table in tables:
        updates = by_table.get(table.name)
        if not updates:
            continue
        rows = arrow_from_rows([u.row for u in updates], table, f"batch for table {table.name}")
        count = len(updates)
        columns = {
            TABLE: pa.array([table.name] * count, pa.string()),
            OP: pa.array([u.op for u in updates], pa.int32()),
            SEQ: pa.array([u.seq for u in updates], pa.int64()),
            **{name: pa.nulls(count, struct) for name, struct in structs.items()},
        }
        columns[table.name] = pa.StructArray.from_arrays([column.combine_chunks() for column in rows.columns],
                                                         fields=list(structs[table.name]))
        parts.append(pa.table(columns, schema=schema))
    path = directory / _FILE.format(number)
    staged = directory / f".{path.name}"
    with pq.ParquetWriter(staged, schema) as writer:
        for part in parts:
            writer.write_table(part)
    staged.rename(path)
    return path
