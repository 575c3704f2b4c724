"""Reading a stream batch by batch (``open_stream``) gives exactly the updates a whole read gives, in
``_seq`` order, with each unreadable change's defect on its own update; the validator checks the
columnar batches as it checks lists of updates."""

from __future__ import annotations

import datetime
from decimal import Decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from catalog.ddl import catalog_from_ddl
from operators.runtime.row_fingerprints import arrow_fingerprints, row_fingerprints
from operators.runtime.stream import (
    ChangeBatch,
    UnreadableUpdate,
    Update,
    open_stream,
    read_stream_contents,
    reader,
    write_stream,
)
from operators.runtime.validate import InvalidChangeError, Validator
from operators.zset import ChangeColumns

CATALOG = catalog_from_ddl("""
CREATE TABLE shop (id INT NOT NULL, name VARCHAR(20), PRIMARY KEY (id));
CREATE TABLE sale (id BIGINT NOT NULL, shop_id INT, amount DOUBLE, PRIMARY KEY (id));
""")


def write_stream_files(directory) -> None:
    """shop in _seq order, with an _op of 2 and a NULL _seq; sale out of _seq order, in a directory of
    two files, with a string where an int belongs."""
    pq.write_table(pa.table({
        "id": pa.array([1, 2, 3, 4], pa.int32()), "name": ["a", "b", None, "d"],
        "_seq": pa.array([1, 4, None, 9], pa.int64()), "_op": pa.array([1, 2, 1, 1], pa.int8())}),
        directory / "shop.parquet")
    (directory / "sale").mkdir()
    pq.write_table(pa.table({
        "id": pa.array([10, 11], pa.int64()), "shop_id": pa.array(["1", "x"]), "amount": [1.5, 2.0],
        "_seq": pa.array([7, 2], pa.int64()), "_op": pa.array([1, 1], pa.int64())}), directory / "sale" / "part-0.parquet")
    pq.write_table(pa.table({
        "id": pa.array([10], pa.int64()), "shop_id": pa.array(["1"]), "amount": [1.5],
        "_seq": pa.array([8], pa.int64()), "_op": pa.array([-1], pa.int64())}), directory / "sale" / "part-1.parquet")


OP_TWO = "_op is 2, must be +1 (insert) or -1 (delete)"
EXPECTED = [  # the shop_id column is strings: every sale row is unreadable, with its values as written
    Update(1, "shop", 1, (1, "a")),
    ("sale", 2, 1, (11, "x", 2.0)),
    UnreadableUpdate(4, "shop", 2, (2, "b"), OP_TWO),
    ("sale", 7, 1, (10, "1", 1.5)),
    ("sale", 8, -1, (10, "1", 1.5)),
    Update(9, "shop", 1, (4, "d")),
]


def _as_tuple(update: Update) -> tuple:
    return update.table, update.seq, update.op, update.row


@pytest.mark.parametrize("read_rows", [1, 2, 65_536])
@pytest.mark.parametrize("size", [1, 2, 4, 100])
def test_batches_are_consecutive_slices_of_the_stream_in_seq_order_with_their_defects(tmp_path, monkeypatch, size, read_rows):
    monkeypatch.setattr(reader, "_READ_ROWS", read_rows)  # chunk boundaries inside and across batches
    write_stream_files(tmp_path)
    stream = open_stream(tmp_path, CATALOG)
    batches = [list(batch) for batch in stream.batches(size)]
    assert len(stream) == 6 and [len(batch) for batch in batches] == [len(EXPECTED[i : i + size]) for i in range(0, 6, size)]
    updates = [update for batch in batches for update in batch]
    assert [_as_tuple(u) for u in updates] == [u if isinstance(u, tuple) else _as_tuple(u) for u in EXPECTED]
    assert updates[0] == EXPECTED[0] and updates[2] == EXPECTED[2] and updates[5] == EXPECTED[5]
    assert all("column shop_id expects int, got string" in updates[i].defect for i in (1, 3, 4))
    assert updates == list(read_stream_contents(tmp_path, CATALOG).updates)
    [unsequenced] = stream.without_seq
    assert (unsequenced.seq, unsequenced.table, unsequenced.op, unsequenced.row) == (None, "shop", 1, (3, None))
    assert "_seq is NULL (row 2 of" in unsequenced.defect


