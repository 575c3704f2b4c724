"""The Spark runner: validation and a dataflow's keyed stages as ONE Structured Streaming query.

The query, from its sources to its sink (ARCHITECTURE.md, "Physical execution"):

1. per base table a streaming DataFrame of changes (``spark_changes``: the table's columns, ``_op``,
   ``_seq``), from any Spark source: the runner's own inbox (``spark_inbox``: one file per ``apply``
   holding every table's changes, read by one file source, so one ``apply`` is one micro-batch), the
   stream directory (``spark_stream_source``), or DataFrames the caller gives;
2. per table a validation stage (``spark_validation``): the changes packed by bucket of their primary
   key, then ``groupBy(bucket).transformWithState(ValidationProcessor)``, which checks set semantics
   against the key's row in the state store (and refuses deletes from an ``ivm.insert_only`` table),
   then, for a table declaring functional dependencies, one stage per dependency keyed by its
   determinant (``spark_dependencies``); the last routes accepted changes to the stages reading the
   table. Where the one stage reading a table is keyed by primary-key columns, the check runs inside
   that stage's operator instead (``spark_operators``: one shuffle, Python pass and commit fewer).
   ``ivm.static`` is checked by ``apply`` on the driver (one flag: was a batch loaded);
   a static table read from a given change stream is refused (``refuse_static_streams``);
3. every keyed stage as ``groupBy(bucket).transformWithState(...)`` over packed rows, its inputs
   unioned (``spark_stage_processors``; the edge format is ``spark_edges``);
4. the rows addressed to the result or to the rejects go to ``ResultSink`` (``foreachBatch``), which
   writes the change feed, the rejects and the result table, idempotently per batch id.

Everything a restart needs is in ``work_dir``: the checkpoint (offsets, commits, every stage's state,
validation included), the inbox files and the sink's files. Starting a runner on an existing
``work_dir`` with the same dataflow (and the same bucket and chunk counts) resumes after the last
committed micro-batch; an uncommitted one is re-run from its planned offsets and its sink files are
rewritten, not duplicated.

A failed micro-batch (invalid input under the ``error`` policy, or a stage raising in a Python worker)
fails before its commit: no state store version of it is committed, no commit-log entry is written,
and the sink saw nothing, so the checkpoint still holds every state after the previous batch.
Structured Streaming stops the query; a batch given to ``apply`` is then withdrawn (``_withdraw``:
its inbox files and its uncommitted offset and source-log entries are removed) and the query
restarted from the checkpoint, so the caller can fix the input and send it again, as on the local
runner. Each micro-batch has a fixed cost of about a second on 2 cores (RESULTS.md), so the runner is
for large state and sizeable batches; the local runner is faster below that.
"""

from __future__ import annotations

import json
import pickle
import re
import shutil
import tempfile
from collections.abc import Collection, Iterable, Mapping, Sequence
from functools import partial, reduce
from pathlib import Path

from pyspark.errors import StreamingQueryException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.functions import col
from pyspark.sql.streaming import StreamingQuery

from catalog.schema import Catalog, Table
from catalog.types import DataType
from operators.held_errors import is_error
from operators.runtime.dataflow import Dataflow, SourceRoute, StageNode
from operators.runtime.delta_sql.batch import DeltaBatch, tagged_changes
from operators.runtime.delta_sql.plan import DeltaSqlPlan
from operators.runtime.delta_sql.state_files import StateFiles
from operators.runtime.dependencies import table_defect
from operators.runtime.run_errors import SparkBatchError
from operators.runtime.spark_bucket_state import STATE_LAYOUT, check_state_layout
from operators.runtime.spark_dependencies import checked_dependencies, dependency_state_name
from operators.runtime.spark_edges import DEFAULT_BUCKETS, DEFAULT_CHUNKS, folded_input
from operators.runtime.spark_inbox import inbox_changes, next_file_number, write_inbox_file
from operators.runtime.spark_operators import folded_validations
from operators.runtime.spark_session import (
    is_connect,
    make_spark_session,
    prepare_workers,
    recorded_partitions,
    state_partitions_pinned,
)
from operators.runtime.spark_sink import BatchOutput, ResultSink
from operators.runtime.spark_stage_processors import packed_layout, state_name
from operators.runtime.spark_start import result_start, start_changes, start_stream
from operators.runtime.spark_validation import ValidationProcessor, table_input, validated_changes
from operators.runtime.spark_validation import state_name as validation_state
from operators.runtime.stream import Update, UpdateBatch
from operators.runtime.validate import POLICIES, InvalidChangeError, Rejected, conformed_row
from operators.structures.page_store import SEPARATOR
from operators.zset import Row, consolidate


