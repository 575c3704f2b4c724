"""The compiled local runner gives exactly the generic stages' output (issue 13, item 1).

The generic stage classes are the specification; the compiled program (operators/lowering/codegen.py, run by operators/runtime/compiled)
must emit the same result changes batch after batch, on every TPC-H and order-book query, over
streams with inserts, deletes, dangling foreign keys and tuples turning (non-)live. A comparison
only proves something when the changes are not empty: each case requires enough non-empty batches.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from catalog.orderbook import orderbook_catalog
from catalog.tpch import tpch_catalog
from operators.runtime.compiled.runner import BrokenViewError
from operators.runtime.stream import UpdateBatch, batches
from planner.view import MaintainedView
from planner.workloads.orderbook_streams import make_orderbook_stream, make_r_stream
from tests.maintenance.checking import count_equal_changes

EXAMPLES = Path(__file__).parents[2] / "examples"
TPCH = sorted((EXAMPLES / "tpch").glob("q*.sql")) + [EXAMPLES / "tpch" / "variants" / "q17_dense.sql"]
ORDERBOOK = ["vwap", "ex21", "sq1", "sq2", "psp", "mst", "nq1", "nq2", "bsp", "band"]


def compare_runners(sql: str, catalog, updates, batch_size: int, first: int = 0, **options) -> int:
    """Feed both runners the same batches (the ``first`` updates as one batch, then ``batch_size``
    at a time); return how many batches changed the result."""
    updates = tuple(updates)
    chunks = ([UpdateBatch(updates[:first], checked=True)] if first else []) + list(batches(updates[first:], batch_size))
    with MaintainedView(sql, catalog, compiled=False, **options) as generic, \
            MaintainedView(sql, catalog, compiled=True, **options) as compiled:
        return count_equal_changes(generic, compiled, ((batch, batch) for batch in chunks))


@pytest.fixture(scope="module")
def tpch_prefix(tpch_streams):
    """The first 60 000 updates of the live-dimension stream (its dimension tables, then orders and
    lineitems joining them) and the random stream's first 12 000."""
    return {kind: UpdateBatch(tuple(tpch_streams[kind])[:size], checked=True)
            for kind, size in (("live", 60_000), ("random", 12_000))}


#: query → the stream (``tpch_streams`` kind, whole), its number of batches, and the fraction of them that
#: must change the result, where the live prefix below changes it in fewer than half (SF 0.01, measured
#: with the compiled runner). Q11 and Q16 read only tables the live stream keeps, so they change on the
#: insert and random streams. Q2, Q8, Q18, Q19 and Q20 are selective enough that no stream of the four
#: (window, insert, random, live; 12 batches each) changes them in half the batches: the best one is kept
#: with its measured fraction as a floor. Q17 as specified is empty at SF 0.01 on every stream (0 of 12):
#: q17_dense is its informative variant.
SPARSE = {
    "q02": ("insert", 12, 2 / 12), "q08": ("live", 12, 3 / 12), "q11": ("insert", 12, 0.5),
    "q16": ("random", 12, 0.5), "q17": ("live", 4, 0.0), "q18": ("live", 12, 4 / 12),
    "q19": ("live", 12, 2 / 12), "q20": ("live", 12, 3 / 12), "q21": ("live", 12, 0.5),
}


@pytest.mark.parametrize("path", TPCH, ids=lambda p: p.stem)
def test_compiled_and_generic_runners_agree_on_every_tpch_query_in_batches_that_change_it(tpch_streams, tpch_prefix, path):
    """The live stream's dimension tables as one batch, then 15 batches of its orders and lineitems;
    or the query's stream in ``SPARSE``. At least half the batches must change the result."""
    if path.stem in SPARSE:
        kind, count, floor = SPARSE[path.stem]
        updates = tpch_streams[kind]
        batch_size, first = len(updates) // count + 1, 0
    else:
        updates, batch_size, floor = tpch_prefix["live"], 4_000, 0.5
        first = next(i for i, update in enumerate(updates) if update.table in ("orders", "lineitem"))
    compared = 1 + math.ceil((len(updates) - first) / batch_size) if first else math.ceil(len(updates) / batch_size)
    informative = compare_runners(path.read_text(), tpch_catalog(), updates, batch_size=batch_size, first=first)
    assert informative >= floor * compared, f"{informative} of {compared} batches changed the result"


