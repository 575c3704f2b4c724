"""Streams with a chosen enclosureness λ: valid, on target, interleaved like the insert stream, seeded."""

from __future__ import annotations

from collections import Counter

import pytest

from catalog.lambda_streams import make_lambda_stream
from catalog.tpch import tpch_catalog
from catalog.tpch_streams import make_stream
from operators.enclosureness import lifespans, stream_enclosureness

CATALOG = tpch_catalog()
TARGETS = (1, 2.5, 32)
TOLERANCE = 0.01  # relative


@pytest.fixture(scope="module")
def lambda_streams(tpch_sf001_tables):
    return {target: make_lambda_stream(tpch_sf001_tables, CATALOG, target) for target in TARGETS}


@pytest.fixture(scope="module")
def small_tables(tpch_sf001_tables):
    return {"orders": tpch_sf001_tables["orders"][:1500], "customer": tpch_sf001_tables["customer"]}


@pytest.mark.parametrize("target", TARGETS)
def test_achieved_enclosureness_is_within_one_percent_of_the_target(lambda_streams, target):
    assert stream_enclosureness(lambda_streams[target], CATALOG) == pytest.approx(target, rel=TOLERANCE)


@pytest.mark.parametrize("target", TARGETS)
def test_every_tuple_is_inserted_once_and_only_present_tuples_are_deleted(tpch_sf001_tables, lambda_streams, target):
    updates = lambda_streams[target]
    lifespans(updates, CATALOG)  # raises on a duplicate insert or a delete of an absent row
    assert [u.seq for u in updates] == list(range(1, len(updates) + 1))
    assert Counter((u.table, u.row) for u in updates if u.op == 1) == Counter(
        (name, row) for name, rows in tpch_sf001_tables.items() for row in rows
    )


@pytest.mark.parametrize("target", TARGETS)
def test_inserts_come_in_the_insert_stream_order_so_tables_stay_interleaved(tpch_sf001_tables, lambda_streams, target):
    inserted = [(u.table, u.row) for u in lambda_streams[target] if u.op == 1]
    assert inserted == [(u.table, u.row) for u in make_stream(tpch_sf001_tables, CATALOG, "insert")]


def test_target_one_is_a_fifo_window(lambda_streams):
    updates = lambda_streams[1]
    inserted = [(u.table, u.row) for u in updates if u.op == 1]
    deleted = [(u.table, u.row) for u in updates if u.op == -1]
    assert deleted and deleted == inserted[: len(deleted)]


def test_most_lineitems_meet_their_order_even_at_high_enclosureness(lambda_streams):
    present_orders: set[int] = set()
    met = lineitems = 0
    for update in lambda_streams[32]:
        if update.table == "orders":
            (present_orders.add if update.op == 1 else present_orders.discard)(update.row[0])
        elif update.table == "lineitem" and update.op == 1:
            lineitems += 1
            met += update.row[0] in present_orders
    assert met / lineitems > 0.3


def test_the_same_seed_gives_the_same_stream_and_another_seed_another(small_tables):
    first = make_lambda_stream(small_tables, CATALOG, 4, seed=1)
    assert make_lambda_stream(small_tables, CATALOG, 4, seed=1) == first
    assert make_lambda_stream(small_tables, CATALOG, 4, seed=2) != first


def test_an_explicit_window_and_first_seq_are_kept(small_tables):
    updates = make_lambda_stream(small_tables, CATALOG, 3, window=20, first_seq=100)
    assert updates[0].seq == 100
    assert stream_enclosureness(updates, CATALOG) == pytest.approx(3, rel=TOLERANCE)
    assert min(lifetimes_in_inserts(updates)) == 20


def lifetimes_in_inserts(updates):
    """For each deleted tuple, how many inserts (its own included) came between its insert and its delete."""
    inserts_so_far, inserted_at, lifetimes = 0, {}, []
    for update in updates:
        if update.op == 1:
            inserted_at[update.table, update.row] = inserts_so_far
            inserts_so_far += 1
        else:
            lifetimes.append(inserts_so_far - inserted_at[update.table, update.row])
    return lifetimes


def test_enclosureness_below_one_is_refused(small_tables):
    with pytest.raises(ValueError, match="target λ must be at least 1"):
        make_lambda_stream(small_tables, CATALOG, 0.5)


def test_a_target_out_of_reach_for_the_window_is_refused(small_tables):
    with pytest.raises(ValueError, match=r"target λ 50 is out of reach with window 1000 on 3000 tuples"):
        make_lambda_stream(small_tables, CATALOG, 50, window=1000)
