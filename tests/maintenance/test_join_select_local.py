"""Join-selects (AJU Theorem 15) maintained in-process equal DuckDB's recomputation after every batch.

Small batches, so that a view's value moves many times between checks. TPC-H Q2 compares each supply
cost with its part's minimum; the other queries put the join-select at the root (the relation's only
join) and use inequalities.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from catalog.tpch import tpch_catalog
from planner.compiler import compile_query
from planner.explain import explain_text
from planner.ir.maintenance import ForeignKeyJoin
from tests.maintenance.checking import check_against_recomputation

Q2 = (Path(__file__).parents[2] / "examples" / "tpch" / "q02.sql").read_text()

CHEAPEST = """select ps.ps_partkey, ps.ps_suppkey, ps.ps_availqty
from partsupp ps
where ps.ps_supplycost = (select min(ps2.ps_supplycost) from partsupp ps2 where ps2.ps_partkey = ps.ps_partkey)"""

# an integer against a decimal maximum: exact on both sides, so ties agree with DuckDB
BELOW_MAX = """select ps.ps_partkey, ps.ps_suppkey
from partsupp ps
where (select max(ps2.ps_supplycost) from partsupp ps2 where ps2.ps_partkey = ps.ps_partkey) >= ps.ps_availqty"""

CASES = {"TPC-H Q2": Q2, "= MIN at the root": CHEAPEST, "<= MAX, written the other way round": BELOW_MAX}


@pytest.mark.parametrize("name", list(CASES))
def test_join_select_equals_recomputation_after_every_batch(tpch_streams, name):
    check_against_recomputation(CASES[name], tpch_catalog(), tpch_streams["random"], batch_size=8_000)


def test_q2_maintains_its_minimum_as_a_join_select_and_the_view_once():
    compiled = compile_query(Q2, tpch_catalog(), strict=True)
    (join,) = [n for n in compiled.plan.walk() if isinstance(n, ForeignKeyJoin) and n.join_selects]
    assert [str(s.row) + s.op + str(s.value) for s in join.join_selects] == ["partsupp.ps_supplycost=_v0._val"]
    assert join.residual is None and [e.referencing for e in join.edges if e.referenced == "_v0"] == ["partsupp"]
    minimums = [n for n in compiled.dataflow.stages if n.stage.describe().operator == "GroupAggregate (MIN)"]
    assert len(minimums) == 1, "the view reached along one edge is lowered once"
    text = explain_text(compiled, verbose=True)
    assert "join-select (AJU Theorem 15)" in text and "O(log n + rows that flip)" in text


def test_a_forced_change_propagation_tree_keeps_the_comparison_as_a_residual():
    compiled = compile_query(CHEAPEST, tpch_catalog(), strict=True, join_tree="theorem11")
    assert not [n for n in compiled.plan.walk() if isinstance(n, ForeignKeyJoin)]
    assert "MaintainJoinSelect" not in compiled.context.decisions
