"""Run the user-view suite: plan every view, maintain it over its schema's change stream batch by
batch, compare after every batch with a recomputation by ``spark.sql`` (or DuckDB), and classify it.

A view is *equal* (the maintained result matched the reference after every batch, the empty
database before the first included), *refused* (planning raised one of the engine's refusals; the
message is the user's answer), *wrong* (a result differed; the first differing batch and the
difference are kept, a Spark run-time error where Spark returns rows included), *crash* (any other
exception, in planning or while maintaining) or *no reference* (the reference itself could not
compute the view over data: a DuckDB dialect gap, never expected of Spark).

The reference reads the stream files directly (``StreamTables`` over the Parquet files, the table
states derived by ``oracle.state_sql``), never the engine's catalog or state, so it works for tables
the engine refuses. The engine reads the same files with its own reader (``read_stream``) and the
catalog of ``SchemaCatalogs``.
"""

from __future__ import annotations

import bisect
import datetime as dt
import re
import tempfile
import traceback
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path

import attrs
import pyarrow as pa
import pyarrow.parquet as pq
from tabulate import tabulate

from catalog.schema import Catalog, CatalogError, Column, Table
from catalog.types import AtomicType
from operators.runtime.stream import OP_COLUMN, SEQ_COLUMN, UpdateBatch, read_stream
from planner.compiler import UnsupportedQueryError
from planner.ir.values import SqlRuntimeError
from planner.sql.errors import UnsupportedSqlError
from planner.view import MaintainedView
from planner.workloads.oracle import DuckDBOracle, Reference, StreamTables, assert_matches_reference
from planner.workloads.spark_reference import SparkReference
from planner.workloads.user_views import (
    ALL_SCHEMAS,
    SchemaCatalogs,
    TableShape,
    UserView,
    load_views,
    schema_ddl,
    table_shapes,
)

#: what planning raises when the engine declines a view, with a message meant for the user
REFUSALS = (UnsupportedSqlError, UnsupportedQueryError, CatalogError)
KINDS = ("equal", "refused", "wrong", "crash", "no reference")


@attrs.frozen
class Outcome:
    """How one view fared. ``detail``: the refusal, the first difference or the exception;
    ``informative``/``compared``: batches whose reference result held a non-NULL value / batches compared;
    ``emulated``: planned under the emulation of item 7 (``SchemaCatalogs``: the whole DDL is refused);
    ``final_rows``/``reference_error``: the reference's result over the whole stream, computed for every
    view (refused ones too: each view must be valid Spark SQL with a non-empty final result)."""

    view: UserView
    kind: str
    detail: str = ""
    compared: int = 0
    informative: int = 0
    emulated: bool = False
    final_rows: int | None = None
    reference_error: str = ""

    @property
    def always_empty(self) -> bool:
        """Equal, but only ever to an empty (or all-NULL) result: proves nothing."""
        return self.kind == "equal" and self.informative == 0


def _one_line(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}" if not isinstance(error, REFUSALS) else str(error)


def _crash(error: BaseException) -> str:
    """The exception and the innermost project frame it came from (what a bug report needs)."""
    frames = [f for f in traceback.extract_tb(error.__traceback__) if "site-packages" not in f.filename]
    where = f" (at {Path(frames[-1].filename).name}:{frames[-1].lineno})" if frames else ""
    return f"{type(error).__name__}: {error}{where}"


class ReferenceTables:
    """A schema's stream as the reference reads it: the Parquet files, and a catalog of names only
    (``oracle.state_sql`` needs each table's name and columns, nothing of the engine's types)."""

    def __init__(self, stream_dir: Path, shapes: dict[str, TableShape]):
        self.stream = StreamTables({name: _stream_file(stream_dir, shape) for name, shape in shapes.items()})
        self.catalog = Catalog({name: Table(name, tuple(Column(c, AtomicType(t)) for c, t in shape.columns))
                                for name, shape in shapes.items()})

    def seqs(self) -> list[int]:
        return sorted(s for data in self.stream.tables.values() for s in data[SEQ_COLUMN].to_pylist())


