"""Which queries reach factorized output (rules/factorized_output.py) and which stay elsewhere: joins
along foreign keys stay with AJU, aggregates with ChooseViewTree, a forced binary strategy with the
fallback; ``join_strategy="view-tree"`` moves a foreign-key join onto a view tree or is refused with
the reason; EXPLAIN shows the tree, the class and the bounds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from catalog.ddl import catalog_from_ddl
from catalog.tpch import tpch_catalog
from planner.cli import main
from planner.compiler import UnsupportedQueryError, compile_query
from planner.explain import explain_json, explain_text
from planner.ir.maintenance import ChangePropagationJoin, ForeignKeyJoin
from planner.ir.notation import parse_plan, print_plan
from planner.ir.view_tree_plan import FactorizedViewTree, ViewTreeAggregate

TPCH = Path(__file__).parents[2] / "examples" / "tpch"
DDL = """
CREATE TABLE r (a INT, b INT);
CREATE TABLE s (a INT, c INT);
CREATE TABLE dim (k INT NOT NULL PRIMARY KEY, v INT NOT NULL);
CREATE TABLE fact (k INT NOT NULL REFERENCES dim (k), x INT NOT NULL);
"""
EX_4_4 = "SELECT r.a, r.b, s.c FROM r JOIN s ON r.a = s.a"


@pytest.fixture(scope="module")
def catalog():
    return catalog_from_ddl(DDL)


def kinds(compiled) -> set[type]:
    return {type(n) for n in compiled.plan.walk()}


def test_a_many_to_many_projection_is_enumerated_from_its_view_tree(catalog):
    compiled = compile_query(EX_4_4, catalog, strict=True)
    assert FactorizedViewTree in kinds(compiled) and ChangePropagationJoin not in kinds(compiled)
    assert parse_plan(print_plan(compiled.plan)) == compiled.plan  # the node prints and parses back
    assert compiled.dataflow.enumerated_by is not None  # pull mode: the view keeps no copy of the result
    text = explain_text(compiled, verbose=True)
    assert "class: q-hierarchical: O(1) update, O(1) delay" in text
    assert "output: factorized (Ex. 4.4)" in text and "pull: result() enumerates the views" in text
    document = json.loads(explain_json(compiled))
    assert document["strategy"] == "view_tree" and document["output"] == "factorized"
    assert document["variable_order"] == "r.a(r.b, s.c)" and document["ring"] == "count"


def test_order_by_keeps_a_sorted_copy_instead_of_enumerating(catalog):
    compiled = compile_query(EX_4_4 + " ORDER BY s.c", catalog, strict=True)
    assert FactorizedViewTree in kinds(compiled) and compiled.dataflow.enumerated_by is None
    assert "the operators above keep what they need" in explain_text(compiled, verbose=True)


def test_joins_along_foreign_keys_stay_with_aju(catalog):
    compiled = compile_query("SELECT f.x, d.v FROM fact f JOIN dim d ON f.k = d.k", catalog, strict=True)
    assert ForeignKeyJoin in kinds(compiled) and FactorizedViewTree not in kinds(compiled)
    q3 = compile_query((TPCH / "q03.sql").read_text(), tpch_catalog(), strict=True)
    assert ForeignKeyJoin in kinds(q3) and "ChooseFactorizedViewTree" not in q3.context.refusals


def test_an_aggregate_stays_with_the_payload_view_tree(catalog):
    compiled = compile_query("SELECT r.a, COUNT(*) AS n FROM r, s WHERE r.a = s.a GROUP BY r.a",
                             catalog_from_ddl("CREATE TABLE r (a INT NOT NULL); CREATE TABLE s (a INT NOT NULL);"))
    assert ViewTreeAggregate in kinds(compiled) and FactorizedViewTree not in kinds(compiled)


def test_forced_binary_keeps_the_fallback(catalog):
    compiled = compile_query(EX_4_4, catalog, strict=True, join_strategy="binary")
    assert ChangePropagationJoin in kinds(compiled) and FactorizedViewTree not in kinds(compiled)
    assert "forced to binary" in compiled.context.refusals["ChooseFactorizedViewTree"]


def test_forced_view_tree_takes_a_foreign_key_join(catalog):
    compiled = compile_query("SELECT f.k, f.x, d.v FROM fact f JOIN dim d ON f.k = d.k", catalog, strict=True,
                             join_strategy="view-tree")
    assert FactorizedViewTree in kinds(compiled) and ForeignKeyJoin not in kinds(compiled)
    assert "forced to view-tree" in compiled.context.refusals["ChooseForeignKeyJoinTree"]
    grouped = compile_query("SELECT d.v, SUM(f.x) AS total FROM fact f JOIN dim d ON f.k = d.k GROUP BY d.v",
                            catalog, strict=True, join_strategy="view-tree")
    assert ViewTreeAggregate in kinds(grouped)  # its payload read off the tree, not enumerated


def test_forced_view_tree_on_a_query_not_hierarchical_after_its_reduct_is_refused_with_the_reason():
    with pytest.raises(UnsupportedQueryError, match=r"forced to view-tree.*ChooseFactorizedViewTree: not "
                                                    r"q-hierarchical .*neither contains the other"):
        compile_query((TPCH / "q05.sql").read_text(), tpch_catalog(), join_strategy="view-tree")


def test_the_command_line_forces_a_view_tree_and_says_why_not(capsys):
    assert main(["explain", str(TPCH / "q03.sql"), "--catalog", "tpch", "--join-strategy", "view-tree", "--verbose"]) == 0
    assert "FactorizedViewTree" in capsys.readouterr().out
    assert main(["explain", str(TPCH / "q05.sql"), "--catalog", "tpch", "--join-strategy", "view-tree"]) != 0
    assert "cannot maintain this query on a view tree" in capsys.readouterr().err