def test_the_validator_checks_a_columnar_batch_as_the_same_updates_one_by_one(tmp_path):
    write_stream_files(tmp_path)
    [batch] = open_stream(tmp_path, CATALOG).batches(100)
    assert isinstance(batch, ChangeBatch)
    columnar = Validator(CATALOG, ["shop", "sale"], "quarantine").check(batch)
    one_by_one = Validator(CATALOG, ["shop", "sale"], "quarantine").check(list(batch))
    assert columnar == one_by_one
    accepted, rejected = columnar
    assert accepted == {"shop": [((1, "a"), 1), ((4, "d"), 1)]}
    assert [(r.update.table, r.update.seq) for r in rejected] == [("sale", 2), ("shop", 4), ("sale", 7), ("sale", 8)]
    with pytest.raises(InvalidChangeError, match=r"table sale at _seq 2 .*column shop_id expects int"):
        Validator(CATALOG, ["shop", "sale"]).check(batch)


def test_a_stream_read_batch_by_batch_is_validated_like_a_whole_read(tmp_path):
    """Rows the reader could read are accepted or refused the same way whatever the batch size."""
    pq.write_table(pa.table({
        "id": pa.array([1, 1, 1, 2], pa.int32()), "name": ["a", "a", "b", "c"],
        "_seq": pa.array([1, 2, 3, 4], pa.int64()), "_op": pa.array([1, 1, -1, 1], pa.int8())}), tmp_path / "shop.parquet")
    whole = Validator(CATALOG, ["shop"], "quarantine").check(read_stream_contents(tmp_path, CATALOG).updates)
    validator = Validator(CATALOG, ["shop"], "quarantine")
    accepted, rejected = [], []
    for batch in open_stream(tmp_path, CATALOG).batches(1):
        changes, refused = validator.check(batch)
        accepted += changes.get("shop", [])
        rejected += refused
    assert (accepted, rejected) == (whole[0]["shop"], whole[1])
    assert [r.reason.split(":")[0] for r in rejected] == ["duplicate primary key (1)", "delete does not match the stored row with this key"]


def test_the_reader_fingerprints_rows_as_the_validator_fingerprints_the_same_python_rows(tmp_path):
    """A row inserted from one path and deleted from the other must match: one encoding for both."""
    catalog = catalog_from_ddl("""CREATE TABLE item (id BIGINT, n INT, price DECIMAL(15,2), x DOUBLE, day DATE,
      flag BOOLEAN, note VARCHAR(9), PRIMARY KEY (id));""")
    rows = [(1, 7, Decimal("2.50"), 0.0, datetime.date(2024, 2, 29), True, "a:b"),
            (2, None, None, None, None, None, None),
            (3, -7, Decimal("-0.01"), 1e300, datetime.date(1970, 1, 1), False, ""),
            (4, 7, Decimal("2.50"), 0.0, datetime.date(2024, 2, 29), True, "a"),
            (5, 1, Decimal("0.00"), -0.0, datetime.date(2024, 2, 29), True, "")]
    write_stream(tmp_path, catalog, [Update(i, "item", 1, row) for i, row in enumerate(rows)])
    [batch] = open_stream(tmp_path, catalog).batches(10)
    [changes] = batch.tables
    assert changes.fingerprints == row_fingerprints(rows, catalog.table("item"))
    without_key = {fingerprint for fingerprint in row_fingerprints([(0, *row[1:]) for row in rows], catalog.table("item"))}
    assert len(set(changes.fingerprints)) == len(without_key) == 5
    assert row_fingerprints([(5, 1, Decimal("0.00"), 0.0, datetime.date(2024, 2, 29), True, ""),
                             (5, 1, 0, 0, datetime.date(2024, 2, 29), True, "")],
                            catalog.table("item")) == changes.fingerprints[4:] * 2


