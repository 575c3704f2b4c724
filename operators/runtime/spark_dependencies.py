"""Declared functional dependencies checked inside the Spark query: one stage per dependency, keyed by
its determinant, after the table's primary-key validation stage (``spark_validation``).

Why a stage of its own: the check needs, per determinant value, the dependent value and how many live
rows carry it (``dependencies.py``), and rows with one determinant have many primary keys, so the
state cannot live beside the key's row. The key stage passes its accepted changes on, one by one with
their ``_seq``, keyed by the first dependency's determinant; each dependency stage judges its
determinants' changes as the local validator does (``determinant_check``) and passes what it accepts
to the next dependency's stage, the last one to the stages reading the table (the key's net change,
as the key stage does for a table with no dependency). So the driver holds no per-row state, and a
rejection under the ``error`` policy raises in the micro-batch, which then commits nothing.

A dependency whose determinant holds the whole primary key cannot be broken under set semantics
(one live row per key) and gets no stage. Under ``quarantine`` a table with several dependencies
differs from the local validator in one corner: a row quarantined by a later dependency was already
counted by the earlier ones, and stays counted there until it is deleted.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql.streaming import StatefulProcessor, StatefulProcessorHandle
from pyspark.sql.streaming.stateful_processor import TimerValues
from pyspark.sql.types import Row as SparkRow

from catalog.schema import Table
from operators.runtime.dataflow import SourceRoute, StageNode
from operators.runtime.dependencies import DependencyState
from operators.runtime.determinant_check import SeqChange, check_determinant
from operators.runtime.spark_bucket_state import CHUNKS_SCHEMA, BucketStates
from operators.runtime.spark_changes import SNAPSHOT_SEQ
from operators.runtime.spark_counters import OFF, Counters, task_counters
from operators.runtime.spark_edges import (
    REJECTED,
    dependency_stage,
    key_text,
    pack,
    unpack,
)
from operators.runtime.spark_forwarding import run_operator
from operators.runtime.spark_operators import checked_dependencies
from operators.runtime.spark_state_codec import PICKLED, StateCodec
from operators.runtime.stream import Update
from operators.runtime.validate import ABSENT_COPY, InvalidChangeError, keyed_change_defect
from operators.stages.base import key_getter
from operators.zset import Row, consolidate


def dependency_state_name(table: str, index: int) -> str:
    """The ListState of a table's ``index``-th dependency stage (seen in the checkpoint)."""
    return f"dependency_{table}_{index}"


def dependency_checked(accepted: DataFrame, table: Table, routes: Sequence[tuple[SourceRoute, StageNode]],
                       policy: str, buckets: int, chunks: int) -> DataFrame:
    """The key stage's output ``accepted`` through the table's dependency stages, in the query's line
    (``spark_forwarding``: each forwards what is not addressed to it, so no stage's output is read
    twice): the packed changes routed to the stages reading the table, and the rejects of every
    validation stage."""
    for index in range(len(checked_dependencies(table))):
        processor = DependencyProcessor(table, index, routes, policy, buckets, chunks)
        accepted = run_operator(accepted, processor, {dependency_stage(index)})
    return accepted


def apply_order(change: SeqChange) -> tuple:
    """``(_seq, _op)``: by position, deletes first where positions are equal or missing."""
    seq, op, _ = change
    return (SNAPSHOT_SEQ + 1 if seq is None else seq, op or 0)


def invalid_change(table: str, change: SeqChange, reason: str) -> InvalidChangeError:
    """The error a validation stage raises under the ``error`` policy (a snapshot's rows have no ``_seq``)."""
    seq, op, row = change
    return InvalidChangeError(Update(None if seq == SNAPSHOT_SEQ else seq, table, op, row), reason)


def rejected_entries(table: str, rejected: Iterable[tuple[SeqChange, str]]) -> list[tuple]:
    """Quarantined changes as packed entries for the rejects output (``spark_edges``)."""
    return [(REJECTED, reason, 0, (table, seq, op, row), 0) for (seq, op, row), reason in rejected]


class Onward:
    """Where a validation stage's accepted changes go: the stage of the table's next dependency, each
    change keyed by its determinant, or, after the last, the stages reading the table, as the net
    change keyed for each (the route's selection and projection applied)."""

    def __init__(self, table: Table, routes: Sequence[tuple[SourceRoute, StageNode]], index: int):
        self.routes = tuple(routes)
        dependencies = checked_dependencies(table)
        self.stage = dependency_stage(index) if index < len(dependencies) else None
        if self.stage is not None:
            self.determinant_of = key_getter(tuple(table.column_names.index(c) for c in dependencies[index].determinant))

    def open(self) -> None:
        """On the executor (``init``): the stages' key functions."""
        self.key_functions = [node.stage.key_function(route.port) for route, node in self.routes]

    def entries(self, accepted: Sequence[SeqChange]) -> list[tuple]:
        if self.stage is not None:
            return [(self.stage, key_text(self.determinant_of(row)), op, row, seq) for seq, op, row in accepted]
        net = consolidate([(row, op) for _, op, row in accepted])
        return [(node.id, key_text(key_of(change.row)), change.port, change.row, change.weight)
                for (route, node), key_of in zip(self.routes, self.key_functions, strict=True)
                for change in route.route(net)]


