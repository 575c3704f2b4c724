"""Query classes and Σ-reducts on the examples of Olteanu's survey (PODS 2024, §4), read from SQL the
way EXPLAIN reads them: the plan after normalization, its GROUP BY (or projection) as free variables.

Variables are named after the first column of their equality class (``r.x`` for ``r.x = s.x``).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from catalog.ddl import catalog_from_ddl
from catalog.tpch import tpch_catalog
from planner.compiler import compile_query
from planner.explain import explain_json, explain_text
from planner.explain_classes import query_classes
from planner.ir.gcq import Atom, Gcq
from planner.ir.join_query import NotAJoinQuery, join_query
from planner.ir.notation_parser import parse_plan
from planner.ir.query_classes import QueryClasses, classify

ALL = ["q-hierarchical", "hierarchical", "free-connex", "acyclic"]
TPCH_DIR = Path(__file__).resolve().parents[2] / "examples" / "tpch"


def classes_of(sql: str, ddl: str) -> QueryClasses:
    found = query_classes(compile_query(sql, catalog_from_ddl(ddl)))
    assert isinstance(found, QueryClasses), found
    return found


def schema(classes: QueryClasses, reduct: bool = False) -> dict[str, set[str]]:
    query = classes.reduct.query if reduct else classes.original.query
    return {a.alias: set(a.variables) for a in query.atoms}


# --- Example 4.3 ------------------------------------------------------------------------------------

PATH_DDL = "CREATE TABLE r (x INT); CREATE TABLE s (x INT, y INT); CREATE TABLE t (y INT);"
PATH = "SELECT count(*) FROM r, s, t WHERE r.x = s.x AND s.y = t.y"


def test_example_4_3_the_path_query_is_not_hierarchical_with_the_overlap_as_witness():
    """Ex. 4.3: Q = Σ_{X,Y} R(X)·S(X,Y)·T(Y) is "a simple non-hierarchical query"."""
    found = classes_of(PATH, PATH_DDL)
    assert found.maintained.classes == ("free-connex", "acyclic") and found.fd_reduct is None
    assert found.maintained.witnesses["hierarchical"] == (
        "atoms(r.x) = {r, s} and atoms(s.y) = {s, t} overlap (in {s}) but neither contains the other"
    )
    assert "OuMv" in found.bounds() and "Thm 4.1" in found.bounds()


@pytest.mark.parametrize("dropped", [0, 1, 2])
def test_example_4_3_the_path_query_becomes_hierarchical_without_any_one_atom(dropped):
    """Ex. 4.3: "The query becomes hierarchical if we drop any of the atoms in Q" (as a GCQ: without S
    it is a cross product, which the compiler refuses to maintain)."""
    atoms = [Atom("r", ("x",)), Atom("s", ("x", "y")), Atom("t", ("y",))]
    assert "hierarchical" not in classify(Gcq(tuple(atoms), output=frozenset())).classes
    del atoms[dropped]
    assert "hierarchical" in classify(Gcq(tuple(atoms), output=frozenset())).classes


def test_example_4_3_hierarchical_but_not_q_hierarchical_names_the_bound_variable_above_the_free_one():
    """Ex. 4.3: Q(X) = Σ_Y R(X,Y)·S(Y) is "hierarchical but not q-hierarchical"."""
    found = classes_of("SELECT r.x, count(*) FROM r, s WHERE r.y = s.y GROUP BY r.x",
                       "CREATE TABLE r (x INT, y INT); CREATE TABLE s (y INT);")
    assert found.maintained.classes == ("hierarchical", "free-connex", "acyclic")
    assert found.maintained.witnesses["q-hierarchical"] == (
        "atoms(r.y) = {r, s} ⊋ atoms(r.x) = {r}, and r.x is free but r.y is bound"
    )


def test_hierarchical_but_not_free_connex_states_the_acyclic_bounds():
    """Q(X,Z) = Σ_Y R(X,Y)·S(Y,Z) is hierarchical, but its free variables X, Z with R and S close a cycle."""
    found = classes_of("SELECT r.x, s.z, count(*) FROM r, s WHERE r.y = s.y GROUP BY r.x, s.z",
                       "CREATE TABLE r (x INT, y INT); CREATE TABLE s (y INT, z INT);")
    assert found.maintained.classes == ("hierarchical", "acyclic")
    assert "the GYO reduction sticks" in found.maintained.witnesses["free-connex"]
    assert "α-acyclic, not free-connex" in found.bounds() and "OuMv" in found.bounds()


# --- Example 4.4 ------------------------------------------------------------------------------------


def test_example_4_4_q_of_y_x_z_is_q_hierarchical_with_constant_update_and_delay():
    """Ex. 4.4: Q(Y,X,Z) = R(Y,X)·S(Y,Z) is q-hierarchical: constant update time and delay (Thm 4.1)."""
    found = classes_of("SELECT r.y, r.x, s.z FROM r, s WHERE r.y = s.y",
                       "CREATE TABLE r (y INT, x INT); CREATE TABLE s (y INT, z INT);")
    assert list(found.maintained.classes) == ALL and found.maintained.witnesses == {}
    assert found.bounds().startswith("O(N) preprocessing, constant time per single-tuple update and constant enumeration")


def test_selections_pushed_into_atoms_and_the_columns_they_read_change_no_class():
    """Ex. 4.4's query with a selection on each relation, one on a column nothing else reads."""
    ddl = "CREATE TABLE r (y INT, x INT, v INT); CREATE TABLE s (y INT, z INT);"
    plain = classes_of("SELECT r.y, r.x, s.z FROM r, s WHERE r.y = s.y", ddl)
    selected = classes_of("SELECT r.y, r.x, s.z FROM r, s WHERE r.y = s.y AND r.v > 3 AND s.z < 10", ddl)
    assert selected.maintained.classes == plain.maintained.classes == tuple(ALL)
    assert schema(selected) == schema(plain) == {"r": {"r.y", "r.x"}, "s": {"r.y", "s.z"}}


