"""λ streams: valid, on target, one length, dimensions live, only chosen orders re-inserted, seeded."""

from __future__ import annotations

from collections import Counter

import pytest

from catalog.tpch import tpch_catalog
from planner.workloads.enclosureness import lifespans, stream_enclosureness
from planner.workloads.lambda_streams import DEFAULT_GAP, FACT_TABLES, make_lambda_stream
from planner.workloads.tpch_streams import make_stream

CATALOG = tpch_catalog()
TABLES = ("region", "nation", "supplier", "customer", "orders", "lineitem")  # what Q5 and Q13 read
TARGETS = (1, 4, 16)
TOLERANCE = 0.01  # relative
NO_FLICKER_LAMBDA = (1.0, 1.2)  # dimensions hold every fact lifespan, so even FIFO facts give λ a bit above 1


def every_32nd_order(row: tuple) -> bool:
    return row[0] % 32 == 0


@pytest.fixture(scope="module")
def q5_tables(tpch_sf001_tables):
    return {name: tpch_sf001_tables[name] for name in TABLES}


@pytest.fixture(scope="module")
def lambda_streams(q5_tables):
    return {target: make_lambda_stream(q5_tables, CATALOG, target, flickering=every_32nd_order) for target in TARGETS}


@pytest.fixture(scope="module")
def small_tables(tpch_sf001_tables):
    orders = tpch_sf001_tables["orders"][:600]
    keys = {row[0] for row in orders}
    lineitems = [row for row in tpch_sf001_tables["lineitem"] if row[0] in keys]
    return {"nation": tpch_sf001_tables["nation"], "orders": orders, "lineitem": lineitems}


@pytest.mark.parametrize("target", TARGETS[1:])
def test_achieved_enclosureness_is_within_one_percent_of_the_target(lambda_streams, target):
    assert stream_enclosureness(lambda_streams[target], CATALOG) == pytest.approx(target, rel=TOLERANCE)


def test_target_one_is_the_stream_without_flicker(lambda_streams):
    low, high = NO_FLICKER_LAMBDA
    assert low <= stream_enclosureness(lambda_streams[1], CATALOG) < high
    assert max(Counter((u.table, u.row) for u in lambda_streams[1] if u.op == 1).values()) == 1


def test_every_stream_has_one_length_and_keeps_set_semantics(lambda_streams):
    assert len({len(updates) for updates in lambda_streams.values()}) == 1
    for updates in lambda_streams.values():
        lifespans(updates, CATALOG)  # raises on a duplicate insert or a delete of an absent row
        assert [u.seq for u in updates] == list(range(1, len(updates) + 1))


@pytest.mark.parametrize("target", TARGETS)
def test_dimension_tuples_come_first_and_are_never_deleted(q5_tables, lambda_streams, target):
    updates = lambda_streams[target]
    dimensions = sum(len(rows) for name, rows in q5_tables.items() if name not in FACT_TABLES)
    assert all(u.table not in FACT_TABLES and u.op == 1 for u in updates[:dimensions])
    assert all(u.table in FACT_TABLES for u in updates[dimensions:])


@pytest.mark.parametrize("target", TARGETS)
def test_only_chosen_orders_are_inserted_again_and_lineitems_follow_the_insert_order(q5_tables, lambda_streams, target):
    inserts = Counter((u.table, u.row) for u in lambda_streams[target] if u.op == 1)
    again = {(table, row) for (table, row), count in inserts.items() if count > 1}
    assert all(table == "orders" and every_32nd_order(row) for table, row in again)
    facts = {name: q5_tables[name] for name in FACT_TABLES}
    timeline = [(u.table, u.row) for u in make_stream(facts, CATALOG, "insert") if u.table == "lineitem"]
    inserted = [u.row for u in lambda_streams[target] if u.op == 1 and u.table == "lineitem"]
    assert inserted == [row for _, row in timeline[: len(inserted)]]


def test_higher_lambda_re_inserts_orders_under_their_present_lineitems(lambda_streams):
    """The flicker AJU's Lemma 7 charges: an order deleted and inserted back while its lineitems stay."""

    def order_updates_with_lineitems_present(updates) -> int:
        present: Counter = Counter()
        under = 0
        for update in updates:
            if update.table == "lineitem":
                present[update.row[0]] += update.op
            elif update.table == "orders":
                under += present[update.row[0]] > 0
        return under

    counts = [order_updates_with_lineitems_present(lambda_streams[target]) for target in TARGETS]
    assert counts == sorted(counts) and counts[-1] > 2 * counts[0]


def test_a_re_insert_comes_at_least_a_gap_after_its_delete(lambda_streams):
    deleted_at = {}
    for update in lambda_streams[16]:
        if update.table == "orders" and update.op == -1:
            deleted_at[update.row] = update.seq
        elif update.table == "orders" and update.row in deleted_at:
            assert update.seq - deleted_at.pop(update.row) > DEFAULT_GAP


def test_the_same_seed_gives_the_same_stream_and_another_seed_another(small_tables):
    first = make_lambda_stream(small_tables, CATALOG, 3, seed=1, window=300, gap=5)
    assert make_lambda_stream(small_tables, CATALOG, 3, seed=1, window=300, gap=5) == first
    assert make_lambda_stream(small_tables, CATALOG, 3, seed=2, window=300, gap=5) != first


def test_an_explicit_window_length_and_first_seq_are_kept(small_tables):
    updates = make_lambda_stream(small_tables, CATALOG, 3, window=300, gap=5, length=2000, first_seq=100)
    assert updates[0].seq == 100 and len(updates) == 2000
    # 2000 updates of a few hundred orders: each step of the knob moves λ by a percent or more
    assert stream_enclosureness(updates, CATALOG) == pytest.approx(3, rel=5 * TOLERANCE)


def test_enclosureness_below_one_is_refused(small_tables):
    with pytest.raises(ValueError, match="target λ must be at least 1"):
        make_lambda_stream(small_tables, CATALOG, 0.5)


def test_a_target_out_of_reach_is_refused(small_tables):
    with pytest.raises(ValueError, match=r"target λ 50 is out of reach: at most .* with window 30, gap 5"):
        make_lambda_stream(small_tables, CATALOG, 50, window=30, gap=5)


def test_fact_tables_are_required(small_tables):
    with pytest.raises(ValueError, match="needs the fact tables orders, lineitem; missing: lineitem"):
        make_lambda_stream({"orders": small_tables["orders"]}, CATALOG, 2)
