"""ChooseViewTree on the survey's examples (Olteanu §4: Ex. 4.3, 4.4, 4.10, 4.12) written as SQL over
a small DDL catalog: which queries get a view tree, the order derived, the candidates and their
costs, the forced order, and why the others are refused."""

from __future__ import annotations

import json

import pytest

from catalog.ddl import catalog_from_ddl
from planner.cli import main
from planner.compiler import compile_query
from planner.explain import explain_json, explain_text
from planner.ir.notation import parse_plan, print_plan
from planner.ir.view_tree_plan import ViewTreeAggregate
from planner.optimizer.executor import OptimizerError

DDL = """
CREATE TABLE r (x INT NOT NULL, y INT NOT NULL, w INT NOT NULL) TBLPROPERTIES ('ivm.rows' = '100000');
CREATE TABLE s (x INT NOT NULL, y INT NOT NULL, z INT NOT NULL) TBLPROPERTIES ('ivm.rows' = '1000');
CREATE TABLE t (y INT NOT NULL, z INT NOT NULL);
CREATE TABLE n (x INT, y INT);
CREATE TABLE inventory (locn INT NOT NULL, dateid INT NOT NULL, ksn INT NOT NULL, units INT NOT NULL);
CREATE TABLE weather (locn INT NOT NULL, dateid INT NOT NULL, temp INT NOT NULL);
CREATE TABLE location (locn INT NOT NULL, zip INT NOT NULL) TBLPROPERTIES ('ivm.fd.zip' = 'locn');
CREATE TABLE census (zip INT NOT NULL, pop INT NOT NULL);
CREATE TABLE r2 (x INT NOT NULL, w INT NOT NULL);
CREATE TABLE s2 (x INT NOT NULL, y INT NOT NULL) TBLPROPERTIES ('ivm.fd.x' = 'y');
CREATE TABLE t2 (y INT NOT NULL, z INT NOT NULL) TBLPROPERTIES ('ivm.fd.y' = 'z');
"""


@pytest.fixture(scope="module")
def catalog():
    return catalog_from_ddl(DDL)


def view_tree(compiled) -> ViewTreeAggregate | None:
    return next((n for n in compiled.plan.walk() if isinstance(n, ViewTreeAggregate)), None)


def test_ex_4_3_non_hierarchical_is_refused_with_the_witness(catalog):
    # Q = Σ_{X,Y} R(X)·S(X,Y)·T(Y): atoms(x) and atoms(y) overlap
    compiled = compile_query("SELECT COUNT(*) AS c FROM r, s, t WHERE r.x = s.x AND s.y = t.y AND r.w = 1", catalog)
    assert view_tree(compiled) is None
    why = compiled.context.refusals["ChooseViewTree"]
    assert why.startswith("not hierarchical: atoms(") and "neither contains the other" in why


def test_ex_4_3_hierarchical_not_q_hierarchical_gets_free_variables_on_top(catalog):
    # Q(X) = Σ_Y R(X,Y)·S(Y): y is bound and in more atoms than the free x, so x goes on top and S's
    # update probes R by y (the cost says so; the canonical order of the hierarchy would be y(x))
    compiled = compile_query("SELECT r.x, COUNT(t.z) AS c FROM r, t WHERE r.y = t.y GROUP BY r.x", catalog)
    node = view_tree(compiled)
    assert node.order == "r.x(r.y(t.z))"
    assert node.ring_kind == "count" and node.lifted == ()  # COUNT of a NOT NULL column is the count
    assert node.candidates[0].update > 2  # a probe: not the O(1) of a q-hierarchical order
    assert "hierarchical" in json.loads(explain_json(compiled))["query_classes"]


def test_ex_4_4_q_hierarchical_order_and_costs(catalog):
    # Q(Y, X, Z) = R(Y, X)·S(Y, Z): order y(x, z), every delta O(1)
    compiled = compile_query("SELECT r.y, r.x, s.z, COUNT(*) AS c FROM r, s WHERE r.y = s.y GROUP BY r.y, r.x, s.z",
                             catalog)
    node = view_tree(compiled)
    assert parse_plan(print_plan(compiled.plan)) == compiled.plan  # the node and its costs print and parse back
    assert node.order == "r.y(r.x, s.z)"
    assert node.chosen_by == "cost" and node.fd_reduct == ()
    chosen, *rejected = node.candidates
    assert chosen.order == node.order and chosen.update == 2.0  # two levels, one lookup each
    assert all((c.update, c.state) >= (chosen.update, chosen.state) for c in rejected)
    # the ivm.rows statistics enter the state estimate: r has 100 000 rows, s 1 000
    assert chosen.state > 101_000


