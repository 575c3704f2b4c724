"""TPC-H change streams: each kind keeps set semantics and the shape it promises."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from catalog.schema import CatalogError
from catalog.tpch import tpch_catalog
from planner.workloads.tpch_streams import TABLE_ORDER, make_stream

CATALOG = tpch_catalog()
WINDOW = 2_000


def primary_key(table: str, row: tuple) -> tuple:
    columns = CATALOG.table(table).column_names
    return tuple(row[columns.index(column)] for column in CATALOG.table(table).primary_key)


@pytest.fixture(scope="module")
def insert_stream(tpch_sf001_tables):
    return make_stream(tpch_sf001_tables, CATALOG, "insert")


@pytest.fixture(scope="module")
def window_stream(tpch_sf001_tables):
    return make_stream(tpch_sf001_tables, CATALOG, "window", WINDOW)


@pytest.fixture(scope="module")
def random_stream(tpch_sf001_tables):
    return make_stream(tpch_sf001_tables, CATALOG, "random", seed=7)


def test_insert_stream_inserts_every_tuple_once_numbered_from_one(tpch_sf001_tables, insert_stream):
    assert all(u.op == 1 for u in insert_stream)
    assert [u.seq for u in insert_stream] == list(range(1, len(insert_stream) + 1))
    assert Counter((u.table, u.row) for u in insert_stream) == Counter(
        (name, row) for name, rows in tpch_sf001_tables.items() for row in rows
    )


def test_insert_stream_inserts_each_table_in_key_order(insert_stream):
    for table in TABLE_ORDER:
        keys = [primary_key(table, u.row) for u in insert_stream if u.table == table]
        assert keys == sorted(keys), table


def test_insert_stream_spreads_every_table_evenly_over_the_stream(insert_stream):
    total = len(insert_stream)
    for table in ("supplier", "customer", "orders", "lineitem"):
        positions = [i / total for i, u in enumerate(insert_stream) if u.table == table]
        quarter = sum(1 for p in positions if p < 0.25) / len(positions)
        assert 0.24 < quarter < 0.26, table


def test_insert_stream_keeps_an_order_close_to_its_lineitems(insert_stream):
    total = len(insert_stream)
    order_position = {u.row[0]: i for i, u in enumerate(insert_stream) if u.table == "orders"}
    distances = [abs(i - order_position[u.row[0]]) / total for i, u in enumerate(insert_stream) if u.table == "lineitem"]
    assert max(distances) < 0.02


def test_ties_on_the_timeline_go_to_referenced_tables_first(tpch_sf001_tables):
    one_each = {name: rows[:1] for name, rows in tpch_sf001_tables.items()}
    stream = make_stream(dict(reversed(one_each.items())), CATALOG, "insert")
    assert [u.table for u in stream] == list(TABLE_ORDER)


def test_window_stream_inserts_in_insert_stream_order(insert_stream, window_stream):
    inserted = [(u.table, u.row) for u in window_stream if u.op == 1]
    assert inserted == [(u.table, u.row) for u in insert_stream]


def test_window_stream_deletes_each_tuple_once_in_insertion_order(window_stream):
    inserted = [(u.table, u.row) for u in window_stream if u.op == 1]
    deleted = [(u.table, u.row) for u in window_stream if u.op == -1]
    assert deleted == inserted[: len(deleted)]  # FIFO across all tables: enclosureness 1
    assert 0 < len(deleted) < len(inserted)


def test_window_stream_keeps_at_most_window_lineitems(window_stream):
    present: set[tuple[str, tuple]] = set()
    lineitems = 0
    for update in window_stream:
        change = (update.table, update.row)
        if update.op == 1:
            assert change not in present
            present.add(change)
            lineitems += update.table == "lineitem"
        else:
            assert change in present
            present.remove(change)
            lineitems -= update.table == "lineitem"
        assert lineitems <= WINDOW
    assert lineitems == WINDOW


def test_window_stream_deletes_a_tuple_right_before_the_window_th_lineitem_after_it(window_stream):
    lineitems_before = {}
    lineitems = 0
    for position, update in enumerate(window_stream):
        change = (update.table, update.row)
        if update.op == 1:
            lineitems += update.table == "lineitem"
            lineitems_before[change] = lineitems
        else:
            assert lineitems - lineitems_before[change] == WINDOW - 1
            following = window_stream[position + 1]
            assert following.op == -1 or following.table == "lineitem"


def test_random_stream_keeps_set_semantics(random_stream):
    present: dict[tuple[str, tuple], tuple] = {}
    for update in random_stream:
        key = (update.table, primary_key(update.table, update.row))
        if update.op == 1:
            assert key not in present, f"insert of present key {key} at _seq {update.seq}"
            present[key] = update.row
        else:
            assert present.pop(key, None) == update.row, f"delete of absent row at _seq {update.seq}"


def test_random_stream_mixes_deletes_and_reinserts_into_every_tuple_inserted(tpch_sf001_tables, random_stream):
    inserts = Counter((u.table, u.row) for u in random_stream if u.op == 1)
    deletes = sum(1 for u in random_stream if u.op == -1)
    assert set(inserts) == {(name, row) for name, rows in tpch_sf001_tables.items() for row in rows}
    assert 0.25 < deletes / sum(inserts.values()) < 0.4
    assert sum(1 for count in inserts.values() if count > 1) > 1_000


def test_random_stream_depends_only_on_seed_and_data(tpch_sf001_tables, random_stream):
    shuffled = {name: random.Random(1).sample(rows, len(rows)) for name, rows in reversed(tpch_sf001_tables.items())}
    assert make_stream(shuffled, CATALOG, "random", seed=7).updates == random_stream.updates
    assert make_stream(tpch_sf001_tables, CATALOG, "random", seed=8) != random_stream


def test_seq_can_start_anywhere_and_leave_gaps(tpch_sf001_tables):
    tables = {"region": tpch_sf001_tables["region"], "nation": tpch_sf001_tables["nation"]}
    stream = make_stream(tables, CATALOG, "insert", first_seq=100, seq_step=3)
    assert [u.seq for u in stream] == list(range(100, 100 + 3 * 30, 3))


@pytest.mark.parametrize(
    ("kind", "window", "message"),
    [
        ("window", None, "stream kind 'window' needs window size"),
        ("insert", 10, "stream kind 'insert' takes no window size"),
        ("window", 0, "window must be at least 1"),
        ("sliding", None, r"unknown stream kind 'sliding' \(kinds: insert, window, random\)"),
    ],
)
def test_bad_stream_parameters_are_refused(tpch_sf001_tables, kind, window, message):
    with pytest.raises(ValueError, match=message):
        make_stream(tpch_sf001_tables, CATALOG, kind, window)


def test_a_window_stream_needs_lineitem(tpch_sf001_tables):
    with pytest.raises(ValueError, match="counts lineitem tuples, but no lineitem table"):
        make_stream({"region": tpch_sf001_tables["region"]}, CATALOG, "window", 5)


def test_a_repeated_primary_key_in_the_data_is_refused(tpch_sf001_tables):
    region = tpch_sf001_tables["region"]
    with pytest.raises(CatalogError, match=r"table region: primary key 4 occurs twice"):
        make_stream({"region": [*region, region[-1]]}, CATALOG, "insert")
