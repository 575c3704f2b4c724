"""A maintained view: the embedding API behind the CLI and the tests.

``MaintainedView`` compiles a query once, then takes batches of base-table updates, validates them,
runs them through the chosen runner and keeps the current result (a multiset of rows: in memory on the
local engine, as the result table in the work directory on Spark), so after each batch ``result()``
equals the query over the current database.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from catalog.schema import Catalog
from catalog.types import DataType
from operators.runtime.local_runner import LocalRunner
from operators.runtime.stream_format import ChangeBatch, Update, UpdateBatch
from operators.runtime.validate import Rejected, Validator
from operators.zset import Changelog, Row, apply_changes, consolidate
from planner.compiler import CompiledQuery, compile_query
from planner.sql.scope import output_types

ENGINES = ("local", "spark")


def _sort_key(value):
    return (value is not None, value)


class MaintainedView:
    """``engine="local"`` validates on the driver and runs the stages in-process; ``engine="spark"`` runs
    validation and stages in one Spark streaming query (``SparkRunner``), whose state, result table and
    change feed live in ``work_dir`` (resumed when it exists) and the executors' state stores.

    Spark only: ``changes`` maps tables to streaming DataFrames of their changes (``normalized_changes``
    shape), read instead of what ``apply`` sends; ``keep_outputs=False`` keeps no batch's result changes
    on the driver (a long run reads them from the change feed files instead)."""

    def __init__(self, sql: str | CompiledQuery, catalog: Catalog, engine: str = "local", on_invalid: str = "error",
                 strict: bool = False, spark=None, work_dir: str | None = None, changes=None,
                 keep_outputs: bool = True, **planner_options):
        if engine not in ENGINES:
            raise ValueError(f"unknown engine {engine!r}; choose one of {', '.join(ENGINES)}")
        options = {k: v for k, v in planner_options.items() if v is not None}
        self.catalog = catalog
        self.engine = engine
        # a CompiledQuery is a plan made elsewhere (from a DataFrame's Catalyst plan, by the session API)
        self.compiled: CompiledQuery = (
            sql if isinstance(sql, CompiledQuery) else compile_query(sql, catalog, strict=strict, **options)
        )
        dataflow = self.compiled.dataflow
        self.rejected: list[Rejected] = []
        if engine == "local":
            self.validator = Validator(catalog, dataflow.tables(), on_invalid, dataflow.requirements)
            self.runner = LocalRunner(dataflow)
            self.current: Counter = Counter(dataflow.initial_result)
        else:
            # not a cycle: importing pyspark takes seconds, and the local engine must not pay for it
            from operators.runtime.spark_runner import SparkRunner

            self.runner = SparkRunner(dataflow, catalog, spark=spark, work_dir=work_dir, policy=on_invalid,
                                      changes=changes, result_types=self.column_types, keep_outputs=keep_outputs)

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
        type-checked row by row.
        """
        if self.engine == "spark":
            output = self.runner.apply(updates)
            delta = output.changes
            self.rejected.extend(output.rejected)
        else:
            delta = self._apply_locally(updates)
        if self.compiled.dataflow.hidden_columns:
            width = self.compiled.dataflow.visible_width
            delta = consolidate([(row[:width], weight) for row, weight in delta])
        return delta

    def _apply_locally(self, updates: ChangeBatch | UpdateBatch | Iterable[Update]) -> Changelog:
        validated = self.validator.validate(updates)
        # The batch is atomic: the runner undoes its own stages on an error, so the validator's rows,
        # the result and the rejected list change only once the runner succeeded, and the same batch
        # can be sent again after fixing the cause.
        delta = self.runner.apply(validated.accepted) if validated.accepted else []
        counts = {row: self.current.get(row, 0) + weight for row, weight in delta}
        # only rows the batch touched can go negative (every count was >= 0 before): O(delta), not O(result)
        negative = [row for row, count in counts.items() if count < 0]
        if negative:
            raise RuntimeError(f"internal error: result rows with negative multiplicity {negative[:3]}")
        self.validator.commit(validated)
        apply_changes(self.current, delta)
        self.rejected.extend(validated.rejected)
        return delta

    def result(self) -> list[Row]:
        """The current result, in the query's ORDER BY (else in a stable row order)."""
        rows = self.runner.current_result() if self.engine == "spark" else list(self.current.elements())
        rows.sort(key=lambda r: tuple(_sort_key(v) for v in r))
        for position, ascending in reversed(self.compiled.dataflow.presentation_order):
            rows.sort(key=lambda r, p=position: _sort_key(r[p]), reverse=not ascending)
        if self.compiled.dataflow.hidden_columns:
            width = self.compiled.dataflow.visible_width
            rows = [row[:width] for row in rows]
        return rows

    def close(self) -> None:
        close = getattr(self.runner, "close", None)
        if close:
            close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()
