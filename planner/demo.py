"""``ivm demo``: EXPLAIN TPC-H Q3, maintain it over a window stream, and check every batch.

Part of the front door (it drives ``MaintainedView`` and EXPLAIN), so it sits beside them, above
the workloads it reads.

The demo is the README's first command, so it needs nothing but an installed package: Q3's text
ships as package data in ``planner/workloads/`` (``examples/tpch/q03.sql`` is a link to it, since
``pip install`` does not ship ``examples/``), and DuckDB, the recomputation every batch is checked
against, is a runtime dependency. The result is printed at a few points of the stream, so the
reader sees the window slide through it.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

from tabulate import tabulate

from catalog.schema import Catalog
from catalog.tpch import tpch_catalog
from operators.runtime.stream import Update, batches
from planner.explain import explain_text
from planner.view import MaintainedView
from planner.workloads.oracle import DuckDBOracle, StreamTables, assert_matches_reference
from planner.workloads.tpch_data import generate_tpch, load_tables
from planner.workloads.tpch_streams import make_stream

DEMO_DATA = Path("data")
# The result is shown after this many equal parts of the stream (1/4, 1/2, 3/4, the end).
SNAPSHOTS = 4

Q3_SQL = (resources.files("planner.workloads") / "q03.sql").read_text()


def showcase_window(lineitems: int) -> int:
    """A third of lineitem: the window the demo and the page's default run slide over the data.

    Q3 keeps an order only if it was placed in the ~4 months before its date cut and shipped
    after it, and only for one market segment in five, so a window of a tenth of lineitem holds
    5, 3, 2 and 1 such orders at the demo's snapshots; a third keeps the top 10 full at each of
    them at SF 0.01 (tests/planner/test_demo.py) while still sliding three times over the data.
    """
    return max(1, lineitems // 3)


def run_demo(sf: float = 0.01, batch_size: int = 5_000, engine: str = "local") -> int:
    """Generate SF ``sf`` data if missing, then maintain Q3 batch by batch with ``engine``'s runner."""
    catalog = tpch_catalog()
    print("TPC-H Q3:\n" + Q3_SQL)
    updates, window = _window_stream(catalog, sf)
    print(f"Stream: {len(updates):,} updates (window of {window} lineitem tuples), batches of {batch_size}\n")
    with MaintainedView(Q3_SQL, catalog, engine=engine) as view, DuckDBOracle(catalog) as oracle:
        print(explain_text(view.compiled) + "\n")
        oracle.load_stream(StreamTables.from_updates(catalog, updates))  # DuckDB reads the stream, not the engine
        maintaining = _maintain(view, oracle, list(batches(updates, batch_size)))
    print(f"Maintained {len(updates):,} updates in {maintaining:.2f} s "
          f"({len(updates) / maintaining:,.0f} updates/s, {engine} runner); "
          "checked against DuckDB recomputation after every batch: equal")
    return 0


def _window_stream(catalog: Catalog, sf: float) -> tuple[list[Update], int]:
    """The sliding-window stream over generated TPC-H data, and its window size in lineitem tuples."""
    tables = load_tables(generate_tpch(sf, DEMO_DATA / f"tpch-sf{sf}"), catalog)
    window = showcase_window(len(tables["lineitem"]))
    return make_stream(tables, catalog, "window", window, seed=0), window


def _maintain(view: MaintainedView, oracle: DuckDBOracle, stream: Sequence[list[Update]]) -> float:
    """Apply every batch, compare the result with DuckDB's after each, print it at the snapshots.

    Returns the seconds spent in ``view.apply`` alone, so the rate excludes the check and printing.
    """
    snapshots = {math.ceil(len(stream) * part / SNAPSHOTS) for part in range(1, SNAPSHOTS + 1)}
    applied, maintaining = 0, 0.0
    for number, batch in enumerate(stream, start=1):
        started = time.perf_counter()
        view.apply(batch)
        maintaining += time.perf_counter() - started
        applied += len(batch)
        oracle.as_of(batch[-1].seq)
        assert_matches_reference(view.result(), oracle.reference(Q3_SQL), f"batch {number}")
        if number in snapshots:
            result = view.result()
            print(f"After batch {number} of {len(stream)} ({applied:,} updates): top 10 by revenue")
            print(tabulate(result, headers=view.columns, tablefmt="simple", floatfmt=".2f") + "\n")
    return maintaining
