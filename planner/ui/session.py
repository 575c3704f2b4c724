"""One run on the page: a maintained view, its stream cut into batches, and what the page is told.

The page's buttons call ``load``, ``step``, ``start``, ``pause``, ``reset`` and ``check``; every change
of state is appended to a bounded event log (``events_since``) that the server streams to the page
as server-sent events. While running, a worker thread applies batches back to back and publishes at
most ``PUBLISH_EVERY`` seconds apart (the deltas in between merged), so the page keeps up however
fast the engine is; a single step always publishes.

The page drives the local engine only: it reads the runner's per-stage counts and state in
process, which the Spark runner keeps in executors' state stores (README says so).
"""

from __future__ import annotations

import threading
import time
from collections import Counter, deque
from collections.abc import Mapping
from pathlib import Path

import attrs

from catalog.schema import Catalog, CatalogError
from operators.runtime.stream import StreamFormatError, UpdateBatch, batches
from operators.runtime.validate import Rejected
from planner.compiler import UnsupportedQueryError
from planner.sql.errors import UnsupportedSqlError
from planner.ui.live import TABLE_ROWS, cells, chart_data, chart_spec, delta_summary, estimated_bytes
from planner.ui.plan_graph import plan_document
from planner.ui.streams import InputError, Stream, StreamChoice, make_catalog, make_updates
from planner.view import MaintainedView
from planner.workloads.oracle import DuckDBOracle, StreamTables, assert_matches_reference, unmatched_rows

PUBLISH_EVERY = 0.1  # seconds between messages while running
EVENT_LOG = 256  # messages kept for a page that reconnects; older ones mean "fetch the whole state"
HISTORY = 2_000  # per-batch points (latency, rate, chart value) kept for the charts
LAST_REASONS = 5
POLICIES = ("quarantine", "error")


#: the page's default too (index.html): the default Q3 run's top 10 is full from the third batch
DEFAULT_BATCH_SIZE = 10_000


@attrs.frozen
class RunConfig:
    """The page's inputs for one run."""

    sql: str
    catalog: str = "tpch"
    ddl: str = ""
    stream: StreamChoice = StreamChoice()
    batch_size: int = DEFAULT_BATCH_SIZE
    on_invalid: str = "quarantine"

    @classmethod
    def from_json(cls, data: Mapping) -> RunConfig:
        if not str(data.get("sql", "")).strip():
            raise InputError("sql: the query is empty")
        try:
            batch_size = int(data.get("batch_size", DEFAULT_BATCH_SIZE))
        except (TypeError, ValueError) as err:
            raise InputError(f"batch size: {err}") from err
        if batch_size < 1:
            raise InputError(f"batch size: must be at least 1, got {batch_size}")
        on_invalid = str(data.get("on_invalid", "quarantine"))
        if on_invalid not in POLICIES:
            raise InputError(f"on invalid: {on_invalid!r} is not one of {', '.join(POLICIES)}")
        if str(data.get("engine", "local")) != "local":
            raise InputError("engine: the page drives the local engine only (ivm run --engine spark runs Spark)")
        return cls(str(data["sql"]), str(data.get("catalog", "tpch")), str(data.get("ddl", "")),
                   StreamChoice.from_json(data.get("stream", {})), batch_size, on_invalid)


