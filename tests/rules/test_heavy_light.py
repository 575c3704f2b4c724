"""ChooseHeavyLightTriangle (Olteanu §3.3): which queries are triangle counts (any names, a self-join
of one edge table, the cycle oriented from the first atom), which are left alone (not a triangle:
no refusal recorded), which are refused with the reason (SUM, GROUP BY, nullable join columns), ε
from the option and the CLI, and EXPLAIN's text and JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from catalog.ddl import catalog_from_ddl
from planner.cli import main
from planner.compiler import compile_query
from planner.explain import explain_json, explain_text
from planner.ir.heavy_light_plan import HeavyLightTriangleCount

DDL = """
CREATE TABLE r (a INT NOT NULL, b INT NOT NULL, w INT NOT NULL);
CREATE TABLE s (b INT NOT NULL, c INT NOT NULL);
CREATE TABLE t (c INT NOT NULL, a INT NOT NULL);
CREATE TABLE edges (src INT NOT NULL, dst INT NOT NULL);
CREATE TABLE loose (src INT, dst INT);
"""
TRIANGLE = "SELECT COUNT(*) AS n FROM r, s, t WHERE r.b = s.b AND s.c = t.c AND t.a = r.a"
SELF_JOIN = ("SELECT COUNT(*) FROM edges e1, edges e2, edges e3 "
             "WHERE e1.dst = e2.src AND e2.dst = e3.src AND e3.dst = e1.src")
RULE = "ChooseHeavyLightTriangle"


@pytest.fixture(scope="module")
def catalog():
    return catalog_from_ddl(DDL)


def heavy_light(compiled) -> HeavyLightTriangleCount | None:
    return next((n for n in compiled.plan.walk() if isinstance(n, HeavyLightTriangleCount)), None)


def edges(node: HeavyLightTriangleCount) -> list[str]:
    return [f"{first} {second}" for first, second in node.edges]


def test_triangle_count_is_recognized_with_the_cycle_oriented(catalog):
    node = heavy_light(compile_query(TRIANGLE, catalog, strict=True))
    assert [a.alias for a in node.atoms] == ["r", "s", "t"]
    assert edges(node) == ["r.a r.b", "s.b s.c", "t.c t.a"]
    assert node.epsilon == 0.5


def test_atoms_written_in_another_order_and_columns_swapped(catalog):
    """The cycle starts at the first atom; its first join column in table order is A."""
    sql = "SELECT COUNT(*) FROM t, r, s WHERE s.c = t.c AND r.a = t.a AND s.b = r.b"
    node = heavy_light(compile_query(sql, catalog, strict=True))
    assert edges(node) in (["t.c t.a", "r.a r.b", "s.b s.c"], ["t.a t.c", "s.c s.b", "r.b r.a"])
    # each atom's second column meets the next atom's first
    for (_, second), (first, _) in zip(node.edges, node.edges[1:] + node.edges[:1], strict=True):
        assert second.name == first.name


def test_self_join_of_one_edge_table_reads_each_copy_once(catalog):
    compiled = compile_query(SELF_JOIN, catalog, strict=True)
    node = heavy_light(compiled)
    assert [a.table for a in node.atoms] == ["edges"] * 3
    assert edges(node) == ["e1.src e1.dst", "e2.src e2.dst", "e3.src e3.dst"]
    ports = sorted((route.table, route.port, route.columns) for route in compiled.dataflow.sources)
    assert ports == [("edges", 0, (0, 1)), ("edges", 1, (0, 1)), ("edges", 2, (0, 1))]


def test_join_on_syntax_and_several_counts(catalog):
    sql = ("SELECT COUNT(*) AS n, COUNT(r.w) AS m FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c AND t.a = r.a")
    compiled = compile_query(sql, catalog, strict=True)
    assert heavy_light(compiled) is not None
    assert compiled.dataflow.output_columns == ("n", "m")


def test_epsilon_option(catalog):
    node = heavy_light(compile_query(TRIANGLE, catalog, heavy_light_epsilon=1.0))
    assert node.epsilon == 1.0


@pytest.mark.parametrize("sql", [
    "SELECT COUNT(*) FROM r, s, t WHERE r.b = s.b AND s.c = t.c",  # a path, acyclic
    "SELECT COUNT(*) FROM edges e1, edges e2, edges e3, edges e4 "
    "WHERE e1.dst = e2.src AND e2.dst = e3.src AND e3.dst = e4.src AND e4.dst = e1.src",  # a 4-cycle
    "SELECT COUNT(*) FROM r, s, t WHERE r.b = s.b AND s.b = t.c AND t.a = r.a",  # a class of three columns
])
def test_not_a_triangle_is_left_alone_without_a_refusal(catalog, sql):
    compiled = compile_query(sql, catalog)
    assert heavy_light(compiled) is None
    assert RULE not in compiled.context.refusals


@pytest.mark.parametrize(("sql", "reason"), [
    (TRIANGLE.replace("COUNT(*)", "SUM(r.w)"), "SUM(r.w) over the triangle: the IVM^ε stage counts triangles only"),
    (TRIANGLE.replace("COUNT(*) AS n", "r.a, COUNT(*) AS n") + " GROUP BY r.a", "a GROUP BY over the triangle"),
    (SELF_JOIN.replace("edges", "loose"), "e1.src, e1.dst, e2.src, e2.dst, e3.src, e3.dst may be NULL"),
    (TRIANGLE.replace("COUNT(*)", "COUNT(DISTINCT r.w)"), "COUNT(DISTINCT r.w) over the triangle"),
])
def test_refused_with_the_reason_and_left_to_the_fallback(catalog, sql, reason):
    compiled = compile_query(sql, catalog)
    assert heavy_light(compiled) is None
    assert compiled.context.refusals[RULE].startswith(reason)
    assert f"Not applied: {RULE}: {reason}" in " ".join(explain_text(compiled).split())


def test_explain_text_shows_strategy_bound_views_and_witness(catalog):
    text = explain_text(compile_query(SELF_JOIN, catalog), verbose=True)
    assert "Strategy in full: heavy/light partitioning for the triangle count (IVM^ε, Olteanu §3.3" in text
    assert "ε = 0.5: O(N^max(ε,1−ε)) = O(N^0.5) amortized per single-tuple update" in text
    assert "ε = 1/2 gives O(√N), the optimum under the OMv conjecture" in text
    assert "R(A,B) = e1(src, dst), S(B,C) = e2(src, dst), T(C,A) = e3(src, dst)" in text
    for view in ("V_RS(A,C)", "V_ST(B,A)", "V_TR(C,B)"):
        assert view in text
    assert "constant key (does not scale out)" in text
    assert "  not hierarchical: atoms(e1.dst) = {e1, e2} and atoms(e1.src) = {e1, e3} overlap" in text
    assert "TriangleCount[IVM^ε," in text


def test_explain_json(catalog):
    document = json.loads(explain_json(compile_query(TRIANGLE, catalog, heavy_light_epsilon=0.25)))
    assert document["strategy"] == "heavy_light_triangle"
    assert document["epsilon"] == 0.25
    assert document["amortized_update"].startswith("O(N^max(ε,1−ε)) = O(N^0.75)")
    assert document["triangle"] == {"R(A,B)": ["r.a", "r.b"], "S(B,C)": ["s.b", "s.c"], "T(C,A)": ["t.c", "t.a"]}
    assert [v[:9] for v in document["views"]] == ["V_RS(A,C)", "V_ST(B,A)", "V_TR(C,B)"]
    assert document["key"] == "constant key (does not scale out)"
    assert set(document["not_stronger"]) == {"hierarchical", "acyclic"}
    assert document["query_classes"] == []


def test_cli_epsilon_option(tmp_path, capsys):
    ddl = tmp_path / "catalog.sql"
    ddl.write_text(DDL)
    assert main(["explain", "--catalog", str(ddl), "--format", "json", "--heavy-light-epsilon", "1", SELF_JOIN]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["epsilon"] == 1.0 and document["stages"][0]["operator"] == "TriangleCount[IVM^ε, ε=1]"
    with pytest.raises(SystemExit):
        main(["explain", "--catalog", str(ddl), "--heavy-light-epsilon", "2", SELF_JOIN])


def test_example_files_plan_the_heavy_light_strategy(capsys):
    folder = Path(__file__).parents[2] / "examples" / "fivm"
    assert main(["explain", "--catalog", str(folder / "graph.sql"), "--format", "json", str(folder / "triangle.sql")]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["strategy"] == "heavy_light_triangle" and document["output_columns"] == ["triangles"]


def test_epsilon_outside_the_unit_interval_is_refused(catalog):
    with pytest.raises(ValueError, match="heavy_light_epsilon"):
        compile_query(TRIANGLE, catalog, heavy_light_epsilon=1.5)