def _stream_file(stream_dir: Path, shape: TableShape) -> pa.Table:
    path = stream_dir / f"{shape.name}.parquet"
    if path.exists():
        return pq.read_table(path)
    fields = [*shape.arrow_schema(), pa.field(SEQ_COLUMN, pa.int64()), pa.field(OP_COLUMN, pa.int8())]
    return pa.schema(fields).empty_table()


class _InstantsSparkReference(SparkReference):
    """``spark.sql`` whose TIMESTAMP values are instants: PySpark hands them back as naive datetimes in
    the Python process's local time zone, where the stream, DuckDB and a maintained view hold
    UTC-aware ones (``datetime`` compares a naive and an aware value as unequal)."""

    def reference(self, sql: str) -> Reference:
        found = super().reference(sql)
        return attrs.evolve(found, rows=tuple(tuple(map(_instant, row)) for row in found.rows))


def _instant(value: object) -> object:
    if isinstance(value, dt.datetime) and value.tzinfo is None:
        return value.astimezone(dt.UTC)  # a naive datetime is read as local time
    return value


@contextmanager
def open_reference(kind: str, tables: ReferenceTables, spark=None) -> Iterator:
    """``SparkReference`` (``spark.sql`` in a UTC session) or ``DuckDBOracle`` (UTC) over ``tables``."""
    if kind == "spark":
        spark.conf.set("spark.sql.session.timeZone", "UTC")
        with _InstantsSparkReference(spark, tables.catalog, tables.stream) as reference:
            reference.state.connection.execute("SET TimeZone = 'UTC'")
            yield reference
    else:
        with DuckDBOracle(tables.catalog) as reference:
            reference.connection.execute("SET TimeZone = 'UTC'")
            reference.load_stream(tables.stream)
            yield reference


