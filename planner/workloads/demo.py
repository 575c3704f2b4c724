"""``ivm demo``: EXPLAIN TPC-H Q3, maintain it over a window stream, and check every batch."""

from __future__ import annotations

import time
from pathlib import Path

from tabulate import tabulate

DEMO_DATA = Path("data")
QUERIES = Path(__file__).resolve().parent.parent / "examples" / "tpch"


def q3_sql() -> str:
    return (QUERIES / "q03.sql").read_text()


def run_demo(sf: float = 0.01, batch_size: int = 5_000, engine: str = "local") -> int:
    from catalog.tpch import tpch_catalog
    from operators.runtime.stream_format import batches
    from planner.explain import explain_text
    from planner.view import MaintainedView
    from planner.workloads.tpch_data import generate_tpch, load_tables
    from planner.workloads.tpch_streams import default_window, make_stream

    catalog = tpch_catalog()
    sql = q3_sql()
    print("TPC-H Q3:\n" + sql)
    data = generate_tpch(sf, DEMO_DATA / f"tpch-sf{sf}")
    tables = load_tables(data, catalog)
    window = default_window(len(tables["lineitem"]))
    updates = make_stream(tables, catalog, "window", window, seed=0)
    print(f"Stream: {len(updates)} updates (window of {window} lineitem tuples), batches of {batch_size}\n")
    try:
        from planner.workloads.oracle import DuckDBOracle, assert_rows_match
    except ImportError:
        DuckDBOracle = None  # noqa: N806  (duckdb is a dev extra; the demo then skips the check)
    with MaintainedView(sql, catalog, engine=engine) as view:
        print(explain_text(view.compiled) + "\n")
        oracle = DuckDBOracle(catalog) if DuckDBOracle else None
        maintaining = 0.0
        for number, batch in enumerate(batches(updates, batch_size)):
            started = time.perf_counter()
            view.apply(batch)
            maintaining += time.perf_counter() - started
            if oracle is not None:
                oracle.load({t: list(rows.values()) for t, rows in view.validator.rows.items()})
                assert_rows_match(view.result(), oracle.query(sql), f"batch {number}")
        print(f"Maintained {len(updates)} updates in {maintaining:.2f} s "
              f"({len(updates) / maintaining:,.0f} updates/s, {engine} runner)")
        print("checked against DuckDB recomputation after every batch: equal" if oracle
              else "DuckDB not installed: result not checked (pip install -e '.[dev]')")
        print("\nCurrent result (top 10 by revenue):")
        print(tabulate(view.result(), headers=view.columns, tablefmt="simple", floatfmt=".2f"))
    return 0
