"""Golden EXPLAIN files: the text EXPLAIN of the 22 TPC-H and the order-book queries.

``tests/planner/explain/<query>.txt`` holds what ``ivm explain`` prints for each workload query (the
compact plan), so a change of strategy, of a stage's description or of the headline shows up as a
reviewed diff of those files. ``pytest tests --regenerate-golden`` rewrites them from what EXPLAIN
prints now. The compact plan stays within 120 columns, and its headline's cost is the stage rows'.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from catalog.orderbook import orderbook_catalog
from catalog.tpch import tpch_catalog
from planner.compiler import compile_query
from planner.explain import WIDTH, explain_text, update_costs
from planner.explain_headline import contradictions
from planner.ir.guarantee import costs_of
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


GOLDEN = sorted(GOLDEN_DIR.glob("*.txt"))


@pytest.mark.parametrize("golden", GOLDEN, ids=[p.stem for p in GOLDEN])
def test_every_golden_line_fits_in_120_columns(golden: Path) -> None:
    wide = [(number, len(line)) for number, line in enumerate(golden.read_text().splitlines(), 1) if len(line) > WIDTH]
    assert WIDTH == 120 and not wide, f"{golden.name}: lines wider than {WIDTH} columns (line, width): {wide}"


def _headline_costs(text: str) -> str:
    """The ``Update cost`` headline, its wrapped lines joined."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Update cost (the worst stages): "))
    found = [lines[start]]
    for line in lines[start + 1:]:
        if not line.startswith("  "):
            break
        found.append(line.strip())
    return " ".join(found)


@pytest.mark.parametrize("golden", GOLDEN, ids=[p.stem for p in GOLDEN])
def test_no_golden_headline_contradicts_its_stage_rows(golden: Path) -> None:
    """Every stage's cost is in the headline or at most a cost the headline names, every cost the
    headline names is some stage's (no "every change is O(1)" above an O(n log n) stage), and no
    stage's cost is above every cost the plan's ``guarantee()`` (composed by its nodes) promises."""
    query = next(q for q, _ in QUERIES if _golden_name(q) == golden.name)
    catalog = next(c for q, c in QUERIES if q == query)
    compiled = compile_query(query.read_text(), catalog())
    headline = _headline_costs(golden.read_text())
    stated = [(node.id, cost) for node in compiled.dataflow.stages for cost in costs_of(node.stage.describe().update_cost)]
    named = [cost for _, cost in stated if f"{cost.text} (" in headline]
    assert named, f"{golden.name}: the headline names no stage's cost: {headline}"
    for stage, cost in stated:
        assert cost in named or any(cost.at_most(other) for other in named), \
            f"{golden.name}: stage [{stage}]'s {cost.text} is above every cost the headline names: {headline}"
    beyond = [cost.text for cost in contradictions(update_costs(compiled), compiled.plan.guarantee())]
    assert not beyond and "beyond the plan's guarantee" not in headline, \
        f"{golden.name}: stage costs above every cost the plan's nodes promise: {beyond}"