def test_a_condition_over_two_atoms_becomes_a_pseudo_atom_hyperedge():
    """Q7's shape: an OR over two tables' columns is no selection of one table; as a hyperedge it
    closes a cycle r – s – θ1 that the plain join does not have."""
    plan = parse_plan("""
Aggregate group_by=[r.x AS x] aggregates=[count(*) AS c]
  JoinGraph conditions=[r.a = 1 and s.b = 2 or r.a = 2 and s.b = 1] join_classes=[[r.x, s.x]]
    Atom table=r alias=r columns=[x, a, unused] predicate=r.unused > 0
    Atom table=s alias=s columns=[x, b]
""")
    found = join_query(plan)
    assert [str(a) for a in found.query.atoms] == ["r(r.x,r.a)", "s(r.x,s.b)", "θ1(r.a,s.b)"]
    assert found.conditions == (("θ1", "r.a = 1 and s.b = 2 or r.a = 2 and s.b = 1"),)
    classes = classify(found.query)
    assert classes.classes == () and "atoms(r.a) = {r, θ1}" in classes.witnesses["hierarchical"]


# --- Example 4.10 -----------------------------------------------------------------------------------

RETAILER = """
CREATE TABLE inventory (locn INT, dateid INT, ksn INT, units INT);
CREATE TABLE weather (locn INT, dateid INT, rain INT);
CREATE TABLE location (locn INT, zip INT, sqft INT) {location_properties};
CREATE TABLE census (zip INT, population INT);
"""
RETAILER_JOIN = """SELECT i.locn, i.dateid, i.ksn, i.units, w.rain, l.zip, l.sqft, c.population
FROM inventory i, weather w, location l, census c
WHERE i.locn = w.locn AND i.dateid = w.dateid AND i.locn = l.locn AND l.zip = c.zip"""


def test_example_4_10_retailer_join_is_not_hierarchical_because_of_zip_and_locn():
    """Ex. 4.10: "not hierarchical, since the sets of atoms of the variables zip and locn intersect,
    but one set is not included in the other"."""
    found = classes_of(RETAILER_JOIN, RETAILER.format(location_properties=""))
    assert found.reduct_classes is None and found.fd_reduct is None
    assert found.maintained.witnesses["hierarchical"] == (
        "atoms(c.zip) = {c, l} and atoms(i.locn) = {i, l, w} overlap (in {l}) but neither contains the other"
    )


@pytest.mark.parametrize("dependency", ["'ivm.fd.zip' = 'locn'", "'ivm.fd.locn' = 'zip'"])
def test_example_4_10_retailer_reduct_is_q_hierarchical_with_either_direction_of_the_dependency(dependency):
    """Ex. 4.10: "Thanks to the fd zip → locn, the last relation becomes Census(locn, zip, ...), so the
    reduct of the join query is hierarchical"; the full join is then q-hierarchical (Fig. 4). The
    natural Retailer fact, locn → zip (a location has one zip code), works too: it extends
    Inventory and Weather by zip instead."""
    found = classes_of(RETAILER_JOIN, RETAILER.format(location_properties=f"TBLPROPERTIES ({dependency})"))
    assert found.original.classes == ("free-connex", "acyclic")
    assert list(found.maintained.classes) == ALL
    (fd,) = found.fd_reduct
    assert (fd.table, fd.declared) == ("location", True)
    if fd.determinant == ("zip",):
        assert schema(found, reduct=True)["c"] == {"c.zip", "i.locn", "c.population"}
    else:
        assert schema(found, reduct=True)["i"] >= {"c.zip"} and schema(found, reduct=True)["c"] == {"c.zip", "c.population"}
    assert "Thm 4.11" in found.bounds()