def batch_ends(seqs: Sequence[int], count: int) -> list[int]:
    """The last ``_seq`` of each of ``count`` batches of (nearly) equal numbers of changes."""
    ends = [seqs[-(-(i + 1) * len(seqs) // count) - 1] for i in range(count)] if seqs else []
    return sorted(set(ends))


class _EngineStreams:
    """The stream as the engine reads it, per catalog: a catalog of some of the schema's tables, or of
    some of their columns, reads a directory holding only those (the reader refuses the files and
    columns of tables the catalog lacks)."""

    def __init__(self, stream_dir: Path, scratch: Path):
        self.stream_dir, self.scratch = stream_dir, scratch
        self.read: dict[frozenset, UpdateBatch] = {}

    def updates(self, catalog: Catalog) -> UpdateBatch:
        key = frozenset((name, table.column_names) for name, table in catalog.tables.items())
        if key not in self.read:
            directory = self.scratch / f"stream{len(self.read)}"
            directory.mkdir()
            for name, table in catalog.tables.items():
                path = self.stream_dir / f"{name}.parquet"
                if path.exists():
                    columns = [*table.column_names, SEQ_COLUMN, OP_COLUMN]
                    pq.write_table(pq.read_table(path, columns=columns), directory / path.name)
            self.read[key] = read_stream(directory, catalog)
        return self.read[key]


@attrs.define
class _Maintained:
    """A view being maintained: its engine view and its updates, cut at the batch ends."""

    view: UserView
    engine: MaintainedView
    updates: UpdateBatch
    emulated: bool
    seqs: list[int]
    done: int = 0  # updates applied so far
    compared: int = 0
    informative: int = 0

    def apply_until(self, end: int) -> None:
        stop = bisect.bisect_right(self.seqs, end)
        if stop > self.done:
            self.engine.apply(self.updates[self.done: stop])
        self.done = stop

    def outcome(self, kind: str, detail: str = "") -> Outcome:
        return Outcome(self.view, kind, detail, self.compared, self.informative, self.emulated)


def _plan(view: UserView, catalogs: SchemaCatalogs, streams: _EngineStreams) -> _Maintained | Outcome:
    emulated = catalogs.whole is None
    try:
        catalog = catalogs.for_view(view)
        engine = MaintainedView(view.sql, catalog, engine="local", strict=True)
    except REFUSALS as error:
        return Outcome(view, "refused", str(error), emulated=emulated)
    except Exception as error:  # noqa: BLE001 - a crash is an outcome to report, not to stop the suite on
        return Outcome(view, "crash", _crash(error), emulated=emulated)
    updates = streams.updates(catalog)
    return _Maintained(view, engine, updates, emulated, [u.seq for u in updates])


def _compare(running: _Maintained, reference, end: int, label: str, empty_database: bool) -> Outcome | None:
    """Bring the view to ``end`` and compare; an outcome when this batch settles the view's class."""
    try:
        expected: Reference = reference.reference(running.view.sql)
    except Exception as error:  # noqa: BLE001 - the reference's failure is reported, never the engine's
        error_class = spark_error_class(error)
        if error_class is not None:  # the query's value is Spark's run-time error: the view's must be too
            return _compare_error(running, end, label, error_class, _one_line(error))
        if empty_database:
            return None
        return running.outcome("no reference", f"{label}: {_one_line(error)}")
    try:
        running.apply_until(end)
        actual = running.engine.result()
    except SqlRuntimeError as error:
        return running.outcome("wrong", f"{label}: the view raised {_one_line(error)} where the reference "
                               f"returns {len(expected.visible)} rows")
    except Exception as error:  # noqa: BLE001
        return running.outcome("crash", f"{label}: {_crash(error)}")
    try:
        assert_matches_reference(actual, expected, label)
    except AssertionError as error:
        return running.outcome("wrong", str(error))
    running.compared += 1
    running.informative += expected.is_informative()
    return None


def spark_error_class(error: BaseException) -> str | None:
    """The run-time error class (``DIVIDE_BY_ZERO``) a reference's failure names, if it names one."""
    found = re.search(r"\[([A-Z][A-Z_]*(?:\.[A-Z_]+)?)\]", str(error))
    return found[1] if found else None


def _compare_error(running: _Maintained, end: int, label: str, error_class: str, message: str) -> Outcome | None:
    """Where the reference raises Spark's run-time error, the view's ``result()`` must raise the same
    class (a held error, operators/held_errors.py); an outcome when it does not."""
    try:
        running.apply_until(end)
        rows = running.engine.result()
    except SqlRuntimeError as error:
        if error.error_class != error_class:
            return running.outcome("wrong", f"{label}: the view raised {_one_line(error)} where the reference "
                                   f"raises {message}")
        running.compared += 1
        return None
    except Exception as error:  # noqa: BLE001
        return running.outcome("crash", f"{label}: {_crash(error)}")
    return running.outcome("wrong", f"{label}: the view returns {len(rows)} rows where the reference raises {message}")


def run_schema(schema: str, stream_dir: Path, reference_kind: str = "spark", spark=None, batches: int = 8,
               only: str | None = None, views: Sequence[UserView] | None = None) -> list[Outcome]:
    """Every view of ``schema`` (or ``views``) planned and maintained over ``stream_dir``'s stream in
    ``batches`` batches, compared with the reference over the empty database and after every batch."""
    catalogs = SchemaCatalogs(schema_ddl(schema))
    views = list(views) if views is not None else load_views(schema, only=only)
    tables = ReferenceTables(stream_dir, catalogs.shapes)
    outcomes: dict[str, Outcome] = {}
    with ExitStack() as stack:
        scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="user-views-")))
        streams = _EngineStreams(stream_dir, scratch)
        running: list[_Maintained] = []
        for view in views:
            planned = _plan(view, catalogs, streams)
            if isinstance(planned, Outcome):
                outcomes[view.name] = planned
            else:
                stack.callback(planned.engine.close)
                running.append(planned)
        reference = stack.enter_context(open_reference(reference_kind, tables, spark))
        ends = batch_ends(tables.seqs(), batches)
        for number, end in enumerate([0, *ends]):
            reference.as_of(end)
            label = "the empty database" if number == 0 else f"after batch {number} of {len(ends)} (_seq <= {end})"
            for maintained in running:
                if maintained.view.name in outcomes:
                    continue
                settled = _compare(maintained, reference, end, label, number == 0)
                if settled is not None:
                    outcomes[maintained.view.name] = settled
        for maintained in running:
            outcomes.setdefault(maintained.view.name, maintained.outcome("equal"))
        for view in views:  # the stream's end: the last batch's tables
            try:
                final = {"final_rows": len(reference.reference(view.sql).visible)}
            except Exception as error:  # noqa: BLE001 - reported, for the views the suite must fix
                final = {"reference_error": _one_line(error)}
            outcomes[view.name] = attrs.evolve(outcomes[view.name], **final)
    return [outcomes[view.name] for view in views]


