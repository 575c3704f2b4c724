"""TPC-H on a forced view tree (``join_strategy="view-tree"``) beside AJU on the same stream, both equal
to DuckDB's recomputation after every batch.

Q3 is q-hierarchical only as its Σ-reduct by the primary keys (o_orderkey → o_custkey, ...). Its
aggregate cannot read a ring payload off the tree (``ChooseViewTree``: SUM's argument
``l_extendedprice * (1 - l_discount)`` is neither a column nor a product of two, and TPC-H's
columns are nullable), so the view tree keeps the join factorized with the group and argument
columns free (still q-hierarchical after the reduct: l_orderkey is a GROUP BY column) and the ring
aggregate and the top-k (ORDER BY revenue DESC LIMIT 10) above it are maintained from its
delta-enumerated changes, as over any join. Q10 groups by customer, so its argument columns would be
free below the bound order key: not q-hierarchical, refused with the witness.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from catalog.tpch import tpch_catalog
from operators.runtime.stream import batches
from planner.compiler import UnsupportedQueryError, compile_query
from planner.ir.maintenance import ForeignKeyJoin
from planner.ir.view_tree_plan import FactorizedViewTree
from planner.view import MaintainedView
from planner.workloads.oracle import DuckDBOracle, assert_matches_reference
from tests.maintenance.checking import stream_tables

QUERIES = Path(__file__).parents[2] / "examples" / "tpch"


def query(number: int) -> str:
    return (QUERIES / f"q{number:02d}.sql").read_text()


@pytest.mark.parametrize("kind", ["window", "random", pytest.param("insert", marks=pytest.mark.slow)])
def test_q3_on_a_view_tree_and_on_aju_equal_recomputation_after_every_batch(tpch_streams, kind):
    catalog, sql, updates = tpch_catalog(), query(3), tpch_streams[kind]
    with (DuckDBOracle(catalog) as oracle, MaintainedView(sql, catalog, strict=True) as aju,
          MaintainedView(sql, catalog, strict=True, join_strategy="view-tree") as tree):
        kinds = {type(n) for n in tree.compiled.plan.walk()}
        assert FactorizedViewTree in kinds and ForeignKeyJoin not in kinds
        assert any(isinstance(n, ForeignKeyJoin) for n in aju.compiled.plan.walk())
        oracle.load_stream(stream_tables(catalog, updates))
        informative = 0
        for number, batch in enumerate(batches(updates, 15_000)):
            aju.apply(batch)
            tree.apply(batch)
            oracle.as_of(batch[-1].seq)
            expected = oracle.reference(sql)
            for name, view in (("AJU", aju), ("view tree", tree)):
                assert_matches_reference(view.result(), expected, f"{name}, {kind} stream, after batch {number}")
            informative += expected.is_informative()
        assert informative >= 3, "comparisons of empty results cannot fail"


def test_q10_is_refused_on_a_view_tree_with_the_witness():
    with pytest.raises(UnsupportedQueryError, match=r"not q-hierarchical .*l_orderkey.* is bound"):
        compile_query(query(10), tpch_catalog(), join_strategy="view-tree")