def test_ex_4_10_fd_makes_the_retailer_join_hierarchical(catalog):
    sql = """SELECT SUM(i.units) AS u, COUNT(*) AS c FROM inventory i, weather w, location l, census c
             WHERE i.locn = w.locn AND i.dateid = w.dateid AND i.locn = l.locn AND l.zip = c.zip"""
    compiled = compile_query(sql, catalog)
    node = view_tree(compiled)
    assert node is not None, compiled.context.refusals
    assert node.fd_reduct == ("location: zip → locn",)
    assert node.order.startswith("i.locn(")  # locn's atoms contain zip's in the reduct
    text = explain_text(compiled, verbose=True)
    assert "Variable order (view tree)" in text and "rejected" in text


def test_ex_4_10_without_the_fd_is_refused():
    catalog = catalog_from_ddl(DDL.replace("TBLPROPERTIES ('ivm.fd.zip' = 'locn')", ""))
    compiled = compile_query("""SELECT COUNT(*) AS c FROM inventory i, location l, census c
                                WHERE i.locn = l.locn AND l.zip = c.zip""", catalog)
    assert view_tree(compiled) is None
    assert "not hierarchical" in compiled.context.refusals["ChooseViewTree"]


def test_ex_4_12_reduct_order_is_z_y_x_w(catalog):
    # Q(Z,Y,X,W) = R(X,W)·S(X,Y)·T(Y,Z) with X → Y, Y → Z: the reduct is q-hierarchical
    sql = """SELECT t2.z, s2.y, r2.x, r2.w, COUNT(*) AS c FROM r2, s2, t2 WHERE r2.x = s2.x AND s2.y = t2.y
             GROUP BY t2.z, s2.y, r2.x, r2.w"""
    node = view_tree(compile_query(sql, catalog))
    assert node.order == "s2.y(t2.z(r2.x(r2.w)))" or node.order == "t2.z(s2.y(r2.x(r2.w)))"
    assert set(node.fd_reduct) == {"s2: x → y", "t2: y → z"}
    # the cost model knows the FDs: R's delta probes S by x and T by y, one match each (Fig. 6)
    assert node.candidates[0].update == 3.0 and node.candidates[-1].update > 100


def test_forced_order_and_its_errors(catalog):
    sql = "SELECT r.y, r.x, s.z, COUNT(*) AS c FROM r, s WHERE r.y = s.y GROUP BY r.y, r.x, s.z"
    node = view_tree(compile_query(sql, catalog, variable_order=("x", "r.y")))
    assert node.chosen_by == "forced" and node.order == "r.x(r.y(s.z))"
    with pytest.raises(OptimizerError, match="names no variable"):
        compile_query(sql, catalog, variable_order=("nope",))
    grouped = "SELECT r.x, COUNT(*) AS c FROM r, t WHERE r.y = t.y GROUP BY r.x"
    with pytest.raises(OptimizerError, match="free variables must form the top"):
        compile_query(grouped, catalog, variable_order=("r.y",))


def test_nullable_join_columns_min_and_integer_products_are_refused(catalog):
    compiled = compile_query("SELECT COUNT(*) AS c FROM n, t WHERE n.y = t.y", catalog)
    assert "may be NULL" in compiled.context.refusals["ChooseViewTree"]
    compiled = compile_query("SELECT r.x, MIN(s.z) AS m FROM r, s WHERE r.y = s.y GROUP BY r.x", catalog)
    assert "MIN is not a ring aggregate" in compiled.context.refusals["ChooseViewTree"]
    # Spark checks each row's integer product for overflow; a factorized Σxy never sees that row
    compiled = compile_query("SELECT r.x, SUM(r.w * s.z) AS m FROM r, s WHERE r.y = s.y GROUP BY r.x", catalog)
    assert "is an integer product" in compiled.context.refusals["ChooseViewTree"]


def test_cli_explain_with_a_forced_variable_order(tmp_path, capsys):
    ddl = tmp_path / "schema.sql"
    ddl.write_text(DDL)
    sql = "SELECT r.y, r.x, s.z, COUNT(*) AS c FROM r, s WHERE r.y = s.y GROUP BY r.y, r.x, s.z"
    assert main(["explain", sql, "--catalog", str(ddl), "--format", "json", "--variable-order", "r.x,r.y"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["strategy"] == "view_tree"
    assert (document["variable_order"], document["order_chosen_by"]) == ("r.x(r.y(s.z))", "forced")
