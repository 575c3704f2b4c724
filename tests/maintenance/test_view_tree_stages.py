"""A view tree lowered to per-view keyed stages (issue 12 item 7, operators/lowering/view_stages.py).

The keys the lowering gives the survey's shapes, read from EXPLAIN's JSON: in the canonical order of
a q-hierarchical query each view is kept keyed by its variables shared with its parent; Ex. 4.3's
free variable above a bound one shrinks the bound view's key to the variable its atoms share;
Ex. 4.4's factorized groups stay in one stage keyed by Y; Ex. 4.12's reduct order becomes a stage
keyed by X (V'_X), then one keyed by Y (V'_Z fused into the root, which has no other part). Then the results: equal to DuckDB's recomputation after every batch of
random insert/delete streams (duplicate rows, groups that empty, NULL GROUP BY values) on the
compiled and the generic local runner, and equal change for change to the single-stage view tree
under every candidate order (where keys shrink, down to a constant).
"""

from __future__ import annotations

import functools
import json
import random
import re
from decimal import Decimal

import pytest

import operators.lowering.query as query_lowering
from catalog.ddl import catalog_from_ddl
from operators.lowering.view_tree import lower_view_tree
from operators.runtime.stream import Update, batches
from operators.stages.view_tree_groups import GroupedViewTreeStage
from planner.compiler import compile_query
from planner.explain import explain_json, explain_text
from planner.ir.values import SqlRuntimeError
from planner.ir.view_tree_plan import ViewTreeAggregate
from planner.view import MaintainedView
from tests.maintenance.checking import check_against_recomputation
from tests.maintenance.test_view_tree_queries import stream

DDL = """
CREATE TABLE r (a INT NOT NULL, b INT);
CREATE TABLE s (a INT NOT NULL, c INT NOT NULL, e INT NOT NULL);
CREATE TABLE t (a INT NOT NULL, c INT NOT NULL, d DECIMAL(7,2) NOT NULL);
CREATE TABLE p (x INT NOT NULL, y INT NOT NULL);
CREATE TABLE q (y INT NOT NULL, v DOUBLE NOT NULL);
CREATE TABLE fr (x INT NOT NULL, w INT NOT NULL);
CREATE TABLE fs (x INT NOT NULL, y INT NOT NULL) TBLPROPERTIES ('ivm.fd.x' = 'y');
CREATE TABLE ft (y INT NOT NULL, z INT NOT NULL) TBLPROPERTIES ('ivm.fd.y' = 'z');
"""

RST = "FROM r, s, t WHERE r.a = s.a AND s.a = t.a AND s.c = t.c"
#: name → (SQL, tables, expected stages as (view, groups?, key), the root's last)
SHAPES = {
    "q-hierarchical: a view keyed by its variables shared with its parent": (
        f"SELECT r.a, SUM(s.e) AS se, SUM(s.e * t.d) AS sed, COUNT(*) AS n {RST} GROUP BY r.a",
        ("r", "s", "t"), [("s.c", False, ["r.a", "s.c"]), ("r.a", True, ["r.a"])]),
    "two free views: V'_s.c's groups keyed by (r.a, s.c), the root's by r.a": (
        f"SELECT r.a, s.c, SUM(t.d) AS sd, AVG(s.e) AS ae, COUNT(*) AS n {RST} GROUP BY r.a, s.c",
        ("r", "s", "t"), [("s.c", True, ["r.a", "s.c"]), ("r.a", True, ["r.a"])]),
    "global aggregate: the root's contributions summed under a constant key": (
        f"SELECT COUNT(*) AS n, SUM(t.d) AS sd, AVG(s.e) AS ae {RST}",
        ("r", "s", "t"), [("s.c", False, ["r.a", "s.c"]), ("r.a", False, ["r.a"]), (None, True, [])]),
    "Ex. 4.3: Q(X) = Σ_Y R(X, Y)·S(Y), the bound view keyed by Y alone": (
        "SELECT p.x, COUNT(*) AS n, SUM(q.v) AS sv FROM p, q WHERE p.y = q.y GROUP BY p.x",
        ("p", "q"), [("p.y", False, ["p.y"]), ("p.x", True, ["p.x"])]),
    "Ex. 4.4: Q(Y, X, Z) = R(Y, X)·S(Y, Z), NULL group values, one stage keyed by Y": (
        "SELECT r.a, r.b, s.c, COUNT(*) AS n, SUM(s.e) AS se FROM r, s WHERE r.a = s.a GROUP BY r.a, r.b, s.c",
        ("r", "s"), [("r.a", True, ["r.a"])]),
    "Ex. 4.12: the reduct's order Y(Z(X(W))) as a stage keyed by X, then one keyed by Y": (
        "SELECT ft.z, fs.y, fr.x, fr.w, COUNT(*) AS n FROM fr, fs, ft WHERE fr.x = fs.x AND fs.y = ft.y "
        "GROUP BY ft.z, fs.y, fr.x, fr.w",
        ("fr", "fs", "ft"), [("fr.x", True, ["fr.x"]), ("fs.y", True, ["fs.y"])]),
}


def draw(table: str, g: random.Random) -> tuple:
    """Small domains (many partners, repeated rows); r.b NULL one time in four; the FDs x → y (fs)
    and y → z (ft) hold."""
    match table:
        case "r":
            return (g.randrange(4), None if g.random() < 0.25 else g.randrange(3))
        case "s":
            return (g.randrange(4), g.randrange(3), g.randrange(-3, 9))
        case "t":
            return (g.randrange(4), g.randrange(3), Decimal(g.randrange(-500, 900)) / 100)
        case "p":
            return (g.randrange(5), g.randrange(4))
        case "q":
            return (g.randrange(4), g.randrange(1, 90) / 8)
        case "fr":
            return (g.randrange(6), g.randrange(3))
        case "fs":
            x = g.randrange(6)
            return (x, x % 3)
        case "ft":
            y = g.randrange(3)
            return (y, y % 2)
    raise KeyError(table)


