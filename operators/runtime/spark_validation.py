"""Validation inside the Spark query: a stage keyed by the table's primary key, on the executors.

The local runner's ``Validator`` keeps every table's rows in driver memory; on Spark the same check
runs as ``groupBy(<primary key>).transformWithState(ValidationProcessor)``, so each key's stored row
lives in the state store of the executor that owns the key, and the driver holds no per-row state
(ARCHITECTURE.md, "Physical execution"). A keyless table is grouped by the whole row and keeps the
row's number of copies (bag semantics, as in Spark and the local validator).

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
from typing import Any

from pyspark.sql.streaming import StatefulProcessor, StatefulProcessorHandle
from pyspark.sql.streaming.stateful_processor import TimerValues
from pyspark.sql.types import Row as SparkRow

from catalog.schema import Table
from operators.runtime.dataflow import RowRequirement, SourceRoute, StageNode
from operators.runtime.spark_changes import SNAPSHOT_SEQ
from operators.runtime.spark_edges import PICKLE_PROTOCOL, edge_row, key_text, rejected_row
from operators.runtime.stream_format import Update
from operators.runtime.validate import ABSENT_COPY, InvalidChangeError, keyed_change_defect
from operators.zset import Changelog, Row, consolidate


def state_name(table: str) -> str:
    """The ValueState of a table's validation stage, named after the table (seen in the checkpoint)."""
    return f"validated_{table}"


class ValidationProcessor(StatefulProcessor):
    """Checks one table's changes per key, then routes the accepted ones to the stages reading it."""

    def __init__(self, table: Table, routes: Sequence[tuple[SourceRoute, StageNode]], policy: str,
                 requirements: Sequence[RowRequirement] = ()):
        self.table = table
        self.routes = tuple(routes)
        self.policy = policy
        self.requirements = tuple(requirements)
        self.keyed = bool(table.primary_key)
        key_names = set(table.primary_key)
        # Spark's types already hold every value to its column's type and range; NULL is what is left
        self.not_null = tuple(
            (i, c.name, "key" if c.name in key_names else "NOT NULL")
            for i, c in enumerate(table.columns)
            if c.name in key_names or not c.nullable
        )

    def init(self, handle: StatefulProcessorHandle) -> None:
        schema = "row binary" if self.keyed else "copies long"
        self.state = handle.getValueState(state_name(self.table.name), schema)
        self.key_functions = [node.stage.key_function(route.port) for route, node in self.routes]

    def handleInputRows(self, key: Any, rows: Iterator[SparkRow], timerValues: TimerValues) -> Iterator[SparkRow]:
        width = len(self.table.columns)
        changes = sorted(
            ((row[width + 1], row[width], tuple(row[:width])) for row in rows),
            key=lambda change: (SNAPSHOT_SEQ + 1 if change[0] is None else change[0], change[1] or 0),
        )
        stored = self.state.get()
        if self.keyed:
            before = None if stored is None else pickle.loads(stored[0])
            after, accepted, rejected = self._check_keyed(tuple(key), before, changes)
            if after != before:
                if after is None:
                    self.state.clear()
                else:
                    self.state.update((pickle.dumps(after, PICKLE_PROTOCOL),))
        else:
            before = 0 if stored is None else stored[0]
            after, accepted, rejected = self._check_copies(before, changes)
            if after != before:
                if after == 0:
                    self.state.clear()
                else:
                    self.state.update((after,))
        output = [rejected_row(self.table.name, seq, op, row, reason) for seq, op, row, reason in rejected]
        net = consolidate(accepted)
        for (route, node), key_of in zip(self.routes, self.key_functions, strict=True):
            output.extend(
                edge_row(node.id, key_text(key_of(change.row)), change.port, change.row, change.weight)
                for change in route.route(net)
            )
        return iter(output)

    def _check_keyed(self, key: tuple, current: Row | None, changes: list) -> tuple[Row | None, Changelog, list]:
        accepted: Changelog = []
        rejected: list = []
        for seq, op, row in changes:
            reason = self._row_defect(row, op) or keyed_change_defect(current, row, op, key)
            if reason is not None:
                self._reject(seq, op, row, reason, rejected)
                continue
            current = row if op == 1 else None
            accepted.append((row, op))
        return current, accepted, rejected

    def _check_copies(self, copies: int, changes: list) -> tuple[int, Changelog, list]:
        accepted: Changelog = []
        rejected: list = []
        for seq, op, row in changes:
            reason = self._row_defect(row, op)
            if reason is None and op == -1 and copies == 0:
                reason = ABSENT_COPY
            if reason is not None:
                self._reject(seq, op, row, reason, rejected)
                continue
            copies += op
            accepted.append((row, op))
        return copies, accepted, rejected

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
