"""A view tree (rules/view_tree.py) on the Spark runner equals recomputation after every batch, in its
per-view keyed stages (operators/lowering/view_stages.py): the many-to-many q-hierarchical join with
SUM, SUM(x*y), AVG and COUNT grouped by the join variable (V_s.c's stage keyed by (r.a, s.c), the
groups' by r.a), the same join as a global aggregate (a third stage, the total, keyed by a
constant), and grouped by two variables (a free view's stage feeding the root's)."""

from __future__ import annotations

import pytest

from catalog.ddl import catalog_from_ddl
from operators.stages.view_stages import GroupViewStage, TotalStage, ViewStage
from tests.maintenance.checking import check_against_recomputation
from tests.maintenance.test_view_tree_queries import DDL, QUERIES, stream
from tests.maintenance.test_view_tree_stages import DDL as STAGES_DDL
from tests.maintenance.test_view_tree_stages import SHAPES, draw

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def spark():
    from operators.runtime.spark_session import make_spark_session

    return make_spark_session(app="spark-ivm-tests")


def test_q_hierarchical_view_tree_on_spark(spark, tmp_path):
    sql, tables = QUERIES["q-hierarchical, grouped by the join variable"]
    view = check_against_recomputation(sql, catalog_from_ddl(DDL), stream(tables, seed=3, updates=240), batch_size=60,
                                       engine="spark", spark=spark, work_dir=str(tmp_path), informative_at_least=0.75)
    assert view.result()
    assert [n.stage.key_variables for n in view.compiled.dataflow.stages if isinstance(n.stage, ViewStage | GroupViewStage)] \
        == [("r.a", "s.c"), ("r.a",)]


def test_global_aggregate_view_tree_on_spark(spark, tmp_path):
    sql, tables = QUERIES["global aggregate"]
    view = check_against_recomputation(sql, catalog_from_ddl(DDL), stream(tables, seed=4, updates=120), batch_size=40,
                                       engine="spark", spark=spark, work_dir=str(tmp_path), informative_at_least=0.6)
    assert view.result()
    assert any(isinstance(n.stage, TotalStage) for n in view.compiled.dataflow.stages)


def test_a_free_view_stage_feeding_the_groups_on_spark(spark, tmp_path):
    """V'_s.c's groups (keyed by (r.a, s.c)) travel −old/+new to the root's stage (keyed by r.a)."""
    sql, tables, expected = SHAPES["two free views: V'_s.c's groups keyed by (r.a, s.c), the root's by r.a"]
    view = check_against_recomputation(sql, catalog_from_ddl(STAGES_DDL), stream(tables, seed=6, updates=120, draw=draw),
                                       batch_size=40, engine="spark", spark=spark, work_dir=str(tmp_path),
                                       informative_at_least=0.6)
    assert view.result()
    assert [n.stage.key_variables for n in view.compiled.dataflow.stages if isinstance(n.stage, GroupViewStage)] \
        == [tuple(key) for _, _, key in expected]
