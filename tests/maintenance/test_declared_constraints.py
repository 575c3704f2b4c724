"""Declared functional dependencies, ``ivm.static`` and ``ivm.insert_only`` are checked on every batch
(operators/runtime/dependencies.py): a batch breaking one is rejected naming table, FD, row and both
values, state untouched; under quarantine the offending row goes to the rejects. The F-IVM view tree's
Σ-reduct query (tests/maintenance/test_view_tree_queries.py) relies on locn → zip."""

from __future__ import annotations

import json

import pytest

from catalog.ddl import catalog_from_ddl
from operators.runtime.stream import Update
from operators.runtime.validate import InvalidChangeError
from planner.ir.view_tree_plan import ViewTreeAggregate
from planner.view import MaintainedView
from tests.maintenance.test_view_tree_queries import DDL, QUERIES

FD_QUERY = QUERIES["q-hierarchical only with the FD locn → zip"][0]

FLAGS_DDL = """
CREATE TABLE dim (k INT NOT NULL, v INT NOT NULL) TBLPROPERTIES ('ivm.static' = 'true');
CREATE TABLE facts (k INT NOT NULL, x INT NOT NULL) TBLPROPERTIES ('ivm.insert_only' = 'true');
"""


def _batch(*changes: tuple[str, int, tuple]) -> list[Update]:
    return [Update(seq, table, op, row) for seq, (table, op, row) in enumerate(changes, 1)]


def _loaded_view(on_invalid: str = "error") -> MaintainedView:
    view = MaintainedView(FD_QUERY, catalog_from_ddl(DDL), on_invalid=on_invalid)
    assert any(isinstance(n, ViewTreeAggregate) for n in view.compiled.plan.walk()), "the Σ-reduct view tree"
    view.apply(_batch(("location", 1, (1, 10)), ("location", 1, (2, 10)), ("census", 1, (10, 150)),
                      ("inventory", 1, (1, 7, 3)), ("inventory", 1, (2, 7, 4))))
    assert view.result(), "the loaded view must have rows to compare"
    return view


def test_fd_violation_within_one_batch_is_rejected_and_leaves_state_unchanged():
    view = MaintainedView(FD_QUERY, catalog_from_ddl(DDL))
    with pytest.raises(InvalidChangeError, match=r"location.*locn → zip.*\(3\).*\(11\) and \(12\)"):
        view.apply(_batch(("location", 1, (3, 11)), ("location", 1, (3, 12))))
    assert view.result() == []
    view.apply(_batch(("location", 1, (3, 12)), ("census", 1, (12, 5)), ("inventory", 1, (3, 1, 1))))
    assert view.result() == [(3, 1, 5, 1)]


def test_fd_violation_across_batches_leaves_the_result_as_it_was():
    view = _loaded_view()
    before = view.result()
    with pytest.raises(InvalidChangeError, match=r"locn → zip.*\(1\).*\(10\) and \(20\)"):
        view.apply(_batch(("census", 1, (20, 1)), ("location", 1, (1, 20))))
    assert view.result() == before
    # the rejected batch left no trace: the FD state still says locn 1 → zip 10
    with pytest.raises(InvalidChangeError, match="locn → zip"):
        view.apply(_batch(("location", 1, (1, 30))))
    assert view.result() == before


@pytest.mark.parametrize("order", ["delete first", "insert first"])
def test_replacing_the_dependent_value_in_one_batch_keeps_the_fd(order):
    view = _loaded_view()
    changes = [("location", -1, (1, 10)), ("location", 1, (1, 20)), ("census", 1, (20, 500))]
    view.apply(_batch(*(changes if order == "delete first" else changes[::-1])))
    assert sorted(view.result()) == [(1, 3, 500, 1), (2, 4, 150, 1)]
    # the new value is the one stored: zip 10 for locn 1 now breaks it
    with pytest.raises(InvalidChangeError, match=r"\(20\) and \(10\)"):
        view.apply(_batch(("location", 1, (1, 10))))


def test_quarantine_routes_the_violating_row_to_rejects():
    view = _loaded_view("quarantine")
    view.apply(_batch(("location", 1, (1, 20)), ("location", 1, (5, 10)), ("inventory", 1, (5, 1, 9))))
    assert [(r.update.row, "locn → zip" in r.reason) for r in view.rejected] == [((1, 20), True)]
    assert sorted(view.result()) == [(1, 3, 150, 1), (2, 4, 150, 1), (5, 9, 150, 1)]