class PageError(Exception):
    """A failure the page shows in its error box: ``kind`` is refused, input, stream or engine."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind
        self.message = message

    def as_json(self) -> dict:
        return {"kind": self.kind, "message": self.message}


REFUSALS = (UnsupportedQueryError, UnsupportedSqlError)


class Run:
    """A loaded configuration: the view, the batches, and how far the stream has been applied."""

    def __init__(self, config: RunConfig, catalog: Catalog, view: MaintainedView, stream: Stream):
        self.config = config
        self.catalog = catalog
        self.view = view
        self.stream = stream
        self.batches: list[UpdateBatch] = list(batches(stream.updates, config.batch_size))
        self.plan = plan_document(view.compiled)
        self.chart = chart_spec(view.compiled, view.columns)
        self.position = 0
        self.applied = 0
        self.pending: Counter = Counter()  # result changes not yet sent to the page
        self.history: deque[dict] = deque(maxlen=HISTORY)
        self.unsent: list[dict] = []  # history points not yet sent
        self.oracle: DuckDBOracle | None = None

    @property
    def quarantined(self) -> list[Rejected]:
        return [*self.stream.without_seq, *self.view.rejected]

    def close(self) -> None:
        self.view.close()
        if self.oracle is not None:
            self.oracle.close()


class Session:
    """The server's one run, shared by every open page (the page is a view of it, not a login)."""

    def __init__(self, data_dir: Path):
        self.data_dir = data_dir
        self.lock = threading.RLock()
        self.run: Run | None = None
        self.loaded_with: Mapping | None = None  # the inputs of the run, for Reset
        # the last stream built: Reset, or another query over it, costs no second build (12 s at SF 0.1)
        self.streams: tuple[tuple, Stream] | None = None
        self.error: dict | None = None
        self.check_result: dict | None = None
        self.running = False
        self.worker: threading.Thread | None = None
        self.events: deque[tuple[int, dict]] = deque(maxlen=EVENT_LOG)
        self.sequence = 0

    # -- the buttons ---------------------------------------------------------------------------

    def load(self, data: Mapping) -> dict:
        """Compile the query and build the stream; the plan is shown even before the first batch."""
        self.pause()
        with self.lock:
            self._close_run()
            self.error = self.check_result = None
            try:
                config = RunConfig.from_json(data)
                self.run = self._open(config)
                self.loaded_with = dict(data)
            except InputError as err:
                self._fail(PageError("input", str(err)))
                raise self._last_error() from err
            except PageError as err:
                self._fail(err)
                raise
            self._publish("loaded")
            return self.state()

    def reset(self) -> dict:
        """The same inputs from the first batch again, on a fresh view."""
        with self.lock:
            inputs = self.loaded_with
        if inputs is None:
            raise PageError("input", "nothing to reset: load a query first")
        return self.load(inputs)

    def step(self) -> dict:
        """Apply one batch (pausing a run first)."""
        self.pause()
        with self.lock:
            self._step_once()
            self._publish("batch")
            return self.state()

    def start(self) -> dict:
        with self.lock:
            self._require_run()
            if not self.running and not self._finished():
                self.running = True
                self.worker = threading.Thread(target=self._run_batches, name="ivm-ui-run", daemon=True)
                self.worker.start()
            self._publish("status")
            return self.state()

    def pause(self) -> dict:
        with self.lock:
            self.running = False
            worker = self.worker
        if worker is not None and worker is not threading.current_thread():
            worker.join()
        with self.lock:
            self.worker = None
            return self.state()

    def check(self) -> dict:
        """Recompute the query with DuckDB over the tables as the stream defines them after the last
        applied update, and compare with the maintained result (ORDER BY and LIMIT respected)."""
        self.pause()
        with self.lock:
            run = self._require_run()
            maintained = run.view.result()
            try:
                if run.oracle is None:
                    run.oracle = DuckDBOracle(run.catalog)
                    run.oracle.load_stream(StreamTables.from_updates(run.catalog, run.stream.updates))
                last_seq = run.batches[run.position - 1][-1].seq if run.position else 0
                run.oracle.as_of(last_seq)
                reference = run.oracle.reference(run.config.sql)
            except Exception as err:  # DuckDB may not run every query the planner maintains
                self.check_result = {"equal": None, "message": f"the recomputation failed: {err}"}
            else:
                self.check_result = _compare(maintained, reference, run.position)
            self._publish("check")
            return self.check_result

    # -- what the page reads ---------------------------------------------------------------------

    def state(self) -> dict:
        """Everything the page shows, for a page that opens or has fallen behind the event log."""
        with self.lock:
            state = {"sequence": self.sequence, "running": self.running, "error": self.error,
                     "check": self.check_result, "inputs": self.loaded_with}
            run = self.run
            if run is None:
                return state | {"loaded": False}
            return state | self._progress(run) | {
                "loaded": True, "plan": run.plan, "chart": run.chart, "columns": list(run.view.columns),
                "history": list(run.history), "stream": run.config.stream.describe(),
                "table": self._table(run), "delta": delta_summary(Counter()),
            }

    def events_since(self, sequence: int) -> list[tuple[int, dict]] | None:
        """Messages after ``sequence``, or None when some were already dropped (re-read ``state``)."""
        with self.lock:
            if self.events and self.events[0][0] > sequence + 1 and sequence < self.sequence:
                return None
            return [(number, event) for number, event in self.events if number > sequence]

    # -- inside ----------------------------------------------------------------------------------

    def _open(self, config: RunConfig) -> Run:
        try:
            catalog = make_catalog(config.catalog, config.ddl)
        except CatalogError as err:
            raise PageError("input", f"catalog: {err}") from err
        except InputError as err:
            raise PageError("input", str(err)) from err
        try:
            # the generic stages, not the compiled program: the page shows each stage's rows in and out
            # per batch and its state by stage, which only the stage-by-stage runner counts
            view = MaintainedView(config.sql, catalog, on_invalid=config.on_invalid, compiled=False)
        except REFUSALS as err:
            raise PageError("refused", str(err)) from err
        except CatalogError as err:
            raise PageError("refused", str(err)) from err
        try:
            key = (config.catalog, config.ddl, config.stream)
            if self.streams is None or self.streams[0] != key or config.stream.kind == "path":  # files may change
                self.streams = None  # the old stream's memory goes before the new one is built
                self.streams = (key, make_updates(config.stream, catalog, self.data_dir))
            return Run(config, catalog, view, self.streams[1])
        except (InputError, StreamFormatError, CatalogError, ValueError, OSError) as err:
            view.close()
            raise PageError("stream", str(err)) from err

    def _require_run(self) -> Run:
        if self.run is None:
            raise PageError("input", "no query loaded: press Start or Step after writing one")
        return self.run

    def _finished(self) -> bool:
        return self.run is None or self.run.position >= len(self.run.batches)

    def _step_once(self) -> None:
        run = self._require_run()
        if self._finished():
            raise PageError("input", f"the stream is over: all {len(run.batches)} batches applied (Reset starts again)")
        batch = run.batches[run.position]
        runner = run.view.runner
        runner.batch_counts = {}  # a batch with no accepted row does not reach the runner
        started = time.perf_counter()
        try:
            delta = run.view.apply(batch)
        except Exception as err:  # the batch is atomic: the view is as before it, so the page can go on
            self._fail(PageError("engine", f"batch {run.position + 1}: {type(err).__name__}: {err}"))
            raise self._last_error() from err
        seconds = time.perf_counter() - started
        run.position += 1
        run.applied += len(batch)
        for row, weight in delta:
            run.pending[row] += weight
        point = {"batch": run.position, "latency_ms": round(seconds * 1000, 3),
                 "updates_per_s": round(len(batch) / seconds) if seconds > 0 else None}
        if run.chart["kind"] == "line":
            point |= chart_data(run.chart, list(run.view.rows(limit=1)))
        run.history.append(point)
        run.unsent.append(point)
        if self.error and self.error["kind"] == "engine":
            self.error = None  # the failing batch went through after all

    def _run_batches(self) -> None:
        last = 0.0
        while True:
            with self.lock:
                if not self.running:
                    return
                try:
                    self._step_once()
                except PageError:
                    self.running = False
                except Exception as err:  # the page must learn why the run stopped, not see it "running"
                    self.running = False
                    self._fail(PageError("engine", f"{type(err).__name__}: {err}"))
                if self._finished():
                    self.running = False
                if not self.running or time.perf_counter() - last >= PUBLISH_EVERY:
                    self._publish("batch")
                    last = time.perf_counter()
            time.sleep(0.001)  # the lock is not fair: give the page's requests (Pause) their turn

    def _fail(self, error: PageError) -> None:
        self.error = error.as_json()
        self._publish("error")

    def _last_error(self) -> PageError:
        return PageError(self.error["kind"], self.error["message"])

    def _publish(self, kind: str) -> None:
        """Append one message: status always, progress once loaded, and after batches the table, the
        delta since the last message and the new points (a Check or an error leaves them shown)."""
        self.sequence += 1
        event = {"type": kind, "running": self.running, "error": self.error, "check": self.check_result}
        run = self.run
        if run is not None:
            event |= self._progress(run)
        if run is not None and kind == "batch":
            event |= {"table": self._table(run), "delta": delta_summary(run.pending), "points": run.unsent}
            run.pending = Counter()
            run.unsent = []
        self.events.append((self.sequence, event))

    def _progress(self, run: Run) -> dict:
        runner = run.view.runner
        sizes = runner.state_size()
        stages = [{"id": node.id, "name": node.stage.name, "keys": sizes.get(node.stage.name, 0),
                   "bytes": estimated_bytes(runner.states[node.id]),
                   "rows_in": runner.batch_counts.get(node.stage.name, (0, 0))[0],
                   "rows_out": runner.batch_counts.get(node.stage.name, (0, 0))[1]}
                  for node in run.view.compiled.dataflow.stages]
        quarantined = run.quarantined
        return {"batch": run.position, "batches": len(run.batches), "applied": run.applied,
                "updates": len(run.stream.updates), "stages": stages,
                "quarantine": {"count": len(quarantined), "last": [_reason(r) for r in quarantined[-LAST_REASONS:]]}}

    def _table(self, run: Run) -> dict:
        # the first rows off the view's ordered result: O(TABLE_ROWS) per batch, whatever the result's size
        rows = list(run.view.rows(limit=TABLE_ROWS))
        return {"columns": list(run.view.columns), "rows": cells(rows), "total": run.view.current.total(),
                "chart": chart_data(run.chart, rows)}

    def _close_run(self) -> None:
        if self.run is not None:
            self.run.close()
            self.run = None

    def close(self) -> None:
        self.pause()
        with self.lock:
            self._close_run()


def _reason(rejected: Rejected) -> str:
    update = rejected.update
    return f"{update.table} _seq {update.seq}: {rejected.reason}"


def _compare(maintained: list[tuple], reference, position: int) -> dict:
    where = f"after batch {position}"
    try:
        assert_matches_reference(maintained, reference, where)
    except AssertionError as err:
        extra, missing = unmatched_rows(maintained, reference.visible)
        return {"equal": False, "message": f"differs {where}: {err}", "maintained_only": cells(extra[:20]),
                "recomputed_only": cells(missing[:20])}
    return {"equal": True, "rows": len(maintained),
            "message": f"equal {where}: {len(maintained)} rows maintained, the same recomputed by DuckDB"}
