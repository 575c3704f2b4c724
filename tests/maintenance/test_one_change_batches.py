"""Batches of one change (issue 13): the stream reader's one-change batches take a fast path on the
compiled runner (the table's generated checked function, ``CompiledRunner.run_one`` inside ``Validator.apply``; the generic
runner takes the general path, ``Validator.validate`` then ``apply``) and must give,
batch by batch, what the general path gives for the same change: the result's changes, the rejected
changes with their reasons, the validator's rows and every stage's state; and a one-change batch a
stage fails on must leave every state as it was."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from catalog.tpch import tpch_catalog
from operators.runtime.stream import Update, open_stream, write_stream
from planner.view import MaintainedView
from planner.workloads.oracle import DuckDBOracle, StreamTables, assert_matches_reference
from tests.maintenance.test_atomic_batches import (
    InjectedFault,
    canonical,
    record_stages,
    snapshot,
    stage_fault,
)

EXAMPLES = Path(__file__).parents[2] / "examples"
QUERIES = {
    "q3": (EXAMPLES / "tpch" / "q03.sql").read_text(),  # lookups, a ring aggregate, top-k
    "q10": (EXAMPLES / "tpch" / "q10.sql").read_text(),
    "grouped": "select o_custkey, count(*) as n, sum(o_totalprice) as total, min(o_orderdate) as first "
               "from orders group by o_custkey",
}


def with_invalid_changes(updates: list[Update]) -> list[Update]:
    """``updates`` renumbered, with three invalid changes in the middle: a duplicate key, a delete of
    an absent row and a delete that does not match the stored row (the DECIMAL total changed)."""
    first_order = next(u for u in updates if u.table == "orders" and u.op == 1)
    other = first_order.row[:3] + (first_order.row[3] + 1,) + first_order.row[4:]
    absent = (-1,) + first_order.row[1:]
    middle = len(updates) // 2
    bad = [("orders", 1, first_order.row), ("orders", -1, absent), ("orders", -1, other)]
    changes = ([(u.table, u.op, u.row) for u in updates[:middle]] + bad
               + [(u.table, u.op, u.row) for u in updates[middle:]])
    return [Update(seq, table, op, row) for seq, (table, op, row) in enumerate(changes, start=1)]


@pytest.fixture(scope="module")
def one_change_stream(tpch_streams, tmp_path_factory):
    """A prefix of the live-dimension stream's changes of the tables the queries read (their results are
    not empty; orders deleted and re-inserted) with invalid changes, as updates and a stream directory."""
    tables = ("customer", "orders", "lineitem", "nation")
    updates = with_invalid_changes([u for u in tpch_streams["live"] if u.table in tables][:12_000])
    directory = tmp_path_factory.mktemp("one-change")
    write_stream(directory, tpch_catalog(), updates)
    return updates, directory


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "generic"])
@pytest.mark.parametrize("name", sorted(QUERIES))
def test_one_change_batches_give_what_the_general_path_gives(one_change_stream, name, compiled):
    updates, directory = one_change_stream
    catalog = tpch_catalog()
    sql = QUERIES[name]
    informative = 0
    with MaintainedView(sql, catalog, on_invalid="quarantine", compiled=compiled) as fast, \
            MaintainedView(sql, catalog, on_invalid="quarantine", compiled=compiled) as general:
        read = open_stream(directory, catalog).batches(1, tables=fast.validator.tables)
        for number, (batch, update) in enumerate(zip(read, updates, strict=True)):
            expected = Counter(dict(general.apply([update])))  # a list of updates: the general path
            assert Counter(dict(fast.apply(batch))) == expected, f"the result's changes differ at change {number}"
            informative += bool(expected)
        assert [(r.update.seq, r.reason) for r in fast.rejected] == [(r.update.seq, r.reason) for r in general.rejected]
        assert len(fast.rejected) == 3
        assert fast.validator.state() == general.validator.state()
        assert canonical(fast.runner.states) == canonical(general.runner.states)
        assert informative > 10, "too few changes reached the result for the comparison to mean anything"
        rejected = {r.update.seq for r in fast.rejected}
        with DuckDBOracle(catalog) as oracle:
            oracle.load_stream(StreamTables.from_updates(catalog, [u for u in updates if u.seq not in rejected]))
            oracle.as_of(updates[-1].seq)
            assert_matches_reference(fast.result(), oracle.reference(sql), "one-change batches vs DuckDB")
        assert fast.result()


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "generic"])
def test_a_one_change_batch_a_stage_fails_on_leaves_every_state_as_before(one_change_stream, compiled):
    """Q3's top-k (a stage after the compiled program) fails on a change that reaches the result: the
    validator's rows, the stages, the result and the rejected list are as before; sent again without
    the fault, the change gives what a view that never failed gives, and so do the changes after it."""
    updates, directory = one_change_stream
    catalog = tpch_catalog()
    failed = 0
    with MaintainedView(QUERIES["q3"], catalog, on_invalid="quarantine", compiled=compiled) as view, \
            MaintainedView(QUERIES["q3"], catalog, on_invalid="quarantine", compiled=compiled) as reference:
        read = open_stream(directory, catalog).batches(1, tables=view.validator.tables)
        for number, (batch, update) in enumerate(zip(read, updates, strict=True)):
            reached, stop = record_stages(reference)
            expected = Counter(dict(reference.apply([update])))
            stop()
            if expected and failed < 3:
                before = snapshot(view)
                disarm = stage_fault("first" if compiled else "last", call=1)(view, batch, reached)
                with pytest.raises(InjectedFault):
                    view.apply(batch)
                disarm()
                assert snapshot(view) == before, f"a failed one-change batch changed some state (change {number})"
                failed += 1
            assert Counter(dict(view.apply(batch))) == expected, f"the result's changes differ at change {number}"
        assert failed == 3
        assert snapshot(view) == snapshot(reference)
        assert view.result()
