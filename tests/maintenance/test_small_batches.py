"""Small batches (issue 13): the stream reader's batches of 1, 2 and 50 changes take the compiled
runner's checked path (a batch of one change: one call of the table's generated checked function,
after the reader's ``batches(1)`` made it without a numpy slice; larger ones: ``store_changes`` then
the table functions) and must give what batches of 10 000 give and what recomputation gives: the
result at points along the stream and at its end, the validator's and the stages' state, the
rejected changes under ``quarantine``; under ``error``, the error at the batch holding the first
invalid change, with every state as it was before that batch."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from catalog.tpch import tpch_catalog
from operators.runtime.stream import Update, open_stream, write_stream
from operators.runtime.validate import InvalidChangeError
from planner.view import MaintainedView
from planner.workloads.oracle import DuckDBOracle, StreamTables, assert_matches_reference
from tests.maintenance.test_atomic_batches import canonical, snapshot
from tests.maintenance.test_one_change_batches import with_invalid_changes

EXAMPLES = Path(__file__).parents[2] / "examples"
QUERIES = {
    "q3": (EXAMPLES / "tpch" / "q03.sql").read_text(),  # lookups, a ring aggregate, top-k
    "q10": (EXAMPLES / "tpch" / "q10.sql").read_text(),  # four tables, nation among them
    "grouped": "select o_custkey, count(*) as n, sum(o_totalprice) as total, min(o_orderdate) as first "
               "from orders group by o_custkey",  # a MIN (a generic stage) after the checks
}
TABLES = ("customer", "orders", "lineitem", "nation")
CHECKPOINTS = (2_000, 5_000)  # changes after which the result is compared with DuckDB (a batch boundary at 1, 2, 50)


@pytest.fixture(scope="module")
def small_batch_streams(tpch_streams, tmp_path_factory):
    """The live-dimension stream's first 8 000 changes of the tables the queries read, once with three
    invalid changes in the middle (``with_invalid_changes``) and once valid; as updates and directories."""
    valid = [u for u in tpch_streams["live"] if u.table in TABLES][:8_000]
    streams = {}
    for name, updates in (("invalid", with_invalid_changes(valid)),
                          ("valid", [Update(seq, u.table, u.op, u.row) for seq, u in enumerate(valid, start=1)])):
        directory = tmp_path_factory.mktemp(name)
        write_stream(directory, tpch_catalog(), updates)
        streams[name] = (updates, directory)
    return streams


def reference(catalog, sql: str, updates: list[Update], rejected: set[int], count: int):
    """The query over the tables after the first ``count`` updates, without the rejected ones (DuckDB)."""
    with DuckDBOracle(catalog) as oracle:
        oracle.load_stream(StreamTables.from_updates(catalog, [u for u in updates[:count] if u.seq not in rejected]))
        oracle.as_of(updates[count - 1].seq)
        return oracle.reference(sql)


@pytest.mark.parametrize("size", [1, 2, 50])
@pytest.mark.parametrize("name", sorted(QUERIES))
def test_small_batches_give_what_large_batches_and_recomputation_give(small_batch_streams, name, size):
    updates, directory = small_batch_streams["invalid"]
    catalog = tpch_catalog()
    sql = QUERIES[name]
    with MaintainedView(sql, catalog, on_invalid="quarantine") as small, \
            MaintainedView(sql, catalog, on_invalid="quarantine") as large:
        for batch in open_stream(directory, catalog).batches(10_000, tables=large.validator.tables):
            large.apply(batch)
        applied, informative, compared = 0, 0, []
        for batch in open_stream(directory, catalog).batches(size, tables=small.validator.tables):
            informative += bool(small.apply(batch))
            applied += len(batch)
            if applied in CHECKPOINTS:
                rejected = {r.update.seq for r in small.rejected}
                assert_matches_reference(small.result(), reference(catalog, sql, updates, rejected, applied),
                                         f"batches of {size} after {applied} changes vs DuckDB")
                compared.append(bool(small.result()))
        assert applied == len(updates) and len(compared) == len(CHECKPOINTS) and any(compared)
        assert informative > 5, "too few batches changed the result for the comparison to mean anything"
        assert [(r.update.seq, r.reason) for r in small.rejected] == [(r.update.seq, r.reason) for r in large.rejected]
        assert len(small.rejected) == 3
        assert small.validator.state() == large.validator.state()
        assert canonical(small.runner.states) == canonical(large.runner.states)
        assert Counter(small.current) == Counter(large.current)
        assert small.result() == large.result() and small.result()


@pytest.mark.parametrize("size", [1, 2, 50])
def test_an_invalid_change_in_a_small_batch_stops_the_run_there_with_every_state_as_before(small_batch_streams, size):
    """Under 'error' the batch holding the first invalid change (the duplicate orders key
    ``with_invalid_changes`` puts in the middle) raises naming the table and ``_seq``, and leaves every
    state as it was; the result is then the query over the changes of the batches before it."""
    updates, directory = small_batch_streams["invalid"]
    catalog = tpch_catalog()
    bad_seq = (len(updates) - 3) // 2 + 1  # the first of the three invalid changes
    with MaintainedView(QUERIES["q3"], catalog, on_invalid="error") as view:
        applied = 0
        for batch in open_stream(directory, catalog).batches(size, tables=view.validator.tables):
            if applied + len(batch) >= bad_seq:
                before = snapshot(view)
                with pytest.raises(InvalidChangeError, match=f"table orders at _seq {bad_seq} .*duplicate primary key"):
                    view.apply(batch)
                assert snapshot(view) == before
                break
            view.apply(batch)
            applied += len(batch)
        assert applied == (bad_seq - 1) // size * size
        assert_matches_reference(view.result(), reference(catalog, QUERIES["q3"], updates, set(), applied),
                                 f"batches of {size} before the invalid change vs DuckDB")
        assert view.result()


@pytest.mark.parametrize("size", [1, 2])
def test_the_compiled_small_batch_path_gives_what_the_generic_runner_gives_batch_by_batch(small_batch_streams, size):
    """Each batch's result changes, on a valid stream: the compiled runner's checked path against the
    generic stage classes (the specification), batch by batch."""
    _, directory = small_batch_streams["valid"]
    catalog = tpch_catalog()
    changed = 0
    with MaintainedView(QUERIES["q3"], catalog) as compiled, \
            MaintainedView(QUERIES["q3"], catalog, compiled=False) as generic:
        batches = zip(open_stream(directory, catalog).batches(size, tables=compiled.validator.tables),
                      open_stream(directory, catalog).batches(size, tables=generic.validator.tables), strict=True)
        for number, (batch, same) in enumerate(batches):
            expected = Counter(dict(generic.apply(same)))
            assert Counter(dict(compiled.apply(batch))) == expected, f"batch {number}"
            changed += bool(expected)
        assert changed > 10
        assert compiled.validator.state() == generic.validator.state()
        assert compiled.result() == generic.result() and compiled.result()