def duckdb_disagreements(schema: str, stream_dir: Path, spark, batches: int = 8) -> dict[str, str]:
    """The views of ``schema`` where DuckDB is no stand-in for ``spark.sql`` (after some batch it
    cannot run the view or its result differs, under the comparison rules of the suite), each with
    the first failure: what the suite's fast test, which runs against DuckDB, must leave out."""
    tables = ReferenceTables(stream_dir, table_shapes(schema_ddl(schema)))
    differs: dict[str, str] = {}
    with open_reference("spark", tables, spark) as spark_reference, open_reference("duckdb", tables) as duckdb:
        for number, end in enumerate([0, *batch_ends(tables.seqs(), batches)]):
            spark_reference.as_of(end)
            duckdb.as_of(end)
            for view in load_views(schema):
                if view.name in differs:
                    continue
                try:
                    spark_rows = spark_reference.reference(view.sql)
                except Exception as error:  # noqa: BLE001 - reported below
                    if number == 0:
                        continue  # an ANSI error over the empty database (0/0): nothing to agree on
                    differs[view.name] = f"spark.sql fails at batch {number}: {_one_line(error)}"
                    continue
                try:  # Spark's rows in the place of a maintained view's: DuckDB is the reference there
                    assert_matches_reference(spark_rows.visible, duckdb.reference(view.sql), f"batch {number}")
                except Exception as error:  # noqa: BLE001 - the difference is the answer
                    differs[view.name] = _one_line(error) if not isinstance(error, AssertionError) else str(error)
    return differs


# ---------------------------------------------------------------------------------------------
# The report

#: refusal messages grouped into the construct they name: the first pattern that matches, its name
#: expanded with the match's groups (``function \1``); a message no pattern matches is its own class
REFUSAL_CLASSES: tuple[tuple[str, str], ...] = (
    (r"unsupported type (TIMESTAMP\w*)", r"a \1 column (a DDL TIMESTAMP)"),
    (r"window functions \(OVER\)", "window functions (OVER)"),
    (r"^function (\w+) in \w+ is not supported", r"function \1"),
    (r"^(\w+) expression in [\w ]+ is not supported", r"\1 expression"),
    (r"LEFT OUTER JOIN is maintained only between two relations", "LEFT JOIN of a join or a derived table"),
    (r"WHERE above a LEFT OUTER JOIN", "WHERE over a LEFT JOIN's padded rows"),
    (r"anti join with a side that is neither", "LEFT ANTI JOIN"),
    (r"semi join with a side that is neither", "LEFT SEMI JOIN"),
    (r"SELECT list holds a subquery", "scalar subquery in SELECT"),
    (r"a WHERE condition holds a subquery that no rule maintains .*two or more inequalities",
     "IN/EXISTS subquery correlated by two or more inequalities"),
    (r"a WHERE condition holds a subquery that no rule maintains .*NOT IN over a column that may be NULL",
     "NOT IN over a nullable column, correlated by more than equalities"),
    (r"a WHERE condition holds a subquery that no rule maintains .*is not an equality between columns",
     "IN/EXISTS subquery with a non-equality correlation"),
    (r"a WHERE condition holds a subquery that no rule maintains", "WHERE subquery of another shape"),
)


