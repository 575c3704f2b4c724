"""Drive a maintained view batch by batch and compare it with recomputation after every batch."""

from __future__ import annotations

from catalog.schema import Catalog
from operators.runtime.stream_format import Update, batches
from planner.view import MaintainedView
from planner.workloads.oracle import DuckDBOracle, assert_rows_match


def check_against_recomputation(sql: str, catalog: Catalog, updates: list[Update], batch_size: int,
                                engine: str = "local", oracle_sql: str | None = None,
                                **view_options) -> MaintainedView:
    """Apply ``updates`` in batches; after each, the view must equal DuckDB over the current tables.

    ``oracle_sql`` is what DuckDB runs instead of ``sql`` where the two dialects differ (e.g. the
    column order of ``SELECT *`` over ``JOIN ... USING``: Spark's, spelled out for DuckDB).
    """
    with DuckDBOracle(catalog) as oracle, MaintainedView(sql, catalog, engine=engine, strict=True,
                                                         **view_options) as view:
        for number, batch in enumerate(batches(updates, batch_size)):
            view.apply(batch)
            oracle.load({table: list(rows.values()) for table, rows in view.validator.rows.items()})
            assert_rows_match(view.result(), oracle.query(oracle_sql or sql), f"{engine} runner, after batch {number}")
    return view