def test_the_changes_of_tables_a_query_does_not_read_are_counted_but_not_read(tmp_path):
    write_stream_files(tmp_path)
    [batch] = open_stream(tmp_path, CATALOG).batches(100, tables={"shop"})
    assert len(batch) == 6 and [changes is None for changes in batch.tables] == [True, False]  # sale, shop
    assert [u.seq for u in batch] == [1, 4, 9]
    [whole] = open_stream(tmp_path, CATALOG).batches(100)
    assert Validator(CATALOG, ["shop"], "quarantine").check(batch) == Validator(CATALOG, ["shop"], "quarantine").check(whole)


def test_a_fingerprint_depends_on_the_values_only_not_on_where_an_arrow_array_starts():
    columns = [pa.array([1, None, 3, 4], pa.int64()), pa.array([Decimal("1.50"), None, Decimal("-2.00"), None],
                                                              pa.decimal128(15, 2)),
               pa.array(["x", None, "", "yz"]), pa.array([True, None, False, True])]
    whole = arrow_fingerprints(columns)
    assert arrow_fingerprints([column.slice(1) for column in columns]) == whole[1:]
    assert arrow_fingerprints([pa.chunked_array([column[:2], column[2:]]) for column in columns]) == whole
    assert len(set(whole)) == 4


def test_a_wrong_change_in_a_columnar_batch_leaves_the_validator_state_as_it_was(tmp_path):
    """``_store`` writes a table's changes straight into the state; at a delete of a row that differs
    from the stored one (taken out in the same probe) or a duplicate insert, it puts back exactly what
    it wrote, and the batch is checked again the general way."""
    pq.write_table(pa.table({
        "id": pa.array([1, 2, 3, 1, 2, 3], pa.int32()), "name": ["a", "b", "c", "a", "x", "c"],
        "_seq": pa.array(range(1, 7), pa.int64()), "_op": pa.array([1, 1, 1, -1, -1, 1], pa.int8())}),
        tmp_path / "shop.parquet")
    for policy in ("error", "quarantine"):
        first, second = open_stream(tmp_path, CATALOG).batches(3)
        validator = Validator(CATALOG, ["shop"], policy)
        validator.check(first)  # ids 1, 2, 3
        before = dict(validator.fingerprints["shop"])
        assert list(before) == [1, 2, 3]
        if policy == "error":  # the delete of id 1 was written, then the wrong delete of id 2 found
            with pytest.raises(InvalidChangeError, match=r"_seq 5 .*delete does not match"):
                validator.check(second)
            assert validator.fingerprints["shop"] == before
            continue
        accepted, rejected = validator.check(second)
        assert accepted == {"shop": [((1, "a"), -1)]}
        assert [r.update.seq for r in rejected] == [5, 6]
        assert validator.fingerprints["shop"] == {key: before[key] for key in (2, 3)}


def test_change_columns_read_as_the_changelog_they_stand_for():
    changes = ChangeColumns([(1, "a"), (2, "b"), (3, "c")], [1, -1, 1])
    pairs = [((1, "a"), 1), ((2, "b"), -1), ((3, "c"), 1)]
    assert list(changes) == pairs and len(changes) == 3 and changes == pairs and pairs == changes
    assert changes[1] == ((2, "b"), -1) and changes[:2] == pairs[:2] and list(reversed(changes[:2])) == pairs[1::-1]
    assert changes != pairs[:2] and not ChangeColumns([], [])
    assert repr(changes) == repr(pairs)


