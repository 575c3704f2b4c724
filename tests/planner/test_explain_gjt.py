"""EXPLAIN of inequality joins (IEDyn): the GJT, its edge predicates, the connex set, the bounds
claimed (and withdrawn), the witness of a cyclic query, and ``--join-strategy binary`` on the CLI."""

from __future__ import annotations

import json

import pyarrow.parquet as pq

from catalog.ddl import catalog_from_ddl
from operators.runtime.stream import Update, write_stream
from planner.cli import main
from planner.compiler import compile_query
from planner.explain import explain_json, explain_text

DDL = "create table r (a int, b int, c int); create table s (d int, e int, f int); create table t (g int, h int, i int);"
CATALOG = catalog_from_ddl(DDL)
TWO_WAY = "select r.a, s.d from r, s where r.a < s.d"
THREE_WAY = "select r.a, r.b, s.d, s.e, t.g, t.h from r, s, t where r.a < s.d and s.e < t.g"


def test_explain_text_shows_the_tree_edge_predicates_connex_set_and_bounds():
    text = explain_text(compile_query(THREE_WAY, CATALOG), verbose=True)
    assert "IEDyn T-representation over a generalized join tree: free-connex for the join's output" in text
    assert "[r.a < s.d] {r.a} *" in text and "[s.e < t.g]" in text
    assert "Edge predicates: " in text and "r.a < s.d" in text.split("Edge predicates: ")[1]
    assert "Update: O(M log M) per update" in text
    assert "Enumeration delay: constant" in text


def _gjt_stage_key(sql: str) -> str:
    doc = json.loads(explain_json(compile_query(sql, CATALOG)))
    return next(s["key"] for s in doc["stages"] if s["operator"].startswith("GJT"))


def test_the_stage_key_is_the_variables_of_every_leaf_else_constant():
    assert _gjt_stage_key(THREE_WAY) == "constant (does not scale out)"
    keyed = "select r.a, s.d, t.g from r, s, t where r.c = s.f and s.f = t.i and r.a < s.d and s.e < t.g"
    assert _gjt_stage_key(keyed) == "r.c"


def test_explain_json_names_the_gjt_strategy_and_free_connex():
    doc = json.loads(explain_json(compile_query(THREE_WAY, CATALOG)))
    assert doc["strategy"] == "gjt" and doc["free_connex"] is True
    assert "r(r.a,r.b) *" in doc["tree"] and [] in doc["connex"]
    projected = json.loads(explain_json(compile_query("select r.b, t.h from r, s, t where r.a < s.d and s.e < t.g", CATALOG)))
    assert projected["strategy"] == "gjt" and projected["free_connex"] is False
    assert "free-connex extension (IEDyn §6)" in projected["description"]
    assert projected["free_connex_witness"].startswith("irreducible hyperedges {r.a,r.b}, {s.d,s.e}, {t.g,t.h}")


def test_two_inequalities_between_one_pair_withdraw_the_update_bound():
    text = explain_text(compile_query("select r.a, s.d from r, s where r.a < s.d + 2 and s.d - r.a <= 5", CATALOG), verbose=True)
    assert "Update: no bound claimed: more than one inequality between r-s" in text
    assert "Enumeration delay: logarithmic" in text


def test_a_cyclic_query_shows_its_witness_and_the_fallback_it_gets():
    compiled = compile_query("select r.a from r, s, t where r.a < s.d and s.e < t.g and t.h < r.b", CATALOG)
    doc = json.loads(explain_json(compiled))
    assert doc["strategy"] == "change_propagation_fallback"
    assert "the query is cyclic" in doc["refusals"]["ChooseGeneralizedJoinTree"]
    assert "irreducible hyperedges {r.a,r.b}, {s.d,s.e}, {t.g,t.h}" in explain_text(compiled, verbose=True)


def test_cli_join_strategy_binary_forces_the_fallback_on_explain_and_run(tmp_path, capsys):
    ddl = tmp_path / "schema.sql"
    ddl.write_text(DDL)
    assert main(["explain", TWO_WAY, "--catalog", str(ddl), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["strategy"] == "gjt"
    assert main(["explain", TWO_WAY, "--catalog", str(ddl), "--format", "json", "--join-strategy", "binary"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["strategy"] == "change_propagation_fallback"
    assert "forced to binary" in doc["refusals"]["ChooseGeneralizedJoinTree"]
    updates = [Update(1, "r", 1, (1, 0, 0)), Update(2, "s", 1, (3, 0, 0)), Update(3, "r", 1, (2, 0, 0)),
               Update(4, "s", 1, (0, 0, 0)), Update(5, "r", -1, (1, 0, 0))]
    stream = str(write_stream(tmp_path / "stream", CATALOG, updates))
    query = tmp_path / "q.sql"
    query.write_text(TWO_WAY)
    results = []
    for extra in ([], ["--join-strategy", "binary"]):
        out = tmp_path / f"r{len(extra)}.parquet"
        assert main(["run", "--query", str(query), "--catalog", str(ddl), "--stream", stream, "--batch-size", "2",
                     "--out", str(out), *extra]) == 0
        results.append(sorted(tuple(row.values()) for row in pq.read_table(out).to_pylist()))
    assert results[0] == results[1] == [(2, 3)]
