"""How a keyed stage runs under ``transformWithState``: packed rows, buckets of keys, chunks of states.

Each stage is ``groupBy(bucket).transformWithState(...)`` over packed rows (``spark_edges``): a Spark
group per bucket of stage keys, the bucket's key states in one ListState of chunks (chunk → pickled
dict of key text → the key's pickled state, ``spark_bucket_state``), read with one state call and
written with one per bucket a batch touches, each key's state unpickled only when the batch touches it. The layouts
measured against it (a group and a ValueState per key, one Spark row per change; MapState entries per
key or per chunk; pandas) are in examples/benchmarks/spark_state_access.py and spark_profile.py, with
their numbers in RESULTS.md.

Stages keyed by a constant keep one state object for the whole stage, which one chunk would re-pickle
every batch. Four kinds have layouts of their own, each running the stage's own logic over a state
backend (the stage's code is the same as the local runners', only where its state lives differs):

- ``PagedStateProcessor`` runs every ``GjtStage`` and ``RpaiTreeStage``, the per-key index under a
  global threshold and a global MIN/MAX aggregate over their states in pages of a MapState, page id
  → pickled page, through a per-batch cache that writes back only the pages a batch changed
  (``PAGED_STATES``):
  - a GJT (IEDyn's T-representation; keyed by a constant when a pure inequality join shares no
    variable): ``operators/stages/gjt/pages.py``, one page per reduct row, each sorted group a B-tree
    of pages with per-child sums, a meta page per key. O(|Δ| log_B n) pages plus the leaf pages of
    the rows its walks yield (RESULTS.md, "Inequality joins": the layouts side by side);
  - an RPAI tree (VWAP, MST): ``operators/stages/nested/pages.py``, each tree a B-tree of pages with
    page-relative keys (``operators/structures/paged_rpai_tree.py``), so ``shiftKeys`` changes one
    root path of pages: O(|Δ| · trees · log_B n) pages, trees the bound tree plus one per required
    sum and group (RESULTS.md, "RPAI tree in pages");
  - a ``PerKeyIndexStage`` under a global threshold (PSP, TPC-H Q22: no correlation key): the same
    module, its trees keyed by the compared value in pages: O(|Δ| log_B n) pages;
  - a ``GroupAggregateStage`` without GROUP BY whose kept values are all MIN/MAX(_BY):
    ``operators/stages/aggregate_pages.py``, a page per distinct value with its multiplicity and the
    present values as a B-tree of pages (its ends the answer): O(|Δ| log_B n) pages.
  A constant key still does not scale out: its pages all live in one Spark group.
- ``TopKProcessor`` runs a ``TopKStage``'s own ``step`` over its Spark state backend
  (operators/runtime/spark_top_k.py): the multiset of rows in a MapState by chunk of rows (written
  per changed chunk) and a bounded buffer of the best rows (O(k)).

The other constant-keyed stages still run as one chunk, O(their state) per batch: a global aggregate
with DISTINCT or a percentile, a constant-keyed join-select threshold (``JoinSelectStage`` with no
key: Q11's), the PAI map's global index (``AggregateIndexStage``: Example 2.1) and RPAI's general
algorithm (``GeneralNestedStage``: SQ1, SQ2, NQ2). The first three could be split as the others
were (the join-select's rows ordered by the compared value as a paged B-tree, as the GJT's sorted
groups; DISTINCT values by page; the PAI map's index by q in pages): not built yet. The general
algorithm gains nothing from pages: its own work per batch is already O(state) (RPAI §4.2: an
inner row scans every free key, and the result is recomputed from the whole result map each batch).
(A global SUM/COUNT/AVG keeps O(1) state: one chunk costs nothing there.)
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Protocol

from pyspark.sql import DataFrame
from pyspark.sql.streaming import StatefulProcessor, StatefulProcessorHandle
from pyspark.sql.streaming.stateful_processor import TimerValues
from pyspark.sql.types import Row as SparkRow

from operators.held_errors import raise_emitted_errors
from operators.runtime.dataflow import StageNode
from operators.runtime.spark_bucket_state import CHUNKS_SCHEMA, BucketStates
from operators.runtime.spark_counters import OFF, Counters, task_counters
from operators.runtime.spark_edges import (
    DEFAULT_BUCKETS,
    DEFAULT_CHUNKS,
    RESULT,
    key_text,
    pack,
    unpack,
)
from operators.runtime.spark_forwarding import run_operator
from operators.runtime.spark_top_k import SparkOrderedRows
from operators.stages.aggregate_pages import PagedGroupState, pages_ordered_values
from operators.stages.base import Change
from operators.stages.gjt import GjtStage
from operators.stages.gjt.pages import PagedGjtState
from operators.stages.nested.pages import PagedKeyIndexState, PagedRpaiState
from operators.stages.nested.per_key_index import PerKeyIndexStage
from operators.stages.nested.rpai_tree import RpaiTreeStage
from operators.stages.top_k import TopKStage
from operators.structures.page_store import PageStore
from operators.zset import Changelog, Row


def state_name(stage_id: int) -> str:
    """The state of a stage, named after the stage so the checkpoint's state metadata tells which
    operator runs which stage."""
    return f"stage_{stage_id}"


def packed_layout(stage_input: DataFrame, node: StageNode, downstream: StageNode | None,
                  buckets: int = DEFAULT_BUCKETS, chunks: int = DEFAULT_CHUNKS,
                  validations: Sequence[tuple[int, FoldedCheck]] = ()) -> DataFrame:
    """The layout of a stage on packed rows: top-k by its buffer, a GJT or an RPAI tree in pages, every
    other stage by chunks;
    ``validations`` are the tables' checks folded into it (``spark_operators``), each with the
    ``stage`` value of its table's packed changes."""
    if validations:
        processor = FoldedStageProcessor(node, downstream, buckets, chunks, validations)
        return run_operator(stage_input, processor, {node.id, *(tag for tag, _ in validations)})
    if isinstance(node.stage, TopKStage):
        return run_top_k(stage_input, node, downstream, buckets)
    if paged_state(node.stage) is not None:
        return run_operator(stage_input, PagedStateProcessor(node, downstream, buckets), {node.id})
    return run_packed(stage_input, node, downstream, buckets, chunks)


