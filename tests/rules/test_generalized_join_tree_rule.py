"""``ChooseGeneralizedJoinTree`` under a forced strategy, and the whole pipeline choosing between the
GJT, the fallback and the foreign-key strategy (the fixture cases in cases/generalized_join_tree.txt
run the rule alone)."""

from __future__ import annotations

from catalog.ddl import catalog_from_ddl
from planner.compiler import compile_query
from planner.ir.gjt_maintenance import GeneralizedJoinTree
from planner.ir.maintenance import BinaryJoin, ChangePropagationJoin, ForeignKeyJoin
from planner.ir.notation import parse_plan
from planner.optimizer.context import OptimizerContext
from planner.optimizer.testing import assert_unchanged
from rules.generalized_join_tree import ChooseGeneralizedJoinTree

CATALOG = catalog_from_ddl("""
create table r (x int, y int); create table s (y int, z int, w int); create table t (u int, v int);
create table p (k int primary key, a int); create table c (k int references p (k), b int);
""")
Q1 = """
Project items=[r.x AS x, s.z AS z, t.u AS u]
  JoinGraph conditions=[r.x < s.z, s.w < t.u] join_classes=[[r.y, s.y]]
    Atom table=r alias=r columns=[x, y]
    Atom table=s alias=s columns=[y, z, w]
    Atom table=t alias=t columns=[u, v]
"""


def test_forced_binary_strategy_leaves_the_join_graph_to_the_fallback():
    ctx = OptimizerContext(CATALOG, join_strategy="binary")
    assert_unchanged(ChooseGeneralizedJoinTree(), Q1, ctx)
    assert "forced to binary" in ctx.refusals["ChooseGeneralizedJoinTree"]
    rewritten = ChooseGeneralizedJoinTree().apply(parse_plan(Q1), OptimizerContext(CATALOG))
    assert isinstance(rewritten.child, GeneralizedJoinTree)


def test_the_pipeline_places_each_inequality_on_the_lowest_binary_join_when_forced():
    sql = "select r.x, t.u from r, s, t where r.y = s.y and r.x < s.z and s.w < t.u"
    plan = compile_query(sql, CATALOG, join_strategy="binary").plan
    (join,) = [n for n in plan.walk() if isinstance(n, ChangePropagationJoin)]
    top, bottom = join.tree, join.tree.left
    assert isinstance(bottom, BinaryJoin) and str(bottom.condition.args[1]) in ("s.z",) and bottom.on
    assert isinstance(top, BinaryJoin) and top.on == () and {c.table for c in (top.condition.args)} == {"s", "t"}
    assert any(isinstance(n, GeneralizedJoinTree) for n in compile_query(sql, CATALOG).plan.walk())


def test_a_join_along_a_foreign_key_stays_with_the_foreign_key_strategy():
    plan = compile_query("select p.a, c.b from p, c where p.k = c.k and p.a < c.b", CATALOG).plan
    kinds = {type(n) for n in plan.walk()}
    assert ForeignKeyJoin in kinds and GeneralizedJoinTree not in kinds
