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
    assert "needs exactly one root, found 2 relations referenced by none: customer, supplier" in " ".join(explain_text(compiled).split())
    check_against_recomputation(MANY_TO_MANY, tpch_catalog(), tpch_streams["random"], batch_size=30_000)


def test_explain_shows_the_theorem_11_tree_beside_the_live_tuple_plan():
    text = explain_text(compile_query(Q5, tpch_catalog()), verbose=True)
    assert "theorem 11 tree" in text and "BinaryJoin" in text and "LiveTuples" in text


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled runner", "generic stages"])
@pytest.mark.parametrize("on", ["r.c = s.f", "r.c = s.f and r.a = s.d"], ids=["one column", "two columns"])
def test_a_null_join_key_matches_nothing(on, compiled):
    """``NULL = NULL`` is not true: rows with a NULL in the join key join no row (the fallback's binary
    join once joined them, and counted them, on both runners)."""
    from tests.maintenance.test_gjt_aggregate import CATALOG as catalog
    from tests.maintenance.test_gjt_local import random_stream

    sql = f"select r.b, count(*) as n, sum(s.e) as t from r, s where {on} group by r.b"
    stream = random_stream(11, 300, domain=4, deletes=0.3, nulls=0.2)
    assert sum(None in u.row for u in stream) > 50
    view = check_against_recomputation(sql, catalog, stream, batch_size=25, compiled=compiled, informative_at_least=0.5)
    assert view.result()