class SparkRunner:
    """A dataflow maintained by one streaming query; see the module docstring.

    ``changes`` gives a streaming DataFrame of changes per table (``normalized_changes`` shape); without
    it the runner reads its own inbox, which ``apply`` fills. ``work_dir`` (default: a temporary
    directory, deleted by ``close``) holds the checkpoint, the inbox and the sink's files; given an
    existing one of the same dataflow, the query resumes from its checkpoint.
    """

    def __init__(self, dataflow: Dataflow, catalog: Catalog, spark: SparkSession | None = None,
                 work_dir: str | Path | None = None, policy: str = "error",
                 changes: Mapping[str, DataFrame] | None = None,
                 result_types: Sequence[DataType | None] = (), keep_outputs: bool = True,
                 buckets: int = DEFAULT_BUCKETS, chunks: int = DEFAULT_CHUNKS, delta_plan: DeltaSqlPlan | None = None):
        if policy not in POLICIES:
            raise ValueError(f"unknown invalid-input policy {policy!r}; choose one of {', '.join(POLICIES)}")
        self.dataflow, self.policy = dataflow, policy
        #: the JVM delta strategy's plan (``delta_sql``), or None: the dataflow's stages as Python operators
        self.delta_plan = delta_plan
        self.buckets, self.chunks = buckets, chunks  # the state layout: a resumed checkpoint needs the same
        self.tables = spark_tables(dataflow, catalog)
        held = [row for row in dataflow.initial_result if is_error(row)]
        if held:
            raise SparkBatchError("the start step", f"the view's value over the empty database is Spark's error "
                                  f"{held[0].message}; the Spark engine cannot hold it until a batch makes the "
                                  "value defined (the local engine can)")
        self.spark = spark if spark is not None else make_spark_session()
        if keep_outputs and is_connect(self.spark):
            # the sink runs in the Connect server's Python worker: the batches' outputs it keeps for
            # ``apply`` would stay there, and apply() would see no changes
            raise ConnectApplyError(
                "over Spark Connect a view reads change streams (IncrementalViews, or MaintainedView(changes=..., "
                "keep_outputs=False)) and its results from its files; apply() needs a classic session")
        prepare_workers(self.spark)  # a caller's own session: its workers may not reach this project yet
        self._owns_work_dir = work_dir is None
        # absolute: the JVM resolves a relative path against its own working directory, which is the
        # driver's only when the session was started from there (a notebook's session often was not)
        self.work_dir = Path(tempfile.mkdtemp(prefix="spark-ivm-") if work_dir is None else work_dir).resolve()
        self.checkpoint_dir = self.work_dir / "checkpoint"
        self.inbox_dir = self.work_dir / "inbox"
        # the result table starts with the rows the last stage emits over empty input; the rows stages
        # send each other at start come through the query's first micro-batch (``spark_start``)
        self.sink = ResultSink(self.work_dir / "output", dataflow.output_columns, result_types,
                               result_start(dataflow), keep_outputs, dataflow.visible_width)
        fresh = not _numbered(self.checkpoint_dir / "commits")
        check_state_layout(self.work_dir, fresh, STATE_LAYOUT if delta_plan is None else DELTA_LAYOUT)
        self.partitions = recorded_partitions(self.spark, self.work_dir, fresh)
        self._reads_inbox = changes is None
        # a table without a given stream reads the inbox (empty unless ``apply`` fills it)
        inbox_tables = [table for name, table in self.tables.items() if name not in (changes or {})]
        self._changes = inbox_changes(self.spark, self.inbox_dir, inbox_tables) if inbox_tables else {}
        self._changes.update({name: stream for name, stream in (changes or {}).items() if name in self.tables})
        refuse_static_streams([table for name, table in self.tables.items() if not self._reads_inbox or name in (changes or {})])
        # whether a batch with an accepted change was committed: a static table takes rows only before
        self._loaded_marker = self.work_dir / "loaded"
        self._loaded = self._loaded_marker.exists()
        self._next_file = next_file_number(self.inbox_dir) if self._reads_inbox else 0
        try:
            start = start_changes(dataflow, buckets) if delta_plan is None else []
            #: the stages that take rows at start, and the stream holding them
            self._start_stages = {row["stage"] for row in start}
            self._start = start_stream(self.spark, self.work_dir / "start", start) if start else None
            self.query = self._start_query()
            if fresh and start:
                self._run_start()
        except Exception:
            self._remove_own_work_dir()
            raise

    def _run_start(self) -> None:
        """The start micro-batch: the rows stages send each other over empty input, so the result table
        is the query's over empty tables before the first ``apply`` (whose changes then do not hold them)."""
        self.run_available()
        if self.sink.outputs is not None and self._reads_inbox:
            self.sink.take_outputs()

    # ---- input through the inbox -------------------------------------------------------------

    def apply(self, updates: UpdateBatch | Iterable[Update]) -> BatchOutput:
        """Run one batch of base-table updates through validation and the stages; return the result's
        changes and the quarantined updates. Invalid input under the ``error`` policy, or a stage
        error, raises and leaves every state as it was: the batch is withdrawn and can be sent again."""
        if not self._reads_inbox:
            raise RuntimeError("this runner reads the change streams it was given; apply() feeds only its inbox")
        batch = UpdateBatch.in_seq_order(updates)
        by_table: dict[str, list[Update]] = {}
        rejected: list[Rejected] = []
        for update in batch:
            table = self.tables.get(update.table)
            if table is None:
                continue
            # What needs no stored row is checked here (a value not of its column's type cannot even
            # be written to the inbox); set semantics are checked on the executors.
            row, reason = update.row, update.defect
            if reason is None and type(row) is not tuple:
                reason = "row is not a tuple of column values"
            if reason is None:
                row, reason = conformed_row(table, row)
            if reason is None and table.static:
                reason = table_defect(table, update.op, self._loaded)
            if reason is not None:
                if self.policy == "error":
                    raise InvalidChangeError(update, reason)
                rejected.append(Rejected(update, reason))
                continue
            by_table.setdefault(table.name, []).append(Update(update.seq, update.table, update.op, row))
        if not by_table:
            return BatchOutput(-1, [], [])
        written = write_inbox_file(self.inbox_dir, self._next_file, list(self.tables.values()), by_table)
        self._next_file += 1
        try:
            self.run_available()
        except SparkBatchError:
            self._withdraw(written)
            raise
        # the batch's one micro-batch; after a resume also the one a crashed apply left planned, which
        # the restarted query re-ran before this batch
        outputs = self.sink.take_outputs()
        changes = consolidate(change for output in outputs for change in output.changes)
        quarantined = [reject for output in outputs for reject in output.rejected]
        rejected += [Rejected(Update(r.seq, r.table, r.op, r.row), r.reason) for r in quarantined]
        if not self._loaded and sum(map(len, by_table.values())) > len(quarantined):
            self._loaded_marker.touch()
            self._loaded = True
        return BatchOutput(outputs[-1].batch_id if outputs else -1, changes, rejected)

    def _withdraw(self, file: Path) -> None:
        """Take a failed batch back: its inbox file, and the offsets planned for it but not committed, so
        the restarted query plans the next batch afresh instead of re-running the failed one."""
        file.unlink(missing_ok=True)
        committed = _numbered(self.checkpoint_dir / "commits")
        last = max(committed) if committed else -1
        for log in [self.checkpoint_dir / "offsets", *(self.checkpoint_dir / "sources").glob("*")]:
            for number in _numbered(log):
                if number > last:  # the entry and the checksum file Hadoop's local file system keeps beside it
                    (log / str(number)).unlink()
                    (log / f".{number}.crc").unlink(missing_ok=True)
        self.query = self._start_query()

    # ---- running -------------------------------------------------------------------------------

    def run_available(self) -> None:
        """Run micro-batches until every available change is processed; a failed one raises
        ``SparkBatchError`` with the worker's error (the query then stops). A micro-batch that failed
        only because a driver-side Python process did not connect back within Spark's fixed 10 s
        (``CONNECT_BACK``, docs/spark.md) committed nothing: the query is started again from its
        checkpoint, up to ``CONNECT_BACK_RETRIES`` times."""
        for attempt in range(CONNECT_BACK_RETRIES + 1):
            if not self.query.isActive:
                self.query = self._start_query()
            try:
                self.query.processAllAvailable()
                return
            except StreamingQueryException as err:
                if CONNECT_BACK not in str(err) or attempt == CONNECT_BACK_RETRIES:
                    raise SparkBatchError(*_python_error(err)) from None

    def current_result(self) -> list[Row]:
        """The result table's rows after the newest batch (one row per copy)."""
        return self.sink.current_result()

    def state_size(self) -> dict[str, int]:
        """Number of keys held by each stage (and each table's validation stage, ``validate <table>``, and
        each of its dependency stages, ``validate <table>: <fd>``, in determinant values),
        counted in the checkpoint's state store with batch jobs whose chunks the driver unpickles
        (a diagnostic for tests and small runs). A top-k stage counts its distinct rows, a paged stage
        (``PAGED_STATES``) its keys' meta pages."""
        if self.delta_plan is not None:  # the JVM delta strategy keeps each table's rows, not stage states
            stored = StateFiles(self.spark, self.work_dir / DELTA_STATE)
            return {f"stored {name}": stored.row_count(name) for name in self.tables}
        names = {state_name(node.id): node.stage.name for node in self.dataflow.stages}
        names |= {f"{state_name(node.id)}_{kind}": node.stage.name for node in self.dataflow.stages
                  for kind in ("rows", "pages")}
        names |= {validation_state(table): f"validate {table}" for table in self.tables}
        names |= {dependency_state_name(name, index): f"validate {fd}"
                  for name, table in self.tables.items() for index, fd in enumerate(checked_dependencies(table))}
        sizes = dict.fromkeys([*(node.stage.name for node in self.dataflow.stages), *names.values()], 0)
        if not _numbered(self.checkpoint_dir / "commits"):
            return sizes  # no micro-batch has run: no state metadata yet
        counted = set()  # the metadata may list a state variable more than once
        for operator in self.spark.read.format("state-metadata").load(str(self.checkpoint_dir)).collect():
            for variable in json.loads(operator.operatorProperties)["stateVariables"]:
                if variable["stateName"] not in names or variable["stateName"] in counted:
                    continue  # (a top-k stage's buffer of best rows is not counted: its rows are)
                counted.add(variable["stateName"])
                store = (
                    self.spark.read.format("statestore")
                    .option("operatorId", operator.operatorId)
                    .option("stateVarName", variable["stateName"])
                    .load(str(self.checkpoint_dir))
                )
                if variable["stateName"].endswith("_pages"):  # a paged stage: a meta page per key it holds
                    pages = store.select("user_map_key").toArrow().column(0).to_pylist()
                    sizes[names[variable["stateName"]]] += sum(p["page"].endswith(SEPARATOR + "m") for p in pages)
                    continue
                # a bucket's chunks flattened from its ListState (``spark_bucket_state``), or a top-k
                # stage's MapState of row chunks; either way one pickled dict per chunk
                column = "list_element" if "list_element" in store.columns else "user_map_value"
                chunks = store.select(column).toArrow().column(0).to_pylist()
                sizes[names[variable["stateName"]]] += sum(len(pickle.loads(list(c.values())[-1])) for c in chunks)
        return sizes

    def close(self) -> None:
        """Stop the query; delete the work directory if the runner made it."""
        self.query.stop()
        self._remove_own_work_dir()

    def _remove_own_work_dir(self) -> None:
        if self._owns_work_dir:
            shutil.rmtree(self.work_dir, ignore_errors=True)

    def __enter__(self) -> SparkRunner:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # ---- the query -----------------------------------------------------------------------------

    def _start_query(self) -> StreamingQuery:
        if self.delta_plan is None:
            outputs = result_stream(self.dataflow, self.tables, self._changes, self.policy, self.buckets, self.chunks,
                                    self._start, self._start_stages)
            target = self.sink
        else:
            outputs = tagged_changes(self._changes, self.tables)
            target = self.delta_batch = DeltaBatch(self.delta_plan, self.tables, self.work_dir / DELTA_STATE, self.sink,
                                                   self.policy)
        with state_partitions_pinned(self.spark, self.partitions):
            return (
                outputs.writeStream.foreachBatch(target)
                .option("checkpointLocation", str(self.checkpoint_dir))
                .start()
            )