def run_packed(stage_input: DataFrame, node: StageNode, downstream: StageNode | None,
               buckets: int = DEFAULT_BUCKETS, chunks: int = DEFAULT_CHUNKS) -> DataFrame:
    """Packed rows (``PACKED_SCHEMA``) through ``node``'s stage, one Spark group per bucket; rows
    addressed elsewhere pass through (``spark_forwarding``)."""
    return run_operator(stage_input, PackedStageProcessor(node, downstream, buckets, chunks), {node.id})


def run_top_k(stage_input: DataFrame, node: StageNode, downstream: StageNode | None,
              buckets: int = DEFAULT_BUCKETS) -> DataFrame:
    """Packed rows (``PACKED_SCHEMA``) through a ``TopKStage`` with the O(changed + k) layout above (its
    one key's rows all arrive in one bucket)."""
    return run_operator(stage_input, TopKProcessor(node, downstream, buckets), {node.id})


class PackedStageProcessor(StatefulProcessor):
    """Runs one ``KeyedStage`` over the keys of a bucket, on packed rows: the bucket's changes grouped by
    key text, ``stage.process`` once per key, the bucket's states read and written once
    (``process_chunks``), the output packed for the downstream stage's buckets."""

    def __init__(self, node: StageNode, downstream: StageNode | None, buckets: int = DEFAULT_BUCKETS,
                 chunks: int = DEFAULT_CHUNKS):
        self.node = node
        self.downstream = downstream
        self.buckets = buckets
        self.chunks = chunks

    def init(self, handle: StatefulProcessorHandle) -> None:
        self.counters = task_counters(state_name(self.node.id))
        self.states = handle.getListState(state_name(self.node.id), CHUNKS_SCHEMA)
        self.address = output_address(self.node, self.downstream)
        self.downstream_key = downstream_key_text(self.node, self.downstream)

    def handleInputRows(self, key: Any, rows: Iterator[SparkRow], timerValues: TimerValues) -> Iterator[SparkRow]:
        counters = self.counters
        with counters.phase("python"):
            by_key = changes_by_key(rows, counters)
            bucket = BucketStates(self.states, self.buckets, self.chunks, counters=counters)
            emitted = process_chunks(self.node, bucket, by_key, counters)
            with counters.phase("pickle changes"):
                return packed_output(emitted, self.address, self.downstream_key, self.buckets, counters)

    def close(self) -> None:
        self.counters.flush()


class FoldedCheck(Protocol):
    """A table's validation run inside a stage's operator (``spark_validation.ValidationProcessor``)."""

    counters: Counters

    def init(self, handle: StatefulProcessorHandle) -> None: ...

    def checked(self, rows: list[SparkRow], counters: Counters) -> list[tuple]: ...


