"""A maintained view: the embedding API behind the CLI and the tests.

``MaintainedView`` compiles a query once, then takes batches of base-table updates, validates them,
runs them through the chosen runner and keeps the current result (a multiset of rows: in memory on the
local engine, as the result table in the work directory on Spark), so after each batch ``result()``
equals the query over the current database.

A batch has one door: ``apply`` hands it to the engine's one path, on the local engine
``Validator.apply`` (checked once, run by the runner, committed; undone on any error), on Spark the
streaming query's. On the compiled runner a stream batch of one change is probed and run by one call
of its table's generated function (``CompiledRunner.run_one``), inside ``Validator.apply``.

Pull mode (local engine): when the result is enumerated from a stage's state (a generalized join
tree's T-representation, a view tree's factorized output; ``Dataflow.enumerated_by``), no copy of it is kept: ``apply`` still
returns each batch's changes, and ``result()``, ``rows()`` and ``current`` enumerate the state.
With ``push=False`` (IEDyn's pull-based mode) ``apply`` returns no changes at all: the stage only
keeps its state up to date, which is all a batch then costs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from itertools import islice

from catalog.schema import Catalog
from catalog.types import DataType
from operators.held_errors import ErrorRow, is_error
from operators.lowering.codegen import write_program
from operators.lowering.route_masks import row_masks
from operators.lowering.stream_columns import columns_read
from operators.runtime.compiled.runner import CompiledRunner
from operators.runtime.kept_result import KeptResult
from operators.runtime.local_runner import LocalRunner
from operators.runtime.stream import ChangeBatch, OpenStream, Update, UpdateBatch
from operators.runtime.validate import Rejected, Validator
from operators.structures.ordered_multiset import OrderedMultiset, order_key
from operators.zset import Changelog, Row, consolidate
from planner.compiler import CompiledQuery, compile_query
from planner.ir.timestamps import SPARK_TIME_ZONE
from planner.ir.values import SqlRuntimeError
from planner.spark_delta import SparkStrategy, spark_strategy
from planner.sql.scope import output_types

ENGINES = ("local", "spark")


class MaintainedView:
    """``engine="local"`` validates on the driver and runs the stages in-process; ``engine="spark"`` runs
    validation and stages in one Spark streaming query (``SparkRunner``), whose state, result table and
    change feed live in ``work_dir`` (resumed when it exists) and the executors' state stores.

    Spark only: ``changes`` maps tables to streaming DataFrames of their changes (``normalized_changes``
    shape), read instead of what ``apply`` sends; ``keep_outputs=False`` keeps no batch's result changes
    on the driver (a long run reads them from the change feed files instead).

    Local only: ``compiled=False`` runs the generic stage classes instead of the plan's generated
    program (operators/lowering/codegen.py), for comparison; both give the same output. ``push=False``
    (pull mode, a result enumerated from a stage's state: a generalized join tree's or a view tree's):
    ``apply`` keeps the state up to date and returns no changes; read the result with ``result()`` or
    ``rows()``."""

    def __init__(self, sql: str | CompiledQuery, catalog: Catalog, engine: str = "local", on_invalid: str = "error",
                 strict: bool = False, spark=None, work_dir: str | None = None, changes=None,
                 keep_outputs: bool = True, compiled: bool = True, push: bool = True, spark_strategy: str = "auto",
                 **planner_options):
        if engine not in ENGINES:
            raise ValueError(f"unknown engine {engine!r}; choose one of {', '.join(ENGINES)}")
        options = {k: v for k, v in planner_options.items() if v is not None}
        if engine == "spark" and spark is not None:
            # TIMESTAMP semantics (date_trunc, hour, casts) follow the session's time zone, as spark.sql's do
            options.setdefault("time_zone", spark.conf.get(SPARK_TIME_ZONE))
        self.catalog = catalog
        self.engine = engine
        # a CompiledQuery is a plan made elsewhere (from a DataFrame's Catalyst plan, by the session API)
        self.compiled: CompiledQuery = (
            sql if isinstance(sql, CompiledQuery) else compile_query(sql, catalog, strict=strict, **options)
        )
        dataflow = self.compiled.dataflow
        self.rejected: list[Rejected] = []
        if not push:
            if engine != "local":
                raise ValueError("push=False (pull mode) runs on the local engine; Spark keeps its result table")
            dataflow = dataflow.without_changes()
        #: the width of the rows ``apply`` returns when ORDER BY added hidden columns to the stages' rows
        self._visible = dataflow.visible_width if dataflow.hidden_columns else None
        if engine == "local":
            self.validator = validator = Validator(catalog, dataflow.tables(), on_invalid, dataflow.requirements)
            self.rejected = validator.rejected
            # the compiled program by default, with the validator's one-change checks (CompiledRunner.run_one);
            # the generic stages are its specification (the tests compare)
            if compiled:
                self.runner = CompiledRunner(dataflow, write_program(dataflow, validator.storable_keys()))
            else:
                self.runner = LocalRunner(dataflow)
            #: the result in ORDER BY and the held errors, kept inside each batch: reads sort nothing
            self.kept = KeptResult(dataflow.initial_result, dataflow.presentation_order,
                                   dataflow.enumerated_by is not None)
        else:
            # not a cycle: importing pyspark takes seconds, and the local engine must not pay for it
            from operators.runtime.spark_runner import SparkRunner

            self.runner = SparkRunner(dataflow, catalog, spark=spark, work_dir=work_dir, policy=on_invalid,
                                      changes=changes, result_types=self.column_types, keep_outputs=keep_outputs,
                                      delta_plan=self.spark_strategy(spark_strategy).plan)

    def spark_strategy(self, choice: str = "auto") -> SparkStrategy:
        """How the Spark engine runs this view under ``choice`` (``SPARK_STRATEGIES``), and why."""
        dataflow = self.compiled.dataflow
        return spark_strategy(self.compiled.sql, self.catalog, dataflow.visible_width, len(dataflow.output_columns),
                              choice)

    @property
    def current(self) -> Counter:
        """The local engine's result as a multiset: each row (hidden ORDER BY columns included) and its
        count; raises as ``result()`` does while the view's value is an error."""
        self._raise_held_error()
        if self.ordered is None:
            counts: Counter = Counter()
            for row, weight in self._enumerated():
                counts[_unless_error(row)] += weight
            return +counts
        return self.ordered.counts

    def _enumerated(self) -> Iterator[tuple[Row, int]]:
        dataflow = self.compiled.dataflow
        return dataflow.enumerate_result(self.runner.stage_states(dataflow.enumerated_by))

    @property
    def columns(self) -> tuple[str, ...]:
        dataflow = self.compiled.dataflow
        return dataflow.output_columns[: dataflow.visible_width]

    @property
    def column_types(self) -> tuple[DataType | None, ...]:
        """The Spark types of the result's columns (``spark.sql(query).schema``), None where untyped."""
        return output_types(self.compiled.logical, self.catalog)

    def apply(self, updates: ChangeBatch | UpdateBatch | Iterable[Update]) -> Changelog:
        """Validate and apply one batch; return the result's changes. Invalid input leaves all state as it was.

        A ``ChangeBatch`` (``open_stream``) was type-checked as it was read, and an ``UpdateBatch`` says
        itself whether it was (``read_stream``, ``batches``); a plain iterable of ``Update`` is
        type-checked row by row. Every kind takes the engine's one path: on the local engine
        ``Validator.apply`` (checked, run, committed; rejects added to ``rejected``), whose result changes
        ``KeptResult.keep`` kept inside the batch, without their held errors; on Spark ``_apply_on_spark``.
        """
        if self.engine == "local":  # (inline, not a call: at batches of one change each call counts)
            kept = self.kept
            delta = kept.changes if self.validator.apply(updates, self.runner, kept.keep) else []
        else:
            delta = self._apply_on_spark(updates)
        if delta and self._visible is not None:
            width = self._visible
            delta = consolidate([(row[:width], weight) for row, weight in delta])
        return delta

    def _apply_on_spark(self, updates: ChangeBatch | UpdateBatch | Iterable[Update]) -> Changelog:
        """The Spark engine's path: the streaming query validates and runs the batch."""
        output = self.runner.apply(updates)
        self.rejected.extend(output.rejected)
        return output.changes

    @property
    def ordered(self) -> OrderedMultiset | None:
        """The local engine's result rows in ORDER BY (``KeptResult``); None in pull mode."""
        return self.kept.ordered

    @property
    def errors(self) -> Counter:
        """The local engine's held errors (operators/held_errors.py): while any is, the view's value is that error."""
        return self.kept.errors

    def _raise_held_error(self) -> None:
        """Spark's error, when the current database makes the view's value one (operators/held_errors.py)."""
        if self.engine == "local" and self.errors:
            raise held_error(min(self.errors))

    @property
    def error(self) -> SqlRuntimeError | None:
        """The error the view's value is over the current database (what ``result()`` raises), or None."""
        try:
            self._raise_held_error()
        except SqlRuntimeError as error:
            return error
        return None

    def result(self) -> list[Row]:
        """The current result, in the query's ORDER BY (else in a stable row order)."""
        return list(self.rows())

    def rows(self, limit: int | None = None) -> Iterator[Row]:
        """The current result's first ``limit`` rows (all by default) in ``result()``'s order, one at a time.

        Local engine: read off the ordered multiset with constant delay, nothing sorted or copied, or in
        pull mode enumerated from the state (constant delay for a free-connex GJT); the iterator is
        valid until the next ``apply``. Spark engine: the result table is read and sorted.
        """
        dataflow = self.compiled.dataflow
        self._raise_held_error()
        if self.engine == "spark":
            ordered = iter(sorted(self.runner.current_result(), key=order_key(dataflow.presentation_order)))
        elif self.ordered is None:  # pull mode: no ORDER BY (or it would keep the result), rows as enumerated
            ordered = (_unless_error(row) for row, weight in self._enumerated() for _ in range(weight))
        else:
            ordered = self.ordered.rows()
        if dataflow.hidden_columns:
            width = dataflow.visible_width
            ordered = (row[:width] for row in ordered)
        return ordered if limit is None else islice(ordered, limit)

    def batches(self, stream: OpenStream, size: int) -> Iterator[ChangeBatch]:
        """``stream``'s changes (``open_stream``) in batches of ``size``, read for this view: only the
        tables its validator checks; of those only the columns its stages read (the others None); and
        the selections' columns only at the rows some route can keep (``row_masks``). The reader's
        pushdown, which makes reading a fraction of a run's cost (RESULTS.md, "the read path"); the
        batches are for this view's ``apply`` only, their rows not the tables' whole rows. On Spark,
        whose ``apply`` hands whole rows to the query, only the tables are chosen."""
        dataflow = self.compiled.dataflow
        if self.engine != "local":
            return stream.batches(size, tables=dataflow.tables())
        return stream.batches(size, tables=self.validator.tables, columns=columns_read(dataflow, self.catalog),
                              masks=row_masks(dataflow, self.catalog))

    def close(self) -> None:
        close = getattr(self.runner, "close", None)
        if close:
            close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def held_error(row: ErrorRow) -> SqlRuntimeError:
    """The error a held ``ErrorRow`` stands for, as evaluating the query would raise it."""
    return SqlRuntimeError(row.error_class, row.detail)


def _unless_error(row: Row) -> Row:
    """``row``, or the error it holds raised (a pull-mode result enumerated from a stage's state)."""
    if is_error(row):
        raise held_error(row)
    return row