def test_a_chunk_whose_columns_do_not_all_cast_is_read_the_general_way_and_fingerprinted_when_readable(tmp_path):
    """The Arrow side of a chunk (``_arrow_ready``) casts and fingerprints only chunks whose every column
    casts; a chunk it leaves alone is read the general way: defects found, readable rows fingerprinted."""
    pq.write_table(pa.table({"id": pa.array([1.0, 2.0], pa.float64()), "name": ["a", None],
                             "_seq": pa.array([1, 2], pa.int64()), "_op": pa.array([1, 1], pa.int8())}),
                   tmp_path / "shop.parquet")
    source = reader._TableSource.open(tmp_path / "shop.parquet", CATALOG.table("shop"))[0]
    ready = reader._arrow_ready(next(source.chunks()), CATALOG.table("shop"))
    assert ready.casts is not None and ready.fingerprints == row_fingerprints([(1, "a"), (2, None)], CATALOG.table("shop"))
    [batch] = open_stream(tmp_path, CATALOG).batches(10)
    assert batch.tables[0].fingerprints == ready.fingerprints
    pq.write_table(pa.table({"id": pa.array([1.0, 2.5], pa.float64()), "name": ["a", None],
                             "_seq": pa.array([1, 2], pa.int64()), "_op": pa.array([1, 1], pa.int8())}),
                   tmp_path / "shop.parquet")
    source = reader._TableSource.open(tmp_path / "shop.parquet", CATALOG.table("shop"))[0]
    ready = reader._arrow_ready(next(source.chunks()), CATALOG.table("shop"))
    assert (ready.casts, ready.fingerprints, ready.makers) == (None, None, None)
    [batch] = open_stream(tmp_path, CATALOG).batches(10)
    shop = batch.tables[0]
    assert list(shop.defects) == [1] and shop.fingerprints == [*row_fingerprints([(1, "a")], CATALOG.table("shop")), None]


@pytest.mark.parametrize("ids", [pa.array([1, 3, 5, 1, 5, 6], pa.int32()), pa.array([1.0, 2.5, 5.0, 1.0, 5.0, 6.0])])
@pytest.mark.parametrize("read", [None, ("id",)])
def test_rows_of_a_chunk_with_a_wrong_change_match_their_deletes_in_a_later_chunk(tmp_path, monkeypatch, ids, read):
    """The reader fingerprints the readable changes of a chunk that has a wrong one (an _op of 2, or an
    id of 2.5 that makes the id column not cast): fingerprints the validator made of rows read in
    part (``columns``) would not match the whole rows' of the later chunk, and refuse its deletes."""
    monkeypatch.setattr(reader, "_READ_ROWS", 3)  # the wrong change's chunk, then the deletes'
    pq.write_table(pa.table({"id": ids, "name": ["a", "b", "e", "a", "e", "f"], "_seq": pa.array(range(1, 7), pa.int64()),
                             "_op": pa.array([1, 2, 1, -1, -1, 1], pa.int8())}), tmp_path / "shop.parquet")
    validator = Validator(CATALOG, ["shop"], "quarantine")
    accepted, rejected = [], []
    for batch in open_stream(tmp_path, CATALOG).batches(3, columns={"shop": read} if read else None):
        changes, refused = validator.check(batch)
        accepted += [(row[0], weight) for row, weight in changes.get("shop", [])]
        rejected += [(r.update.seq, r.reason) for r in refused]
    assert accepted == [(1, 1), (5, 1), (1, -1), (5, -1), (6, 1)]
    assert [seq for seq, _ in rejected] == [2] and ("2.5" in rejected[0][1] or OP_TWO in rejected[0][1])
    assert validator.fingerprints["shop"] == {6: row_fingerprints([(6, "f")], CATALOG.table("shop"))[0]}


@pytest.mark.parametrize("read", [None, ("id",)])
def test_a_nullable_column_written_as_parquet_nulls_reads_as_nulls_and_is_fingerprinted(tmp_path, read):
    """A producer with nothing in a nullable column may write it with Arrow's null type: every value
    is a NULL the column allows, so the rows read (whether or not the query reads the column), are
    fingerprinted as the same Python rows are, and a delete of such a row matches its insert."""
    pq.write_table(pa.table({"id": pa.array([1, 2, 1], pa.int32()), "name": pa.nulls(3),
                             "_seq": pa.array([1, 2, 3], pa.int64()), "_op": pa.array([1, 1, -1], pa.int8())}),
                   tmp_path / "shop.parquet")
    [batch] = open_stream(tmp_path, CATALOG).batches(10, columns={"shop": read} if read else None)
    [shop] = batch.tables
    assert not shop.defects
    assert shop.fingerprints == row_fingerprints([(1, None), (2, None), (1, None)], CATALOG.table("shop"))
    accepted, rejected = Validator(CATALOG, ["shop"], "error").check(batch)
    assert not rejected and sorted(weight for _, weight in accepted["shop"]) == [-1, 1, 1]
