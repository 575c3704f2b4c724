"""Golden EXPLAIN files: the text EXPLAIN of the 22 TPC-H and the order-book queries.

``tests/planner/explain/<query>.txt`` holds what ``ivm explain`` prints for each workload query, so a
change of strategy, of a stage's description or of the plan notation shows up as a reviewed diff of
those files. ``pytest tests --regenerate-golden`` rewrites them from what EXPLAIN prints now.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from catalog.orderbook import orderbook_catalog
from catalog.tpch import tpch_catalog
from planner.compiler import compile_query
from planner.explain import explain_text
from tests.conftest import REGENERATE_FLAG

ROOT = Path(__file__).resolve().parents[2]
GOLDEN_DIR = Path(__file__).parent / "explain"
QUERIES = [(path, tpch_catalog) for path in sorted((ROOT / "examples" / "tpch").glob("q*.sql"))] + [
    (path, orderbook_catalog) for path in sorted((ROOT / "examples" / "orderbook").glob("*.sql")) if path.stem != "schema"
]


def _golden_name(path: Path) -> str:
    return f"{path.parent.name}_{path.stem}.txt"


@pytest.mark.parametrize(("query", "catalog"), QUERIES, ids=[_golden_name(p)[:-4] for p, _ in QUERIES])
def test_explain_matches_its_golden_file(query: Path, catalog, request: pytest.FixtureRequest) -> None:
    printed = explain_text(compile_query(query.read_text(), catalog())) + "\n"
    golden = GOLDEN_DIR / _golden_name(query)
    if request.config.getoption(REGENERATE_FLAG):
        golden.write_text(printed)
        return
    assert golden.exists(), f"no golden file {golden.name}: run pytest tests --regenerate-golden and review it"
    assert printed == golden.read_text(), f"EXPLAIN of {query.name} differs from {golden.name} (regenerate and review)"


def test_every_golden_file_belongs_to_a_query() -> None:
    expected = {_golden_name(path) for path, _ in QUERIES}
    assert len(expected) == 32  # 22 TPC-H, 10 order-book (bsp and band: inequality joins)
    assert {p.name for p in GOLDEN_DIR.glob("*.txt")} == expected
