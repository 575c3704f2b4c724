"""Streaming DataFrames of base-table changes, in the one shape the Spark runner reads.

A table's changes arrive as a streaming DataFrame with the table's columns, ``_op`` (+1 insert, −1
delete) and optionally ``_seq`` (the change's position). Any Spark source plugs in this way: the
stream-format directory (``spark_stream_source``), a file or Kafka stream the user shapes, a Delta
change data feed (``from_change_data_feed``), or an existing table's rows as a first snapshot
(``snapshot_changes``). ``normalized_changes`` checks such a DataFrame against the catalog once, when
the view is created, so a wrong column is an error naming the table and column, not a failed batch.

Within a micro-batch a key's changes are applied in ``(_seq, _op)`` order: by position, and where
positions are equal or missing, deletes before inserts. That is the order a change data feed needs
(an update is a pre-image delete and a post-image insert of the same commit version) and the order
a stream with unique ``_seq`` has anyway. A snapshot's rows have the smallest ``_seq`` of all, so
they come before any change of the same micro-batch.
"""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from catalog import types
from catalog.schema import Table

OP, SEQ = "_op", "_seq"
#: ``_seq`` of a snapshot's rows: before every change (a Spark bigint's smallest value).
SNAPSHOT_SEQ = -(2**63)
#: A change data feed's ``_change_type`` as a change's weight (Delta Lake's names).
CHANGE_TYPES = {"insert": 1, "delete": -1, "update_preimage": -1, "update_postimage": 1}


class ChangeSourceError(ValueError):
    """A DataFrame of changes does not fit its table; the message names the table and the column."""


def change_schema(table: Table) -> str:
    """The DDL schema of a table's changes: its columns in catalog order (Spark types), ``_op``, ``_seq``."""
    columns = [f"`{column.name}` {column.type}" for column in table.columns]
    return ", ".join([*columns, f"{OP} int", f"{SEQ} bigint"])


def normalized_changes(changes: DataFrame, table: Table) -> DataFrame:
    """``changes`` as exactly ``change_schema(table)``: columns in catalog order, each in its catalog
    type (widened where the source's type converts every value exactly), ``_seq`` NULL if absent.

    Raises ``ChangeSourceError`` for a missing column, an ``_op`` that is not an integer, or a column
    whose type does not convert exactly (a ``double`` for a ``decimal`` column, a ``bigint`` for an
    ``int``): the user casts explicitly, so nothing is rounded or truncated silently.
    """
    fields = {field.name.lower(): field for field in changes.schema.fields}
    where = f"the changes to table {table.name}"
    missing = [name for name in (*table.column_names, OP) if name not in fields]
    if missing:
        raise ChangeSourceError(f"{where} lack column(s) {', '.join(missing)} (expected the table's columns, "
                                f"{OP} and optionally {SEQ}; has {', '.join(fields)})")
    selected = []
    for column in table.columns:
        source = _catalog_type(fields[column.name].dataType.simpleString())
        if source != column.type and not converts_exactly(source, column.type):
            raise ChangeSourceError(
                f"{where}: column {column.name} is {fields[column.name].dataType.simpleString()}, the table's is "
                f"{column.type}, and not every value converts exactly; cast it explicitly"
            )
        selected.append(F.col(f"`{fields[column.name].name}`").cast(str(column.type)).alias(column.name))
    for name in (OP, SEQ):
        if name in fields and _catalog_type(fields[name].dataType.simpleString()) not in types.INTEGRAL:
            raise ChangeSourceError(f"{where}: {name} must be an integer, it is {fields[name].dataType.simpleString()}")
    seq = F.col(fields[SEQ].name) if SEQ in fields else F.lit(None)
    return changes.select(*selected, F.col(fields[OP].name).cast("int").alias(OP), seq.cast("bigint").alias(SEQ))


def converts_exactly(source: types.DataType | None, target: types.DataType) -> bool:
    """Whether every value of ``source`` is a value of ``target`` (Spark's cast keeps it unchanged)."""
    if source is None:
        return False
    if source in types.INTEGRAL and target in types.INTEGRAL:
        low, high = types.integral_range(source)
        target_low, target_high = types.integral_range(target)
        return target_low <= low and high <= target_high
    if source in types.INTEGRAL and isinstance(target, types.DecimalType):
        return converts_exactly(types.as_decimal(source), target)
    if isinstance(source, types.DecimalType) and isinstance(target, types.DecimalType):
        return target.scale >= source.scale and target.precision - target.scale >= source.precision - source.scale
    return source == types.INT and target == types.DOUBLE


def _catalog_type(spark_type: str) -> types.DataType | None:
    try:
        return types.parse_type(spark_type)
    except types.TypeParseError:
        return None


def from_change_data_feed(feed: DataFrame) -> DataFrame:
    """A Delta-style change data feed as changes: ``_change_type`` becomes ``_op`` (insert and
    update_postimage +1, delete and update_preimage −1) and ``_commit_version``, when present, ``_seq``,
    so an update's pre-image is deleted before its post-image is inserted (see the module docstring)."""
    names = {field.name for field in feed.schema.fields}
    if "_change_type" not in names:
        raise ChangeSourceError(f"a change data feed needs a _change_type column (has {', '.join(sorted(names))})")
    op = F.when(F.col("_change_type").isin("insert", "update_postimage"), F.lit(1)).when(
        F.col("_change_type").isin("delete", "update_preimage"), F.lit(-1)
    )  # any other _change_type leaves _op NULL, which validation rejects by name
    shaped = feed.withColumn(OP, op)
    if "_commit_version" in names:
        shaped = shaped.withColumn(SEQ, F.col("_commit_version").cast("bigint"))
    return shaped.drop("_change_type", "_commit_version", "_commit_timestamp")


def snapshot_changes(spark: SparkSession, table: Table, source_table: str, directory: str) -> DataFrame:
    """The rows of the existing Spark table ``source_table`` as one batch of inserts, read as a stream.

    A streaming query cannot union a batch DataFrame, so a Spark batch job writes the rows once (on the
    executors, never through the driver) to ``directory`` as Parquet with ``_op`` = +1 and the
    snapshot ``_seq``, and the returned file stream reads them in its first micro-batch. A directory
    already written (a restarted run) is kept: the checkpoint knows it was read.
    """
    if not (Path(directory) / "_SUCCESS").exists():
        rows = spark.table(source_table).withColumn(OP, F.lit(1)).withColumn(SEQ, F.lit(SNAPSHOT_SEQ))
        normalized_changes(rows, table).write.mode("overwrite").parquet(directory)
    return spark.readStream.schema(StructType.fromDDL(change_schema(table))).parquet(directory)