def stages_of(sql: str) -> list[tuple]:
    found = json.loads(explain_json(compile_query(sql, catalog_from_ddl(DDL))))["view_stages"]
    return [(s["view"], s["kind"] in ("groups", "total"), s["key"]) for s in found]


@pytest.mark.parametrize("name", list(SHAPES))
def test_the_lowering_keys_each_stage_by_the_variables_its_inputs_share(name):
    sql, _, expected = SHAPES[name]
    assert stages_of(sql) == expected


@pytest.mark.parametrize("name", list(SHAPES))
@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "generic"])
def test_per_view_stages_equal_recomputation_after_every_batch(name, compiled):
    sql, tables, _ = SHAPES[name]
    catalog = catalog_from_ddl(DDL)
    updates = stream(tables, seed=len(name), updates=400, draw=draw)
    view = check_against_recomputation(sql, catalog, updates, batch_size=20, informative_at_least=0.8,
                                       compiled=compiled)
    assert view.result(), "the final result must not be empty"


def test_groups_that_empty_and_null_group_values_are_met():
    """The Ex. 4.4 stream is informative: some batch removes a group, and NULL group values occur."""
    sql, tables, _ = SHAPES["Ex. 4.4: Q(Y, X, Z) = R(Y, X)·S(Y, Z), NULL group values, one stage keyed by Y"]
    removed, nulls = 0, 0
    with MaintainedView(sql, catalog_from_ddl(DDL)) as view:
        for batch in batches(stream(tables, seed=5, updates=400, draw=draw), 20):
            changes = view.apply(batch)
            removed += sum(1 for _, weight in changes if weight < 0)
            nulls += sum(1 for row in view.result() if row[1] is None)
    assert removed and nulls


@pytest.mark.parametrize("name", list(SHAPES))
def test_per_view_stages_emit_the_changes_of_the_single_stage_tree_for_every_candidate_order(name, monkeypatch):
    """Every order the cost model weighed, forced: orders other than the canonical one put atoms under
    variables they lack, so keys shrink (down to a constant); the changes stay the single stage's."""
    sql, tables, _ = SHAPES[name]
    catalog = catalog_from_ddl(DDL)
    updates = stream(tables, seed=2 * len(name), updates=200, draw=draw)
    node = next(n for n in compile_query(sql, catalog).plan.walk() if isinstance(n, ViewTreeAggregate))
    single_stage = functools.partial(lower_view_tree, single_stage=True)
    for candidate in node.candidates:
        forced = tuple(re.findall(r"[a-z]+\.[a-z]+", candidate.order))
        per_view = MaintainedView(compile_query(sql, catalog, variable_order=forced), catalog)
        with monkeypatch.context() as patch:
            patch.setattr(query_lowering, "lower_view_tree", single_stage)
            single = MaintainedView(compile_query(sql, catalog, variable_order=forced), catalog)
        assert [type(n.stage) for n in single.compiled.dataflow.stages][0] is GroupedViewTreeStage
        for batch in batches(updates, 20):
            assert sorted(per_view.apply(batch), key=repr) == sorted(single.apply(batch), key=repr), candidate.order
        assert per_view.result()


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "generic"])
def test_a_group_whose_having_fails_holds_the_error_until_a_batch_moves_it(compiled):
    """HAVING divides by COUNT(*) − 2: the batch that makes a group's count 2 makes the view's value
    Spark's DIVIDE_BY_ZERO, computed in the result map after both view stages ran it. The error is
    held (operators/held_errors.py): ``result()`` raises it, and the next batch that moves the count
    off 2 makes the view right again, as a view created after those batches."""
    sql = ("SELECT p.x, COUNT(*) AS n FROM p, q WHERE p.y = q.y GROUP BY p.x "
           "HAVING 10 / (COUNT(*) - 2) <> 0")
    catalog = catalog_from_ddl(DDL)
    first = [Update(1, "p", 1, (1, 7)), Update(2, "q", 1, (7, 1.5)), Update(3, "p", 1, (2, 7))]
    failing = [Update(4, "q", 1, (7, 2.5)), Update(5, "p", 1, (3, 8))]
    last = [Update(6, "q", 1, (8, 0.5)), Update(7, "p", 1, (4, 8)), Update(8, "q", 1, (8, 1.0)), Update(9, "p", 1, (4, 8)),
            Update(10, "q", 1, (7, 3.5)), Update(11, "q", 1, (8, 2.0))]
    with MaintainedView(sql, catalog, compiled=compiled) as view:
        view.apply(first)
        assert view.result() == [(1, 1), (2, 1)]
        view.apply(failing)
        with pytest.raises(SqlRuntimeError, match="DIVIDE_BY_ZERO"):
            view.result()
        view.apply(last)
        fresh = MaintainedView(sql, catalog, compiled=compiled)
        fresh.apply(first + failing + last)
        assert sorted(view.result()) == sorted(fresh.result()) == [(1, 3), (2, 3), (3, 3), (4, 6)]


def test_explain_lists_the_stages_with_their_keys():
    sql = SHAPES["global aggregate: the root's contributions summed under a constant key"][0]
    text = explain_text(compile_query(sql, catalog_from_ddl(DDL)), verbose=True)
    assert "[0] V_s.c, fused s.e, t.d, key (r.a, s.c), inputs s, t" in text
    assert "[1] V_r.a, key (r.a), inputs r, V_s.c" in text
    assert "[2] the total of a global aggregate (one group), key constant (does not scale out)" in text
