"""Validation inside the Spark query: a stage keyed by the table's primary key, on the executors.

The local runner's ``Validator`` keeps every table's rows in driver memory; on Spark the same check
runs in the query: the changes are packed by the bucket of their primary key (``mapInArrow``, on the
executors) and checked by ``groupBy(bucket).transformWithState(ValidationProcessor)``, so each key's
stored row lives in the state store of the executor that owns its bucket, and the driver holds no
per-row state (ARCHITECTURE.md, "Physical execution"). A keyless table is keyed by the whole row and
keeps the row's number of copies (bag semantics, as in Spark and the local validator).

Per key and micro-batch the changes are applied in ``(_seq, _op)`` order (``spark_changes``), under
the one rule ``validate.keyed_change_defect`` states. An accepted change is routed at once to every
stage reading the table (the source routes' selection and projection), keyed for that stage; the
key's net change is what leaves, so an insert and a delete of the same row within one batch cancel.
A bad change is either quarantined (a ``REJECTED`` row carrying the reason) or, under the ``error``
policy, raises ``InvalidChangeError``: the micro-batch then fails before its commit and every state
stays as it was after the previous batch. A delete from an ``ivm.insert_only`` table is a bad change.

A table with declared functional dependencies passes its accepted changes, one by one, to a stage
per dependency keyed by the determinant (``spark_dependencies``), and the last of those routes them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql.streaming import StatefulProcessorHandle

from catalog.schema import Table
from operators.doubles import canonical_values
from operators.runtime.dataflow import RowRequirement, SourceRoute, StageNode
from operators.runtime.dependencies import table_defect
from operators.runtime.determinant_check import SeqChange
from operators.runtime.spark_bucket_state import CHUNKS_SCHEMA
from operators.runtime.spark_counters import task_counters
from operators.runtime.spark_dependencies import (
    Onward,
    ValidationStageProcessor,
    dependency_checked,
    invalid_change,
)
from operators.runtime.spark_edges import (
    PACKED_ARROW_SCHEMA,
    PACKED_SCHEMA,
    VALIDATION,
    key_text,
    pack,
    pack_by,
)
from operators.runtime.spark_forwarding import run_operator
from operators.runtime.spark_state_codec import PICKLED, RowCodec
from operators.runtime.validate import ABSENT_COPY, keyed_change_defect
from operators.stages.base import key_getter
from operators.zset import Row


def state_name(table: str) -> str:
    """The ListState of a table's validation stage, named after the table (seen in the checkpoint)."""
    return f"validated_{table}"


def validated_changes(line: DataFrame | None, changes: DataFrame, table: Table,
                      routes: Sequence[tuple[SourceRoute, StageNode]], policy: str,
                      requirements: Sequence[RowRequirement], buckets: int, chunks: int) -> DataFrame:
    """The query's ``line`` so far (``spark_forwarding``; None at its start) joined by a table's changes
    (``change_schema`` rows) packed by bucket of their key, then through the table's validation (set
    semantics, then each declared dependency): the line forwarded, the packed changes routed to the
    stages reading the table, and the rejects."""
    packed = table_input(changes, table, buckets)
    line = packed if line is None else line.unionByName(packed)
    processor = ValidationProcessor(table, routes, policy, requirements, buckets, chunks)
    accepted = run_operator(line, processor, {VALIDATION})
    return dependency_checked(accepted, table, routes, policy, buckets, chunks)


def table_input(changes: DataFrame, table: Table, buckets: int, stage: int = VALIDATION,
                bucket_columns: tuple[int, ...] | None = None) -> DataFrame:
    """A table's changes as packed rows for its validation (``ValidationInput``), on the executors."""
    return changes.mapInArrow(ValidationInput(table, buckets, stage, bucket_columns), PACKED_SCHEMA)


class ValidationInput:
    """``mapInArrow``'s function: Arrow batches of a table's changes as packed rows, each change
    ``(key text, _op, row, _seq)`` (the text of its primary key, of the whole row when keyless),
    addressed to ``stage`` in the bucket of the values at ``bucket_columns`` (default: the key's; a
    validation folded into a stage buckets by the stage's key, ``spark_operators``)."""

    def __init__(self, table: Table, buckets: int, stage: int = VALIDATION,
                 bucket_columns: tuple[int, ...] | None = None):
        self.width = len(table.columns)
        names = table.primary_key or table.column_names
        self.key_positions = tuple(table.column_names.index(name) for name in names)
        self.buckets, self.stage, self.bucket_columns = buckets, stage, bucket_columns

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        key_of = key_getter(self.key_positions)
        bucket_of_row = None if self.bucket_columns is None else key_getter(self.bucket_columns)
        for batch in batches:
            columns = [_python_values(column) for column in batch.columns]
            rows = zip(*columns[: self.width], strict=True)
            entries = [(key_text(key_of(row)), op, row, seq)
                       for row, op, seq in zip(rows, columns[self.width], columns[self.width + 1], strict=True)]
            if bucket_of_row is None:
                packed = pack(((self.stage, *entry) for entry in entries), self.buckets)
            else:
                packed = pack_by(self.stage, entries, [key_text(bucket_of_row(entry[2])) for entry in entries], self.buckets)
            if packed:
                yield pa.RecordBatch.from_pylist(packed, schema=PACKED_ARROW_SCHEMA)