def result_stream(dataflow: Dataflow, tables: Mapping[str, Table], changes: Mapping[str, DataFrame], policy: str,
                  buckets: int = DEFAULT_BUCKETS, chunks: int = DEFAULT_CHUNKS,
                  start: DataFrame | None = None, start_stages: Collection[int] = ()) -> DataFrame:
    """The query from its sources to its sink, one line of stateful operators (``spark_forwarding``:
    each operator's output read once): ``changes`` (per table, ``normalized_changes`` rows) validated,
    then through every keyed stage in the dataflow's order; at its end the packed rows addressed to
    ``RESULT`` (the result's changes) and to ``REJECTED`` (quarantined input). A table's own validation
    joins the line just before the first stage reading it (a table no stage reads, at the line's start);
    a validation folded into a stage (``spark_operators``) enters with that stage. ``start`` holds the
    packed rows stages send each other at start (``spark_start``) for ``start_stages``. Not started:
    the runner writes it to its sink, a pipeline (``planner/pipelines``) to a table."""
    folded = folded_validations(dataflow, tables)
    entering: dict[int, list[DataFrame]] = {}
    checks: dict[int, list[tuple[int, ValidationProcessor]]] = {}
    own_validations: dict[int | None, list[str]] = {}
    for name, table in tables.items():
        routes = source_routes(dataflow, name)
        fold = folded.get(name)
        if fold is None:
            reading = {node.id for _, node in routes}
            first = next((node.id for node in dataflow.stages if node.id in reading), None)
            own_validations.setdefault(first, []).append(name)
            continue
        tag = folded_input(len(checks.get(fold.stage, [])))
        entering.setdefault(fold.stage, []).append(table_input(changes[name], table, buckets, tag, fold.key_columns))
        requirements = [r for r in dataflow.requirements if r.table == name]
        checks.setdefault(fold.stage, []).append((tag, ValidationProcessor(table, routes, policy, requirements,
                                                                           buckets, chunks)))
    line = start.where(col("stage").isin(*start_stages)) if start is not None and start_stages else None
    validate = partial(_validated, dataflow, tables, changes, policy, buckets, chunks)
    line = validate(line, own_validations.pop(None, []))
    for node in dataflow.stages:
        line = validate(line, own_validations.pop(node.id, []))
        inputs = ([] if line is None else [line]) + entering.pop(node.id, [])
        _check_fed(dataflow, node, inputs, start_stages)
        downstream = None if node.downstream is None else dataflow.stage(node.downstream)
        line = packed_layout(reduce(DataFrame.unionByName, inputs), node, downstream, buckets, chunks,
                             checks.get(node.id, ()))
    return line


