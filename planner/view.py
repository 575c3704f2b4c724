"""A maintained view: the embedding API behind the CLI and the tests.

``MaintainedView`` compiles a query once, then takes batches of base-table updates, validates them,
runs them through the chosen runner and keeps the current result (a multiset of rows), so after each
batch ``result()`` equals the query over the current database.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from catalog.schema import Catalog
from catalog.types import DataType
from operators.runtime.local_runner import LocalRunner
from operators.runtime.stream_format import Update, UpdateBatch
from operators.runtime.validate import Rejected, Validator
from operators.zset import Changelog, Row, apply_changes, consolidate
from planner.compiler import CompiledQuery, compile_query
from planner.sql.scope import output_types

ENGINES = ("local", "spark")


def _sort_key(value):
    return (value is not None, value)


class MaintainedView:
    def __init__(self, sql: str, catalog: Catalog, engine: str = "local", on_invalid: str = "error",
                 strict: bool = False, spark=None, work_dir: str | None = None, **planner_options):
        if engine not in ENGINES:
            raise ValueError(f"unknown engine {engine!r}; choose one of {', '.join(ENGINES)}")
        options = {k: v for k, v in planner_options.items() if v is not None}
        self.catalog = catalog
        self.compiled: CompiledQuery = compile_query(sql, catalog, strict=strict, **options)
        dataflow = self.compiled.dataflow
        self.validator = Validator(catalog, dataflow.tables(), on_invalid, dataflow.requirements)
        if engine == "local":
            self.runner = LocalRunner(dataflow)
        else:
            # not a cycle: importing pyspark takes seconds, and the local engine must not pay for it
            from operators.runtime.spark_runner import SparkRunner

            self.runner = SparkRunner(dataflow, spark=spark, work_dir=work_dir)
        self.current: Counter = Counter(dataflow.initial_result)
        self.rejected: list[Rejected] = []

    @property
    def columns(self) -> tuple[str, ...]:
        dataflow = self.compiled.dataflow
        return dataflow.output_columns[: dataflow.visible_width]

    @property
    def column_types(self) -> tuple[DataType | None, ...]:
        """The Spark types of the result's columns (``spark.sql(query).schema``), None where untyped."""
        return output_types(self.compiled.logical, self.catalog)

    def apply(self, updates: UpdateBatch | Iterable[Update]) -> Changelog:
        """Validate and apply one batch; return the result's changes. Invalid input leaves all state as it was.

        An ``UpdateBatch`` says itself whether its rows' types were checked when read (``read_stream``,
        ``batches``); a plain iterable of ``Update`` is type-checked row by row.
        """
        validated = self.validator.validate(updates)
        # The batch is atomic: the runner undoes its own stages on an error (and Spark does not commit
        # a failed micro-batch), so the validator's rows, the result and the rejected list change only
        # once the runner succeeded, and the same batch can be sent again after fixing the cause.
        delta = self.runner.apply(validated.accepted) if validated.accepted else []
        counts = {row: self.current.get(row, 0) + weight for row, weight in delta}
        # only rows the batch touched can go negative (every count was >= 0 before): O(delta), not O(result)
        negative = [row for row, count in counts.items() if count < 0]
        if negative:
            raise RuntimeError(f"internal error: result rows with negative multiplicity {negative[:3]}")
        self.validator.commit(validated)
        apply_changes(self.current, delta)
        self.rejected.extend(validated.rejected)
        if self.compiled.dataflow.hidden_columns:
            width = self.compiled.dataflow.visible_width
            delta = consolidate([(row[:width], weight) for row, weight in delta])
        return delta

    def result(self) -> list[Row]:
        """The current result, in the query's ORDER BY (else in a stable row order)."""
        rows = list(self.current.elements())
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