# --- Example 4.12 -----------------------------------------------------------------------------------

EX_4_12_DDL = """
CREATE TABLE r (x INT, w INT);
CREATE TABLE s (x INT, y INT) TBLPROPERTIES ('ivm.fd.x' = 'y');
CREATE TABLE t (y INT, z INT) TBLPROPERTIES ('ivm.fd.y' = 'z');
"""
EX_4_12 = "SELECT t.z, s.y, r.x, r.w FROM r, s, t WHERE r.x = s.x AND s.y = t.y"


def test_example_4_12_reduct_under_x_to_y_and_y_to_z_is_q_hierarchical():
    """Ex. 4.12: Q(Z,Y,X,W) = R(X,W)·S(X,Y)·T(Y,Z) is non-hierarchical; under Σ = {X → Y, Y → Z} its
    reduct R'(X,Y,Z,W)·S'(X,Y,Z)·T'(Y,Z) is q-hierarchical, so by Thm 4.11 Q has constant update
    time and delay."""
    found = classes_of(EX_4_12, EX_4_12_DDL)
    assert "hierarchical" not in found.original.classes
    assert schema(found) == {"r": {"r.x", "r.w"}, "s": {"r.x", "s.y"}, "t": {"s.y", "t.z"}}
    assert schema(found, reduct=True) == {
        "r": {"r.x", "s.y", "t.z", "r.w"}, "s": {"r.x", "s.y", "t.z"}, "t": {"s.y", "t.z"},
    }
    assert list(found.maintained.classes) == ALL
    assert [str(fd) for fd in found.fd_reduct] == ["s: x → y", "t: y → z"]


def test_example_4_12_explain_shows_the_reduct_and_its_dependencies():
    compiled = compile_query(EX_4_12, catalog_from_ddl(EX_4_12_DDL))
    document = json.loads(explain_json(compiled))
    assert document["query_classes"] == ALL
    assert document["fd_reduct"] == [
        {"table": "s", "from": ["x"], "to": ["y"], "declared": True},
        {"table": "t", "from": ["y"], "to": ["z"], "declared": True},
    ]
    assert document["query_classification"]["classes_without_fds"] == ["free-connex", "acyclic"]
    text = explain_text(compiled, verbose=True)
    assert "Query class (Olteanu §4): q-hierarchical, hierarchical, free-connex, acyclic (of the Σ-reduct, Def. 4.9)" in text
    assert "FDs: s: x → y; t: y → z" in text and "Thm 4.11" in text


def test_example_4_3_path_under_x_to_y_has_a_q_hierarchical_reduct():
    """Ex. 4.3's path query with X → Y declared on S: R'(X,Y) gains Y, so atoms(Y) = {R,S,T} ⊋
    atoms(X) = {R,S}: the reduct is hierarchical, and q-hierarchical as the query is Boolean."""
    ddl = "CREATE TABLE r (x INT); CREATE TABLE s (x INT, y INT) TBLPROPERTIES ('ivm.fd.x' = 'y'); CREATE TABLE t (y INT);"
    found = classes_of(PATH, ddl)
    assert schema(found, reduct=True)["r"] == {"r.x", "s.y"}
    assert found.uses_reduct and list(found.maintained.classes) == ALL


def test_a_reduct_that_gains_no_class_is_shown_but_not_used():
    """TPC-H Q12: orders' key adds o_orderpriority to lineitem's atom, but GROUP BY l_shipmode stays free
    below the bound orderkey: hierarchical, not q-hierarchical, with or without the reduct."""
    compiled = compile_query((TPCH_DIR / "q12.sql").read_text(), tpch_catalog())
    found = query_classes(compiled)
    assert found.reduct.changed and not found.uses_reduct and found.fd_reduct is None
    assert found.reduct_classes.classes == found.original.classes == ("hierarchical", "free-connex", "acyclic")
    assert "Σ-reduct (not used: it gains no class)" in explain_text(compiled, verbose=True)


# --- Example 4.14 -----------------------------------------------------------------------------------