def refusal_class(message: str) -> str:
    for pattern, name in REFUSAL_CLASSES:
        if match := re.search(pattern, message):
            return match.expand(name)
    return message


def _cell(text: str, width: int = 160) -> str:
    text = " ".join(text.split()).replace("|", "\\|")
    return text if len(text) <= width else text[: width - 1] + "…"


def report(outcomes: Sequence[Outcome], reference_kind: str, whole_refused: dict[str, str | None]) -> str:
    """The suite's results as Markdown: counts per schema, refusal classes, wrong and crashing views
    with their difference, and every view's line."""
    schemas = sorted({o.view.schema for o in outcomes},
                     key=lambda s: ALL_SCHEMAS.index(s) if s in ALL_SCHEMAS else len(ALL_SCHEMAS))
    lines = [f"# User-view suite: {len(outcomes)} views, reference: {reference_kind}", ""]
    rows = []
    for schema in [*schemas, "all"]:
        chosen = [o for o in outcomes if schema == "all" or o.view.schema == schema]
        counts = Counter(o.kind for o in chosen)
        rows.append([schema, len(chosen), *(counts[k] for k in KINDS), sum(o.always_empty for o in chosen)])
    lines += [tabulate(rows, headers=["schema", "views", *KINDS, "equal but always empty"], tablefmt="github"), ""]
    for schema, message in whole_refused.items():
        if message:
            lines += [f"**Today the engine refuses the whole `{schema}.sql` DDL** ({message}): as a user runs "
                      f"them, every {schema} view is refused. The counts emulate issue 24's item 7 instead: a view "
                      "naming a column of a type the engine lacks is refused with the engine's message for that "
                      "column, the others are planned against the DDL of their tables without those columns.", ""]
    refused = Counter(refusal_class(o.detail) for o in outcomes if o.kind == "refused")
    if refused:
        lines += ["## Refusals by construct", "",
                  tabulate([[_cell(name, 200), n] for name, n in refused.most_common()], headers=["refusal", "views"],
                           tablefmt="github"), ""]
    for kind in ("wrong", "crash", "no reference"):
        chosen = [o for o in outcomes if o.kind == kind]
        if chosen:
            lines += [f"## {kind.capitalize()} ({len(chosen)})", ""]
            for outcome in chosen:
                lines += [f"- `{outcome.view.schema}/{outcome.view.name}.sql` ({outcome.view.tile}): "
                          f"{_cell(outcome.detail, 1200)}"]
            lines += [""]
    unchecked = [o for o in outcomes if o.reference_error or not o.final_rows]
    if unchecked:
        lines += ["## Views the reference cannot run, or whose final result is empty", ""]
        lines += [f"- `{o.view.schema}/{o.view.name}.sql`: {_cell(o.reference_error or 'empty', 400)}" for o in unchecked]
        lines += [""]
    lines += ["## Every view", ""]
    table = [[f"{o.view.schema}/{o.view.name}", o.kind + (" (always empty)" if o.always_empty else ""),
              f"{o.informative}/{o.compared}" if o.compared else "", o.final_rows, _cell(o.detail)] for o in outcomes]
    lines += [tabulate(table, headers=["view", "outcome", "informative batches", "final rows", "detail"],
                       tablefmt="github")]
    return "\n".join(lines) + "\n"