class FoldedStageProcessor(PackedStageProcessor):
    """A stage with its tables' validations folded in (``spark_operators``): in one Spark group per
    bucket, each table's packed changes are checked against that table's rows (a state variable of
    their own, the validation's), the accepted ones join the stage's other input as the stage's
    changes, and the rejects go out to the sink beside the stage's output. A rejection under the
    ``error`` policy raises before any state is written, as the validation's own operator does."""

    def __init__(self, node: StageNode, downstream: StageNode | None, buckets: int, chunks: int,
                 validations: Sequence[tuple[int, FoldedCheck]]):
        super().__init__(node, downstream, buckets, chunks)
        self.validations = tuple(validations)

    def init(self, handle: StatefulProcessorHandle) -> None:
        for _, check in self.validations:
            check.init(handle)
        super().init(handle)

    def handleInputRows(self, key: Any, rows: Iterator[SparkRow], timerValues: TimerValues) -> Iterator[SparkRow]:
        counters, stage_id = self.counters, self.node.id
        with counters.phase("python"):
            with counters.phase("input rows"):
                rows = list(rows)
            by_key = changes_by_key([row for row in rows if row.stage == stage_id], counters)
            rejects = []
            for tag, check in self.validations:
                for entry in check.checked([row for row in rows if row.stage == tag], check.counters):
                    if entry[0] == stage_id:
                        _, text, port, row, weight = entry
                        by_key.setdefault(text, []).append(Change(port, row, weight))
                    else:
                        rejects.append(entry)
            bucket = BucketStates(self.states, self.buckets, self.chunks, counters=counters)
            emitted = process_chunks(self.node, bucket, by_key, counters)
            with counters.phase("pickle changes"):
                output = packed_output(emitted, self.address, self.downstream_key, self.buckets, counters)
                return itertools.chain(output, (SparkRow(**record) for record in pack(rejects, self.buckets)))

    def close(self) -> None:
        for _, check in self.validations:
            check.counters.flush()
        super().close()


def changes_by_key(rows: Iterable[SparkRow], counters: Counters = OFF) -> dict[str, list[Change]]:
    """A bucket's packed changes grouped by the text of their stage key."""
    with counters.phase("input rows"):
        rows = list(rows)
    by_key: dict[str, list[Change]] = {}
    with counters.phase("unpickle changes"):
        for packed in rows:
            for text, port, row, weight in unpack(packed.changes):
                by_key.setdefault(text, []).append(Change(port, row, weight))
    counters.count("groups")
    counters.count("changes in", sum(map(len, by_key.values())))
    return by_key


def packed_output(emitted: Changelog, address: tuple[int, int], downstream_key: Callable[[Row], str],
                  buckets: int, counters: Counters = OFF) -> Iterator[SparkRow]:
    """A stage's output rows packed for the buckets of the stage they go to; a held error inserted
    fails the micro-batch instead (operators/held_errors.py: this engine holds none)."""
    raise_emitted_errors(emitted)
    destination, port = address
    addressed = ((destination, downstream_key(row), port, row, weight) for row, weight in emitted)
    counters.count("changes out", len(emitted))
    return iter([SparkRow(**record) for record in pack(addressed, buckets)])


def output_address(node: StageNode, downstream: StageNode | None) -> tuple[int, int]:
    """(stage id, port) the stage's output rows go to; ``RESULT`` for the last stage."""
    return (RESULT, 0) if downstream is None else (downstream.id, node.downstream_port)


def downstream_key_text(node: StageNode, downstream: StageNode | None) -> Callable[[Row], str]:
    """The key text of an output row at the stage it goes to ("" for the result)."""
    if downstream is None:
        return lambda row: ""
    key_of = downstream.stage.key_function(node.downstream_port)
    return lambda row: key_text(key_of(row))


def process_chunks(node: StageNode, bucket: BucketStates, by_key: dict[str, list[Change]],
                   counters: Counters = OFF) -> list[tuple[Row, int]]:
    """``stage.process`` once per key text of a bucket, its states read from and written back to
    ``bucket`` (one state call each way, ``spark_bucket_state``); returns the stage's output rows."""
    stage = node.stage
    emitted: list[tuple[Row, int]] = []
    for text, changes in by_key.items():
        state = bucket.get(text)
        with counters.phase("stage"):
            first = changes[0]
            new_state, output = stage.process(stage.key_of(first.port, first.row), state, changes)
        bucket.put(text, new_state)
        emitted.extend(output)
    bucket.save()
    return emitted


class MapStatePages:
    """A ``page_store.PageBackend`` over a MapState page id → pickled page."""

    def __init__(self, state: Any) -> None:
        self.state = state

    def read(self, page: str) -> bytes | None:
        found = self.state.getValue((page,))
        return None if found is None else found[0]

    def write(self, page: str, data: bytes) -> None:
        self.state.updateValue((page,), (data,))

    def remove(self, page: str) -> None:
        self.state.removeKey((page,))

    def scan(self) -> Iterator[tuple[str, bytes]]:
        return ((page, data) for (page,), (data,) in self.state.iterator())


