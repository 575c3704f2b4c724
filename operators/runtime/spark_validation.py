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
stays as it was after the previous batch.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterator, Sequence
from operator import itemgetter
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql.streaming import StatefulProcessor, StatefulProcessorHandle
from pyspark.sql.streaming.stateful_processor import TimerValues
from pyspark.sql.types import Row as SparkRow

from catalog.schema import Table
from operators.runtime.dataflow import RowRequirement, SourceRoute, StageNode
from operators.runtime.spark_changes import SNAPSHOT_SEQ
from operators.runtime.spark_edges import (
    BUCKET_COLUMN,
    PACKED_ARROW_SCHEMA,
    PACKED_SCHEMA,
    PICKLE_PROTOCOL,
    REJECTED,
    VALIDATION,
    chunk_of,
    key_text,
    pack,
    unpack,
)
from operators.runtime.stream_format import Update
from operators.runtime.validate import ABSENT_COPY, InvalidChangeError, keyed_change_defect
from operators.zset import Changelog, Row, consolidate


class UncheckedDeclarationError(NotImplementedError):
    """A table the dataflow reads declares what the Spark validation stage does not check yet."""


def refuse_unchecked_declarations(tables: Sequence[Table]) -> None:
    """Refuse a dataflow reading a table with a declared functional dependency, ``ivm.static`` or
    ``ivm.insert_only``: the local ``Validator`` checks them (``dependencies.py``), this stage does not
    yet (an FD needs state keyed by its determinant, not by the primary key), and a Σ-reduct plan over
    an FD the data breaks would be silently wrong."""
    for table in tables:
        declared = [f"functional dependency {fd}" for fd in table.functional_dependencies]
        declared += [f"ivm.{flag}" for flag in ("static", "insert_only") if getattr(table, flag)]
        if declared:
            raise UncheckedDeclarationError(
                f"table {table.name} declares {', '.join(declared)}, which the Spark runner does not check "
                "yet; run on the local engine, or drop the declaration")


def state_name(table: str) -> str:
    """The MapState of a table's validation stage, named after the table (seen in the checkpoint)."""
    return f"validated_{table}"


def validated_changes(changes: DataFrame, table: Table, routes: Sequence[tuple[SourceRoute, StageNode]], policy: str,
                      requirements: Sequence[RowRequirement], buckets: int, chunks: int) -> DataFrame:
    """A table's changes (``change_schema`` rows) packed by bucket of their key, then validated: the
    packed changes routed to the stages reading the table, and the rejects."""
    packed = changes.mapInArrow(ValidationInput(table, buckets), PACKED_SCHEMA)
    processor = ValidationProcessor(table, routes, policy, requirements, buckets, chunks)
    return packed.groupBy(BUCKET_COLUMN).transformWithState(processor, PACKED_SCHEMA, "Append", "None")


class ValidationInput:
    """``mapInArrow``'s function: Arrow batches of a table's changes as packed rows, each change
    ``(key text, _op, row, _seq)`` in the bucket of its primary key (of the whole row when keyless)."""

    def __init__(self, table: Table, buckets: int):
        self.width = len(table.columns)
        names = table.primary_key or table.column_names
        self.key_positions = tuple(table.column_names.index(name) for name in names)
        self.buckets = buckets

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        key_of = _getter(self.key_positions)
        for batch in batches:
            columns = [column.to_pylist() for column in batch.columns]
            rows = zip(*columns[: self.width], strict=True)
            entries = ((VALIDATION, key_text(key_of(row)), op, row, seq)
                       for row, op, seq in zip(rows, columns[self.width], columns[self.width + 1], strict=True))
            packed = pack(entries, self.buckets)
            if packed:
                yield pa.RecordBatch.from_pylist(packed, schema=PACKED_ARROW_SCHEMA)


def _getter(positions: tuple[int, ...]):
    if len(positions) == 1:
        (only,) = positions
        return lambda row: (row[only],)
    return itemgetter(*positions)