class ValidationStageProcessor(StatefulProcessor):
    """What the key-validation and dependency stages share: a bucket's changes grouped by key text,
    each key's changes checked in apply order (``check_key``) against its stored value, the bucket's
    state (chunks of key text → value in one ListState, ``spark_bucket_state``) read and written once,
    and the rejects and the accepted changes (``onward``) packed for the next stages."""

    table: Table
    onward: Onward
    buckets: int
    chunks: int
    codec: StateCodec = PICKLED  # how a key's value is stored (a keyed table's row: ``RowCodec``)
    counters: Counters = OFF  # set by ``init`` (``spark_counters.task_counters``)

    def check_key(self, text: str, value: Any, changes: list[SeqChange], accepted: list[SeqChange],
                  rejected: list[tuple[SeqChange, str]]) -> Any:
        """The key's value after ``changes`` (falsy: nothing to keep); appends to the two lists."""
        raise NotImplementedError

    def handleInputRows(self, key: Any, rows: Iterator[SparkRow], timerValues: TimerValues) -> Iterator[SparkRow]:
        counters = self.counters
        with counters.phase("python"):
            return self._check(rows, counters)

    def _check(self, rows: Iterator[SparkRow], counters: Counters) -> Iterator[SparkRow]:
        with counters.phase("input rows"):
            rows = list(rows)
        entries = self.checked(rows, counters)
        with counters.phase("pickle changes"):
            return iter([SparkRow(**record) for record in pack(entries, self.buckets)])

    def checked(self, rows: list[SparkRow], counters: Counters) -> list[tuple]:
        """The packed changes of ``rows`` checked against the bucket's state, which is updated: the
        entries (stage, key text, port, row, weight) of the rejects and of the accepted changes."""
        by_key: dict[str, list[SeqChange]] = {}
        with counters.phase("unpickle changes"):
            for packed in rows:
                for text, op, row, seq in unpack(packed.changes):
                    by_key.setdefault(text, []).append((seq, op, row))
        counters.count("groups")
        counters.count("changes in", sum(map(len, by_key.values())))
        accepted: list[SeqChange] = []
        rejected: list[tuple[SeqChange, str]] = []
        bucket = BucketStates(self.state, self.buckets, self.chunks, self.codec, counters)
        for text, changes in by_key.items():
            current = bucket.get(text)
            with counters.phase("stage"):
                after = self.check_key(text, current, sorted(changes, key=apply_order), accepted, rejected)
            bucket.put(text, after or None)
        bucket.save()
        with counters.phase("pickle changes"):
            entries = rejected_entries(self.table.name, rejected) + self.onward.entries(accepted)
        counters.count("changes out", len(entries))
        return entries

    def close(self) -> None:
        self.counters.flush()


class DependencyProcessor(ValidationStageProcessor):
    """Checks one declared dependency of a table over the determinants of a bucket (grouped by bucket
    of the determinant's text); a determinant's value is (``[dependent value, rows]`` or None, ghosts)."""

    def __init__(self, table: Table, index: int, routes: Sequence[tuple[SourceRoute, StageNode]], policy: str,
                 buckets: int, chunks: int):
        self.table, self.index, self.policy = table, index, policy
        self.fd = checked_dependencies(table)[index]
        self.determinant_of = key_getter(tuple(table.column_names.index(c) for c in self.fd.determinant))
        self.onward = Onward(table, routes, index + 1)
        self.buckets, self.chunks = buckets, chunks
        self.key_of = key_getter(tuple(table.column_names.index(c) for c in table.primary_key))

    def init(self, handle: StatefulProcessorHandle) -> None:
        self.counters = task_counters(dependency_state_name(self.table.name, self.index))
        self.state = handle.getListState(dependency_state_name(self.table.name, self.index), CHUNKS_SCHEMA)
        self.dependency = DependencyState(self.table, self.fd)
        self.onward.open()

    def absent(self, row: Row) -> str:
        """The local validator's reason for a delete of a row it does not hold."""
        if not self.table.primary_key:
            return ABSENT_COPY
        return keyed_change_defect(None, row, -1, self.key_of(row))

    def check_key(self, text: str, value: Any, changes: list[SeqChange], accepted: list[SeqChange],
                  rejected: list[tuple[SeqChange, str]]) -> Any:
        held, ghosts = value or (None, {})
        outcome = check_determinant(self.dependency, self.determinant_of(changes[0][2]), changes, held, ghosts,
                                    self.absent)
        if outcome.rejected and self.policy == "error":
            raise invalid_change(self.table.name, *outcome.rejected[0])
        accepted += outcome.accepted
        rejected += outcome.rejected
        return None if outcome.held is None and not outcome.ghosts else (outcome.held, outcome.ghosts)