def source_routes(dataflow: Dataflow, table: str) -> list[tuple[SourceRoute, StageNode]]:
    """The routes of ``table``'s changes into the dataflow's stages, each with its stage."""
    return [(route, dataflow.stage(route.stage)) for route in dataflow.sources if route.table == table]


def _validated(dataflow: Dataflow, tables: Mapping[str, Table], changes: Mapping[str, DataFrame], policy: str,
               buckets: int, chunks: int, line: DataFrame | None, names: Iterable[str]) -> DataFrame | None:
    """``line`` through the own validation operators of the tables ``names``, one after the other."""
    for name in names:
        requirements = [r for r in dataflow.requirements if r.table == name]
        line = validated_changes(line, changes[name], tables[name], source_routes(dataflow, name), policy,
                                 requirements, buckets, chunks)
    return line


def _check_fed(dataflow: Dataflow, node: StageNode, inputs: list[DataFrame], start_stages: Collection[int]) -> None:
    """Refuse a stage nothing sends rows to (a malformed dataflow): no source route, no stage below
    it, no start rows."""
    fed = (any(route.stage == node.id for route in dataflow.sources) or node.id in start_stages
           or any(other.downstream == node.id for other in dataflow.stages))
    if not fed or not inputs:
        raise ValueError(
            f"stage {node.id} ({node.stage.name}) has no input: no source route ends at it and no stage feeds it")