def test_null_determinant_is_not_constrained():
    catalog = catalog_from_ddl("CREATE TABLE p (a INT, b INT) TBLPROPERTIES ('ivm.fd.a' = 'b');")
    view = MaintainedView("SELECT a, b FROM p", catalog)
    view.apply(_batch(("p", 1, (None, 1)), ("p", 1, (None, 2))))
    assert sorted(view.result(), key=repr) == [(None, 1), (None, 2)]
    with pytest.raises(InvalidChangeError, match=r"\(1\) and \(NULL\)"):
        view.apply(_batch(("p", 1, (1, 1)), ("p", 1, (1, None))))


def test_static_table_takes_its_rows_in_the_first_batch_only():
    view = MaintainedView("SELECT d.v, SUM(f.x) AS sx FROM dim d, facts f WHERE d.k = f.k GROUP BY d.v",
                          catalog_from_ddl(FLAGS_DDL))
    view.apply(_batch(("dim", 1, (1, 100)), ("facts", 1, (1, 5))))
    before = view.result()
    assert before == [(100, 5)]
    with pytest.raises(InvalidChangeError, match="table dim is static"):
        view.apply(_batch(("facts", 1, (1, 1)), ("dim", 1, (2, 200))))
    with pytest.raises(InvalidChangeError, match="table facts is insert-only.*deletes are not allowed"):
        view.apply(_batch(("facts", -1, (1, 5))))
    assert view.result() == before
    view.apply(_batch(("facts", 1, (1, 1))))
    assert view.result() == [(100, 6)]


def test_view_tree_static_atom_is_loaded_once_has_no_delta_path_and_explain_says_so():
    """Olteanu §4.5: census static, so the view tree builds no delta path for it (Ex. 4.14)."""
    from planner.explain import explain_json, explain_text

    ddl = DDL.replace("CREATE TABLE census (zip INT NOT NULL, pop INT NOT NULL);",
                      "CREATE TABLE census (zip INT NOT NULL, pop INT NOT NULL) TBLPROPERTIES ('ivm.static' = 'true');")
    view = MaintainedView(FD_QUERY, catalog_from_ddl(ddl))
    stages = [n.stage for n in view.compiled.dataflow.stages if hasattr(n.stage, "update_bounds")]
    assert [a.name for stage in stages for a in stage.order.atoms if a.static] == ["c"]
    bounds = {atom for stage in stages for atom in stage.update_bounds()}
    assert "c" not in bounds and "i" in bounds
    assert "static (ivm.static, §4.5): c" in explain_text(view.compiled, verbose=True)
    assert json.loads(explain_json(view.compiled))["static_atoms"] == ["c"]
    view.apply(_batch(("census", 1, (10, 150)), ("location", 1, (1, 10)), ("inventory", 1, (1, 7, 3))))
    assert view.result() == [(1, 3, 150, 1)]
    with pytest.raises(InvalidChangeError, match="table census is static"):
        view.apply(_batch(("census", -1, (10, 150))))
    view.apply(_batch(("inventory", 1, (1, 8, 4))))
    assert view.result() == [(1, 7, 300, 2)]


def test_fd_counts_copies_and_nets_the_whole_batch():
    """Keyless (bag) table: one of two copies deleted leaves its dependent value held; an insert and a
    delete of the same conflicting row in one batch cancel."""
    catalog = catalog_from_ddl("CREATE TABLE p (a INT, b INT) TBLPROPERTIES ('ivm.fd.a' = 'b');")
    view = MaintainedView("SELECT a, b, COUNT(*) AS n FROM p GROUP BY a, b", catalog)
    view.apply(_batch(("p", 1, (1, 1)), ("p", 1, (1, 1))))
    with pytest.raises(InvalidChangeError, match=r"\(1\) and \(2\)"):
        view.apply(_batch(("p", -1, (1, 1)), ("p", 1, (1, 2))))
    view.apply(_batch(("p", 1, (1, 2)), ("p", -1, (1, 2)), ("p", -1, (1, 1))))
    assert view.result() == [(1, 1, 1)]
    view.apply(_batch(("p", 1, (1, 2)), ("p", -1, (1, 1))))
    assert view.result() == [(1, 2, 1)]
