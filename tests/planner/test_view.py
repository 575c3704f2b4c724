"""The ``MaintainedView`` API on the local runner: a batch in, the result's changes out."""

from __future__ import annotations

import pytest

from catalog.ddl import catalog_from_ddl
from operators.runtime.stream import Update
from planner.view import MaintainedView

CATALOG = catalog_from_ddl("CREATE TABLE customer (c_custkey INT, c_name VARCHAR(20), PRIMARY KEY (c_custkey));")
SQL = "select c_name from customer"


def test_apply_returns_the_result_changes_and_result_reads_the_current_rows():
    with MaintainedView(SQL, CATALOG) as view:
        assert view.apply([Update(1, "customer", 1, (1, "alice")), Update(2, "customer", 1, (2, "bob"))]) == [
            (("alice",), 1), (("bob",), 1)]
        assert view.apply([Update(3, "customer", -1, (1, "alice"))]) == [(("alice",), -1)]
        assert view.result() == [("bob",)]


class _RunnerEmitting:
    """A runner that emits a fixed changelog, standing in for a stage with a bug."""

    def __init__(self, delta):
        self.delta = delta

    def apply(self, changes_by_table, keep=None):
        if keep is not None:  # as the real runners: the view's ordered result takes the changes in the batch
            keep(self.delta)
        return self.delta


def test_a_result_row_driven_below_zero_is_an_internal_error():
    with MaintainedView(SQL, CATALOG) as view:
        view.apply([Update(1, "customer", 1, (1, "alice"))])
        view.runner = _RunnerEmitting([(("alice",), -2)])
        with pytest.raises(RuntimeError, match=r"negative multiplicity \[\('alice',\)\]"):
            view.apply([Update(2, "customer", 1, (2, "bob"))])