def test_example_4_14_static_t_is_reported_but_the_query_stays_non_hierarchical():
    """Ex. 4.14: Q(A,B,C) = Σ_D R^d(A,D)·S^d(A,B)·T^s(B,C) "is not q-hierarchical. yet we can maintain it
    efficiently" because T is static (§4.5). The classes here ignore staticness (issue 12 item 5
    checks the §4.5 condition); EXPLAIN names the static table and says the condition is unchecked."""
    ddl = """CREATE TABLE r (a INT, d INT); CREATE TABLE s (a INT, b INT);
             CREATE TABLE t (b INT, c INT) TBLPROPERTIES ('ivm.static' = 'true');"""
    sql = "SELECT r.a, s.b, t.c, count(*) FROM r, s, t WHERE r.a = s.a AND s.b = t.b GROUP BY r.a, s.b, t.c"
    compiled = compile_query(sql, catalog_from_ddl(ddl))
    found = query_classes(compiled)
    assert found.maintained.witnesses["hierarchical"] == (
        "atoms(r.a) = {r, s} and atoms(s.b) = {s, t} overlap (in {s}) but neither contains the other"
    )
    assert found.static_tables == ("t",)
    assert "static tables t: Olteanu §4.5" in explain_text(compiled, verbose=True)


# --- A query that stays non-hierarchical --------------------------------------------------------------


def test_tpch_q5_stays_non_hierarchical_after_the_key_dependencies():
    """Q5 is cyclic (customer and supplier share a nation); the key FDs make it free-connex only."""
    document = json.loads(explain_json(compile_query((TPCH_DIR / "q05.sql").read_text(), tpch_catalog())))
    assert document["query_classes"] == ["free-connex", "acyclic"]
    details = document["query_classification"]
    assert details["classes_without_fds"] == [] and details["reduct_classes"] == ["free-connex", "acyclic"]
    assert "overlap" in details["witnesses"]["hierarchical"] and "neither contains the other" in details["witnesses"]["hierarchical"]
    assert {fd["table"] for fd in document["fd_reduct"]} == {"customer", "orders", "supplier", "nation"}


# --- TPC-H through EXPLAIN JSON -------------------------------------------------------------------------


@pytest.mark.parametrize(("number", "classes", "reduct_tables"), [
    (1, ALL, None),                                     # one table
    (3, ALL, {"orders"}),                               # o_orderkey → o_custkey, ... makes it q-hierarchical
    (10, ALL, {"customer", "orders", "nation"}),
    (12, ["hierarchical", "free-connex", "acyclic"], None),  # GROUP BY l_shipmode below the bound orderkey
    (9, ["free-connex", "acyclic"], {"supplier", "partsupp", "orders", "nation"}),
])
def test_tpch_explain_json_reports_the_classes_of_the_query_as_maintained(number, classes, reduct_tables):
    document = json.loads(explain_json(compile_query((TPCH_DIR / f"q{number:02d}.sql").read_text(), tpch_catalog())))
    assert document["query_classes"] == classes
    if reduct_tables is None:
        assert document["fd_reduct"] is None
    else:
        assert {fd["table"] for fd in document["fd_reduct"]} == reduct_tables
        assert all(fd["from"] and fd["to"] and not fd["declared"] for fd in document["fd_reduct"])


@pytest.mark.parametrize(("number", "reason"), [
    (2, "a subquery remains"),
    (13, "ViewAtom"),
])
def test_tpch_queries_outside_conjunctive_queries_say_why(number, reason):
    compiled = compile_query((TPCH_DIR / f"q{number:02d}.sql").read_text(), tpch_catalog())
    document = json.loads(explain_json(compiled))
    assert document["query_classes"] == [] and document["fd_reduct"] is None
    assert reason in document["query_classification"]["reason"]
    assert isinstance(query_classes(compiled), NotAJoinQuery)
    assert "Query class (Olteanu §4): not classified: " in explain_text(compiled, verbose=True)


# --- The class inclusions, on random conjunctive queries ------------------------------------------------


def random_query(rng: random.Random) -> Gcq:
    variables = "abcdef"
    atoms = tuple(
        Atom(f"r{i}", tuple(rng.sample(variables, rng.randint(1, 3)))) for i in range(rng.randint(1, 4))
    )
    used = sorted({v for a in atoms for v in a.variables})
    return Gcq(atoms, output=frozenset(v for v in used if rng.random() < 0.4))


def test_q_hierarchical_implies_hierarchical_and_free_connex_and_hierarchical_implies_acyclic():
    """The inclusions the survey states (§4.1: q-hierarchical ⊂ free-connex α-acyclic) and the classical
    one (hierarchical queries are α-acyclic); each class also occurs, so the check is not vacuous."""
    rng = random.Random(12)
    seen = set()
    for _ in range(400):
        classes = set(classify(random_query(rng)).classes)
        seen.add(frozenset(classes))
        if "q-hierarchical" in classes:
            assert {"hierarchical", "free-connex"} <= classes
        if "hierarchical" in classes or "free-connex" in classes:
            assert "acyclic" in classes
    assert {frozenset(ALL), frozenset(), frozenset({"acyclic"}), frozenset({"free-connex", "acyclic"}),
            frozenset({"hierarchical", "free-connex", "acyclic"})} <= seen