def spark_tables(dataflow: Dataflow, catalog: Catalog) -> dict[str, Table]:
    """The tables ``dataflow`` reads."""
    return {name: catalog.table(name) for name in dataflow.tables()}


#: The JVM delta strategy's state: Parquet logs in the work directory (``delta_sql/state_files``).
DELTA_STATE = "delta-state"
DELTA_LAYOUT = "Parquet logs of the tables' rows and the aggregate's partial sums (JVM delta queries)"


class ConnectApplyError(NotImplementedError):
    """``apply`` asked of a runner on a Spark Connect session, whose sink runs on the server."""


class StaticStreamError(NotImplementedError):
    """A static table fed by a change stream the caller gives: its first load cannot be told apart."""


def refuse_static_streams(tables: Iterable[Table]) -> None:
    """Refuse an ``ivm.static`` table read from a given change stream. A static table takes rows only
    in the view's first batch that commits a change (``dependencies.table_defect``); ``apply`` knows its
    batches and checks that on the driver (one flag, no per-row state), but a stream's micro-batches are
    Spark's own split of it, so no stage can tell the first load from a later change."""
    for table in tables:
        if table.static:
            raise StaticStreamError(
                f"table {table.name} is static (ivm.static), which the Spark runner checks only for batches given "
                "to apply(), not for a change stream it reads; feed it through apply(), or drop the flag")


def _numbered(directory: Path) -> list[int]:
    return [int(p.name) for p in directory.iterdir() if p.name.isdigit()] if directory.is_dir() else []


#: Spark's error when a Python process it started did not connect back in time (PythonWorkerFactory)
CONNECT_BACK = "Python worker failed to connect back"
CONNECT_BACK_RETRIES = 2

_PYTHON_ERROR = re.compile(r"^(?:[\w.]+\.)?(\w+(?:Error|Exception)): (.+)$", re.MULTILINE)


def _python_error(err: StreamingQueryException) -> tuple[str, str]:
    """The Python error a worker raised, out of the JVM's wrapped stack trace: (class name, message)."""
    text = str(err)
    found = [m for m in _PYTHON_ERROR.finditer(text) if m.group(1) not in ("PythonException", "SparkException")]
    if found:
        return found[-1].group(1), found[-1].group(2).strip()
    return "StreamingQueryException", text.splitlines()[0] if text else repr(err)
