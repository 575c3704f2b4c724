"""Change propagation over binary delta joins: AJU Theorem 11's tree, a forced (bad) join order, and
the general fallback for joins that are not along keys, each equal to recomputation after every batch."""

from __future__ import annotations

from pathlib import Path

import pytest

from catalog.tpch import tpch_catalog
from planner.compiler import compile_query
from planner.explain import explain_text, strategy_of
from planner.ir.maintenance import ChangePropagationJoin
from tests.maintenance.checking import check_against_recomputation

Q5 = (Path(__file__).parents[2] / "examples" / "tpch" / "q05.sql").read_text()
BAD_ORDER = ("supplier", "customer", "nation", "region", "orders", "lineitem")
MANY_TO_MANY = """select n_name, count(*) as pairs, sum(c_acctbal + s_acctbal) as balance
from customer, supplier, nation
where c_nationkey = s_nationkey and s_nationkey = n_nationkey and c_acctbal > 5000 and s_acctbal > 5000
group by n_name"""


@pytest.mark.parametrize("tree", ["theorem11", BAD_ORDER], ids=["theorem 11 tree", "bad join order"])
def test_q5_over_a_forced_join_tree_equals_recomputation(tpch_streams, tree):
    check_against_recomputation(Q5, tpch_catalog(), tpch_streams["random"], batch_size=30_000, join_tree=tree)


def test_a_many_to_many_join_falls_back_and_says_why(tpch_streams):
    compiled = compile_query(MANY_TO_MANY, tpch_catalog(), strict=True)
    assert [n.tree_kind for n in compiled.plan.walk() if isinstance(n, ChangePropagationJoin)] == ["fallback"]
    assert strategy_of(compiled)["strategy"] == "change_propagation_fallback"
    assert "needs exactly one root, found 2 relations referenced by none: customer, supplier" in explain_text(compiled)
    check_against_recomputation(MANY_TO_MANY, tpch_catalog(), tpch_streams["random"], batch_size=30_000)


def test_explain_shows_the_theorem_11_tree_beside_the_live_tuple_plan():
    text = explain_text(compile_query(Q5, tpch_catalog()))
    assert "theorem 11 tree" in text and "BinaryJoin" in text and "LiveTuples" in text