def _python_values(column: pa.Array) -> list:
    """A change column's values as the stages hold them (the local stream reader's): every NaN the one
    NaN (operators/doubles.py), and a TIMESTAMP an aware datetime in UTC. Spark hands a TIMESTAMP to
    Arrow in the session time zone, which only names the zone the instant is shown in."""
    if pa.types.is_floating(column.type):
        return canonical_values(column.to_pylist())
    if pa.types.is_timestamp(column.type) and column.type.tz is not None:
        return column.cast(pa.timestamp(column.type.unit, tz="UTC")).to_pylist()
    return column.to_pylist()


class ValidationProcessor(ValidationStageProcessor):
    """Checks one table's changes per key, then passes the accepted ones on (``Onward``): to the stages
    reading the table, or to the check of its first declared dependency.

    Grouped by bucket; the bucket's keys are kept by chunk (a ListState of chunks, each a pickled dict
    of key text → the row in ``RowCodec``'s typed encoding, or → the pickled number of copies for a
    keyless table; ``spark_bucket_state``), read and written with one state call each per bucket.
    """

    def __init__(self, table: Table, routes: Sequence[tuple[SourceRoute, StageNode]], policy: str,
                 requirements: Sequence[RowRequirement], buckets: int, chunks: int):
        self.table = table
        self.onward = Onward(table, routes, 0)
        self.policy = policy
        self.requirements = tuple(requirements)
        self.buckets, self.chunks = buckets, chunks
        self.keyed = bool(table.primary_key)
        # a key's stored row in the compact typed encoding; a keyless table's number of copies pickled
        self.codec = RowCodec([column.type for column in table.columns]) if self.keyed else PICKLED
        key_names = set(table.primary_key)
        self.key_of = key_getter(tuple(table.column_names.index(name) for name in table.primary_key or table.column_names))
        # Spark's types already hold every value to its column's type and range; NULL is what is left
        self.not_null = tuple(
            (i, c.name, "key" if c.name in key_names else "NOT NULL")
            for i, c in enumerate(table.columns)
            if c.name in key_names or not c.nullable
        )

    def init(self, handle: StatefulProcessorHandle) -> None:
        self.counters = task_counters(state_name(self.table.name))
        self.state = handle.getListState(state_name(self.table.name), CHUNKS_SCHEMA)
        self.onward.open()

    def check_key(self, text: str, value: Any, changes: list[SeqChange], accepted: list[SeqChange],
                  rejected: list[tuple[SeqChange, str]]) -> Any:
        check = self._check_keyed if self.keyed else self._check_copies
        return check(value, changes, accepted, rejected)

    def _check_keyed(self, current: Row | None, changes: list, accepted: list, rejected: list) -> Row | None:
        for seq, op, row in changes:
            reason = self._row_defect(row, op) or keyed_change_defect(current, row, op, self.key_of(row))
            if reason is not None:
                self._reject(seq, op, row, reason, rejected)
                continue
            current = row if op == 1 else None
            accepted.append((seq, op, row))
        return current

    def _check_copies(self, copies: int | None, changes: list, accepted: list, rejected: list) -> int:
        copies = copies or 0
        for seq, op, row in changes:
            reason = self._row_defect(row, op)
            if reason is None and op == -1 and copies == 0:
                reason = ABSENT_COPY
            if reason is not None:
                self._reject(seq, op, row, reason, rejected)
                continue
            copies += op
            accepted.append((seq, op, row))
        return copies

    def _row_defect(self, row: Row, op: int | None) -> str | None:
        if op not in (1, -1):
            return "_op must be +1 or -1, got NULL" if op is None else f"_op must be +1 or -1, got {op}"
        if op == -1 and self.table.insert_only:
            return table_defect(self.table, op, loaded=False)
        for position, name, kind in self.not_null:
            if row[position] is None:
                return f"NULL in {kind} column {name}"
        if op == 1:
            for requirement in self.requirements:
                reason = requirement.violation(row)
                if reason is not None:
                    return reason
        return None

    def _reject(self, seq: int | None, op: int | None, row: Row, reason: str, rejected: list) -> None:
        if self.policy == "error":
            raise invalid_change(self.table.name, (seq, op, row), reason)
        rejected.append(((seq, op, row), reason))