#: The stages whose state lives in pages, each with the class giving ``process`` one key's state over
#: a batch's ``PageStore`` (call its ``save`` with what ``process`` returned): GJTs, RPAI trees, the
#: per-key index under a global threshold and global MIN/MAX aggregates, keyed by a constant where one
#: chunk would re-pickle them whole every batch.
PAGED_STATES: tuple[tuple[Callable[[Any], bool], Callable[[Any, PageStore, tuple], Any]], ...] = (
    (lambda stage: isinstance(stage, GjtStage), PagedGjtState),
    (lambda stage: isinstance(stage, RpaiTreeStage), PagedRpaiState),
    (lambda stage: isinstance(stage, PerKeyIndexStage) and stage.constant_key, PagedKeyIndexState),
    (pages_ordered_values, PagedGroupState),
)


def paged_state(stage: Any) -> Callable[[Any, PageStore, tuple], Any] | None:
    """The paged state class of ``stage``, or None when its state is kept in chunks."""
    return next((paged for applies, paged in PAGED_STATES if applies(stage)), None)


class PagedStateProcessor(StatefulProcessor):
    """A stage whose batch reads and writes the pages it touches, not its whole state: every ``GjtStage``
    (IEDyn's T-representation, ``gjt.pages``), ``RpaiTreeStage`` (its RPAI trees, ``nested.pages``) and
    global MIN/MAX aggregate (``aggregate_pages``).

    The stage's states live in one MapState per bucket, page id → pickled page (ids start with the
    key's text). A batch builds a ``PageStore`` over the MapState (its cache starts empty: nothing read
    in an earlier batch or before a restart is trusted), runs ``stage.process`` per key over the
    stage's paged state (``PAGED_STATES``), and writes back only the pages it changed, after the last
    key: a stage that raises leaves the stored pages as they were. The batch's page and byte counts
    stay in ``last_batch`` and go to the profile's counters ("pages read", "pages written").
    """

    def __init__(self, node: StageNode, downstream: StageNode | None, buckets: int = DEFAULT_BUCKETS):
        self.node = node
        self.downstream = downstream
        self.buckets = buckets
        self.paged_state = paged_state(node.stage)
        self.last_batch: PageStore | None = None

    def init(self, handle: StatefulProcessorHandle) -> None:
        self.counters = task_counters(f"{state_name(self.node.id)}_pages")
        self.pages = handle.getMapState(f"{state_name(self.node.id)}_pages", "page string", "data binary")
        self.address = output_address(self.node, self.downstream)
        self.downstream_key = downstream_key_text(self.node, self.downstream)

    def handleInputRows(self, key: Any, rows: Iterator[SparkRow], timerValues: TimerValues) -> Iterator[SparkRow]:
        stage, counters = self.node.stage, self.counters
        with counters.phase("python"):
            store = PageStore(MapStatePages(self.pages))
            emitted: Changelog = []
            for changes in changes_by_key(rows, counters).values():
                first = changes[0]
                stage_key = stage.key_of(first.port, first.row)
                state = self.paged_state(stage, store, stage_key)
                with counters.phase("stage"):
                    result, output = stage.process(stage_key, state, changes)
                    state.save(result)
                emitted.extend(output)
            store.flush()
            self.last_batch = store
            counters.count("pages read", store.pages_read)
            counters.count("pages written", store.pages_written)
            with counters.phase("pickle changes"):
                return packed_output(emitted, self.address, self.downstream_key, self.buckets, counters)

    def close(self) -> None:
        self.counters.flush()


class TopKProcessor(StatefulProcessor):
    """A ``TopKStage`` (keyed by a constant) run by its own ``step`` over its Spark state backend,
    ``SparkOrderedRows`` (operators/runtime/spark_top_k.py): O(changed + k) state per batch."""

    def __init__(self, node: StageNode, downstream: StageNode | None, buckets: int = DEFAULT_BUCKETS):
        self.node = node
        self.downstream = downstream
        self.buckets = buckets

    def init(self, handle: StatefulProcessorHandle) -> None:
        name = state_name(self.node.id)
        self.counters = task_counters(f"{name}_rows")
        self.rows = handle.getMapState(f"{name}_rows", "chunk int", "rows binary")
        self.best = handle.getValueState(f"{name}_best", "buffer binary, bound binary, complete boolean")
        self.address = output_address(self.node, self.downstream)
        self.downstream_key = downstream_key_text(self.node, self.downstream)

    def handleInputRows(self, key: Any, rows: Iterator[SparkRow], timerValues: TimerValues) -> Iterator[SparkRow]:
        with self.counters.phase("python"):
            return self._process(rows)

    def _process(self, rows: Iterator[SparkRow]) -> Iterator[SparkRow]:
        self.counters.count("groups")
        changes = [(row, weight) for packed in rows for _, _, row, weight in unpack(packed.changes)]
        ordered = SparkOrderedRows(self.node.stage, self.rows, self.best)
        emitted = self.node.stage.step(ordered, changes)
        ordered.store()
        self.counters.count("changes in", len(changes))
        return packed_output(emitted, self.address, self.downstream_key, self.buckets, self.counters)

    def close(self) -> None:
        self.counters.flush()


