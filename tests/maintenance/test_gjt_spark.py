"""An inequality join on the Spark runner, both ways, equal to recomputation after every batch: a GJT
split into a REDUCT stage keyed by s.f feeding the ENUMERATE stage (two chained GjtStages), and the
forced materializing fallback (constant-key binary joins filtered by their inequality); and a
constant-key GJT restarted from its checkpoint."""

from __future__ import annotations

import pytest

from operators.runtime.stream import batches
from operators.stages.gjt import GjtStage
from planner.compiler import compile_query
from planner.view import MaintainedView
from planner.workloads.oracle import DuckDBOracle, assert_matches_reference
from tests.maintenance.checking import check_against_recomputation, stream_tables
from tests.maintenance.test_gjt_local import CATALOG, QUERIES, random_stream

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def spark():
    from operators.runtime.spark_session import make_spark_session

    return make_spark_session(app="spark-ivm-tests")


@pytest.mark.parametrize("strategy", [None, "binary"], ids=["gjt", "binary fallback"])
def test_inequality_join_on_spark(spark, tmp_path, strategy):
    check_against_recomputation(QUERIES["subtree below N keyed by f=i"], CATALOG, random_stream(seed=5, size=150),
                                batch_size=50, engine="spark", spark=spark, work_dir=str(tmp_path),
                                informative_at_least=0.6, join_strategy=strategy)


def test_a_constant_key_gjt_resumes_from_its_checkpoint(spark, tmp_path):
    """A pure inequality join (one GJT stage keyed by a constant, its state in pages) stopped after two
    batches and started again on the same work directory: the restarted view reads its T-representation
    from the checkpoint only (a new process's caches are empty) and equals DuckDB after every batch."""
    sql = QUERIES["two-way a<d"]
    stages = [node.stage for node in compile_query(sql, CATALOG, strict=True).dataflow.stages]
    assert [stage.key for stage in stages if isinstance(stage, GjtStage)] == [()]
    updates = random_stream(seed=8, size=200, nulls=0.1)
    parts = list(batches(updates, 40))
    informative = 0
    with DuckDBOracle(CATALOG) as oracle:
        oracle.load_stream(stream_tables(CATALOG, updates))
        for run in (parts[:2], parts[2:]):
            with MaintainedView(sql, CATALOG, engine="spark", strict=True, spark=spark, work_dir=str(tmp_path)) as view:
                for batch in run:
                    view.apply(batch)
                    oracle.as_of(batch[-1].seq)
                    expected = oracle.reference(sql)
                    assert_matches_reference(view.result(), expected, f"after _seq {batch[-1].seq}")
                    informative += expected.is_informative()
    assert informative >= 4