@pytest.mark.parametrize("path", TPCH, ids=lambda p: p.stem)
def test_compiled_and_generic_runners_agree_on_deletes_and_dangling_keys(tpch_prefix, path):
    """The random stream's start: lineitems before their orders, orders and customers deleted (most
    joins stay empty that early: compared for the deletes and dangling keys, not for emptiness)."""
    compare_runners(path.read_text(), tpch_catalog(), tpch_prefix["random"], batch_size=4_000)


@pytest.mark.parametrize("name", ORDERBOOK)
def test_compiled_and_generic_runners_agree_on_every_orderbook_query(name):
    sql = (EXAMPLES / "orderbook" / f"{name}.sql").read_text()
    stream = make_r_stream(400, seed=2) if name == "ex21" else make_orderbook_stream(200, 150, seed=5)
    # Example 2.1's r stream changes ex21 in 4 of its 10 batches; no size (400 to 2 000 events, batches
    # of 20 to 200, seeds 2 and 3) reached half: its measured fraction is kept as the floor
    floor = 4 / 10 if name == "ex21" else 0.5
    compared = math.ceil(len(stream) / 40)
    informative = compare_runners(sql, orderbook_catalog(), stream, batch_size=40)
    assert informative >= floor * compared, f"{informative} of {compared} batches changed the result"


@pytest.mark.parametrize("number", [3, 5, 10, 13])
def test_one_change_per_batch_gives_the_same_changes(tpch_prefix, number):
    # row at a time inside a batch (compiled) versus key at a time (generic), down to batches of one
    sql = (EXAMPLES / "tpch" / f"q{number:02d}.sql").read_text()
    live = tuple(tpch_prefix["live"])[:13_000]  # the dimension tables in one batch, then 1 000 batches of one
    assert compare_runners(sql, tpch_catalog(), live, batch_size=1, first=12_000)


def test_theorem11_binary_joins_compile_too(tpch_prefix):
    sql = (EXAMPLES / "tpch" / "q05.sql").read_text()
    assert compare_runners(sql, tpch_catalog(), tpch_prefix["live"], 4_000, join_tree="theorem11") >= 2


def test_a_change_that_does_not_fit_a_stage_breaks_the_view_for_good():
    """Validated input never does this; if a change half-applied cannot be undone, the view refuses
    to go on rather than answer from a state it cannot vouch for."""
    view = MaintainedView("select o_orderkey, c_name from orders, customer where o_custkey = c_custkey", tpch_catalog())
    with pytest.raises(RuntimeError, match="does not fit"):
        view.runner.apply({"orders": [((1, 7, "O", 1, None, "1-URGENT", "clerk", 0, "c"), -1)]})  # never inserted
    with pytest.raises(BrokenViewError, match="create the view again"):
        view.runner.apply({"customer": []})


def test_explain_verbose_prints_the_generated_program():
    from planner.compiler import compile_query
    from planner.explain import explain_text

    text = explain_text(compile_query((EXAMPLES / "tpch" / "q03.sql").read_text(), tpch_catalog()), verbose=True)
    assert "def _table_lineitem(changes" in text


def test_a_lookup_keys_its_tuples_by_the_rest_of_their_primary_key(tpch_prefix):
    """Q3's lineitems by l_orderkey are kept by l_linenumber (``ForeignKeyLookupStage.tuples_key``: no DECIMAL
    hashed per change); a delete whose key is stored but whose row differs does not fit the stage."""
    sql = (EXAMPLES / "tpch" / "q03.sql").read_text()
    with MaintainedView(sql, tpch_catalog()) as view:
        view.apply(tpch_prefix["live"])
        [unit] = [u for u in view.runner.program.units if u.stage.name == "live lineitem by l_orderkey"]
        groups = view.runner.states[unit.id]
        tuples = [(orderkey, number, row) for orderkey, (rows, _) in groups.items() for number, row in rows.items()]
        assert len(tuples) > 100 and all(row[0] == orderkey and row[1] == number for orderkey, number, row in tuples)
        orderkey, number, row = tuples[0]
        lineitem = next(u.row for u in tpch_prefix["live"] if u.table == "lineitem" and u.row[:1] + u.row[3:4] == (orderkey, number))
        wrong = lineitem[:5] + (lineitem[5] + 1,) + lineitem[6:]
        with pytest.raises(RuntimeError, match="does not fit"):
            view.runner.apply({"lineitem": [(wrong, -1)]})
