"""Order-book and Example 2.1 streams keep set semantics, and the RPAI queries run over them."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from catalog.orderbook import orderbook_catalog
from operators.runtime.stream import DELETE, INSERT, Update, read_stream, write_stream
from planner.sql.statements import parse_sql
from planner.workloads.oracle import DuckDBOracle
from planner.workloads.orderbook_streams import make_orderbook_stream, make_r_stream

CATALOG = orderbook_catalog()
QUERY_DIR = Path(__file__).resolve().parents[2] / "examples" / "orderbook"
QUERY_FILES = sorted(path for path in QUERY_DIR.glob("*.sql") if path.name != "schema.sql")
GROUPED_QUERIES = {"mst.sql", "bsp.sql"}
JOIN_QUERIES = {"band.sql"}  # IEDyn's order-book inequality joins return pairs, not one value


def key_of(update: Update) -> tuple:
    table = CATALOG.table(update.table)
    return tuple(update.row[table.column_names.index(column)] for column in table.primary_key)


def replay(updates: list[Update]) -> dict[str, dict[tuple, tuple]]:
    """The tables after ``updates``, failing on any insert of a present key or delete of an absent row."""
    tables: dict[str, dict[tuple, tuple]] = {name: {} for name in CATALOG.tables}
    for update in updates:
        rows, key = tables[update.table], key_of(update)
        if update.op == INSERT:
            assert key not in rows, f"_seq {update.seq}: {update.table} already holds key {key}"
            rows[key] = update.row
        else:
            assert rows.get(key) == update.row, f"_seq {update.seq}: {update.table} does not hold {update.row}"
            del rows[key]
    return tables


def oracle_over(updates: list[Update]) -> DuckDBOracle:
    oracle = DuckDBOracle(CATALOG)
    oracle.load({name: list(rows.values()) for name, rows in replay(updates).items()})
    return oracle


@pytest.fixture(scope="module")
def book() -> list[Update]:
    return make_orderbook_stream(300, 250, seed=5)


@pytest.fixture(scope="module")
def r_stream() -> list[Update]:
    return make_r_stream(300, seed=5)


@pytest.fixture(scope="module")
def oracle(book, r_stream) -> Iterator[DuckDBOracle]:
    with oracle_over([*book, *r_stream]) as shared:
        yield shared


def test_the_same_seed_gives_the_same_stream_and_another_seed_another():
    assert make_orderbook_stream(200, 100, seed=3) == make_orderbook_stream(200, 100, seed=3)
    assert make_orderbook_stream(200, 100, seed=3) != make_orderbook_stream(200, 100, seed=4)
    assert make_r_stream(200, seed=3) == make_r_stream(200, seed=3)
    assert make_r_stream(200, seed=3) != make_r_stream(200, seed=4)


def test_order_book_has_exactly_the_requested_updates_per_side_numbered_from_one(book):
    assert Counter(u.table for u in book) == {"bids": 300, "asks": 250}
    assert [u.seq for u in book] == list(range(1, len(book) + 1))
    assert make_orderbook_stream(40, 0)[0].seq == 1
    assert {u.table for u in make_orderbook_stream(40, 0)} == {"bids"}


@pytest.mark.parametrize("seed", range(4))
def test_order_book_never_inserts_a_present_id_nor_deletes_an_absent_row(seed):
    replay(make_orderbook_stream(400, 400, seed=seed, delete_fraction=0.45))


def test_order_book_mixes_inserts_deletes_and_partial_executions(book):
    ops = Counter(u.op for u in book)
    assert ops[INSERT] > ops[DELETE] > 0.1 * len(book)
    partial_fills = [
        (old, new)
        for old, new in zip(book, book[1:], strict=False)
        if old.op == DELETE and new.op == INSERT and key_of(old) == key_of(new) and old.table == new.table
    ]
    assert partial_fills
    for old, new in partial_fills:
        (t_old, _, broker_old, volume_old, price_old), (t_new, _, broker_new, volume_new, price_new) = old.row, new.row
        assert (broker_new, price_new) == (broker_old, price_old)
        assert 1 <= volume_new < volume_old
        assert t_new > t_old


def test_without_deletes_the_order_book_only_inserts():
    assert {u.op for u in make_orderbook_stream(200, 200, delete_fraction=0.0)} == {INSERT}


def test_orders_follow_dbtoaster_brokers_and_sit_on_their_side_of_the_mid_price():
    updates = make_orderbook_stream(500, 500, seed=1, brokers=7, price_levels=20, mid_price=1_000)
    for update in updates:
        t, order_id, broker_id, volume, price = update.row
        assert broker_id == order_id % 7
        assert volume >= 1
        assert (980 <= price < 1_000) if update.table == "bids" else (1_000 <= price < 1_020)
    ids_per_side = {side: {u.row[1] for u in updates if u.table == side} for side in ("bids", "asks")}
    assert not ids_per_side["bids"] & ids_per_side["asks"]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"n_bids": -1}, "n_bids must be at least 0"),
        ({"n_bids": 10, "delete_fraction": 1.5}, "delete_fraction must be between 0 and 1"),
        ({"n_bids": 10, "brokers": 0}, "brokers must be at least 1"),
        ({"n_bids": 10, "price_levels": 500, "mid_price": 100}, "mid_price"),
    ],
)
def test_order_book_rejects_arguments_naming_the_bad_one(arguments, message):
    with pytest.raises(ValueError, match=message):
        make_orderbook_stream(**arguments)


@pytest.mark.parametrize("seed", range(4))
def test_r_stream_has_set_semantics_and_mixes_inserts_and_deletes(seed):
    updates = make_r_stream(400, seed=seed)
    replay(updates)
    ops = Counter(u.op for u in updates)
    assert ops[INSERT] > ops[DELETE] > 40


def test_r_stream_makes_example_2_1_hold_at_some_states(r_stream):
    balanced_at = []
    group_sums: Counter = Counter()
    for position, update in enumerate(r_stream):
        _, a, b = update.row
        group_sums[a] += update.op * b
        total = sum(group_sums.values())
        if total and any(2 * s == total for s in group_sums.values()):
            balanced_at.append(position)
    assert len(balanced_at) > 10
    sql = (QUERY_DIR / "ex21.sql").read_text()
    assert oracle_over(r_stream[: balanced_at[-1] + 1]).query(sql) != [(None,)]


def test_streams_round_trip_through_the_stream_format(tmp_path, book):
    updates = [*book, *make_r_stream(50, seed=1, first_seq=len(book) + 1)]
    assert list(read_stream(write_stream(tmp_path, CATALOG, updates), CATALOG)) == updates


def test_every_paper_query_has_a_file():
    rpai = {"ex21", "vwap", "mst", "psp", "sq1", "sq2", "nq1", "nq2"}
    assert {path.stem for path in QUERY_FILES} == rpai | {"bsp", "band"}


@pytest.mark.parametrize("path", QUERY_FILES, ids=lambda path: path.stem)
def test_query_parses_and_duckdb_returns_a_result(path, oracle):
    sql = path.read_text()
    parse_sql(sql, CATALOG)
    rows = oracle.query(sql)
    if path.name in GROUPED_QUERIES | JOIN_QUERIES:
        assert len(rows) > 1
    else:
        assert len(rows) == 1 and len(rows[0]) == 1


def test_vwap_file_computes_the_papers_vwap(book):
    bids = list(replay(book)["bids"].values())
    total = sum(volume for _, _, _, volume, _ in bids)
    expected = sum(
        price * volume
        for _, _, _, volume, price in bids
        if 3 * total < 4 * sum(v for _, _, _, v, p in bids if p <= price)
    )
    assert expected
    assert oracle_over(book).query((QUERY_DIR / "vwap.sql").read_text()) == [(expected,)]