class ValidationProcessor(StatefulProcessor):
    """Checks one table's changes per key, then routes the accepted ones to the stages reading it.

    Grouped by bucket; the bucket's keys are kept by chunk (MapState chunk → pickled dict of key
    text → row, or → number of copies for a keyless table), read and written once per touched chunk.
    """

    def __init__(self, table: Table, routes: Sequence[tuple[SourceRoute, StageNode]], policy: str,
                 requirements: Sequence[RowRequirement], buckets: int, chunks: int):
        self.table = table
        self.routes = tuple(routes)
        self.policy = policy
        self.requirements = tuple(requirements)
        self.buckets, self.chunks = buckets, chunks
        self.keyed = bool(table.primary_key)
        key_names = set(table.primary_key)
        self.key_of = _getter(tuple(table.column_names.index(name) for name in table.primary_key or table.column_names))
        # Spark's types already hold every value to its column's type and range; NULL is what is left
        self.not_null = tuple(
            (i, c.name, "key" if c.name in key_names else "NOT NULL")
            for i, c in enumerate(table.columns)
            if c.name in key_names or not c.nullable
        )

    def init(self, handle: StatefulProcessorHandle) -> None:
        self.state = handle.getMapState(state_name(self.table.name), "chunk int", "rows binary")
        self.key_functions = [node.stage.key_function(route.port) for route, node in self.routes]

    def handleInputRows(self, key: Any, rows: Iterator[SparkRow], timerValues: TimerValues) -> Iterator[SparkRow]:
        by_key: dict[str, list] = {}
        for packed in rows:
            for text, op, row, seq in unpack(packed.changes):
                by_key.setdefault(text, []).append((seq, op, row))
        by_chunk: dict[int, list[str]] = {}
        for text in by_key:
            by_chunk.setdefault(chunk_of(text, self.buckets, self.chunks), []).append(text)
        accepted: Changelog = []
        rejected: list = []
        for chunk, texts in by_chunk.items():
            stored = self.state.getValue((chunk,))
            current: dict[str, Any] = {} if stored is None else pickle.loads(stored[0])
            for text in texts:
                changes = sorted(by_key[text], key=_apply_order)
                check = self._check_keyed if self.keyed else self._check_copies
                after = check(current.get(text), changes, accepted, rejected)
                if after:
                    current[text] = after
                else:
                    current.pop(text, None)
            if current:
                self.state.updateValue((chunk,), (pickle.dumps(current, PICKLE_PROTOCOL),))
            elif stored is not None:
                self.state.removeKey((chunk,))
        entries = [(REJECTED, reason, 0, (self.table.name, seq, op, row), 0) for seq, op, row, reason in rejected]
        net = consolidate(accepted)
        for (route, node), key_of in zip(self.routes, self.key_functions, strict=True):
            entries.extend((node.id, key_text(key_of(change.row)), change.port, change.row, change.weight)
                           for change in route.route(net))
        return iter([SparkRow(**record) for record in pack(entries, self.buckets)])

    def _check_keyed(self, current: Row | None, changes: list, accepted: Changelog, rejected: list) -> Row | None:
        for seq, op, row in changes:
            reason = self._row_defect(row, op) or keyed_change_defect(current, row, op, self.key_of(row))
            if reason is not None:
                self._reject(seq, op, row, reason, rejected)
                continue
            current = row if op == 1 else None
            accepted.append((row, op))
        return current

    def _check_copies(self, copies: int | None, changes: list, accepted: Changelog, rejected: list) -> int:
        copies = copies or 0
        for seq, op, row in changes:
            reason = self._row_defect(row, op)
            if reason is None and op == -1 and copies == 0:
                reason = ABSENT_COPY
            if reason is not None:
                self._reject(seq, op, row, reason, rejected)
                continue
            copies += op
            accepted.append((row, op))
        return copies

    def _row_defect(self, row: Row, op: int | None) -> str | None:
        if op not in (1, -1):
            return "_op must be +1 or -1, got NULL" if op is None else f"_op must be +1 or -1, got {op}"
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
            raise InvalidChangeError(Update(None if seq == SNAPSHOT_SEQ else seq, self.table.name, op, row), reason)
        rejected.append((seq, op, row, reason))

    def close(self) -> None:
        pass


def _apply_order(change: tuple) -> tuple:
    """``(_seq, _op)``: by position, deletes first where positions are equal or missing."""
    seq, op, _ = change
    return (SNAPSHOT_SEQ + 1 if seq is None else seq, op or 0)
