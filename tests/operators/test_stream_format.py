"""The on-disk change stream: round trips, tolerated variations, and errors that name table, row, reason."""

from __future__ import annotations

import datetime
import random
import re
from decimal import Decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from catalog.ddl import catalog_from_ddl
from operators.runtime.stream import (
    StreamFormatError,
    Update,
    UpdateBatch,
    arrow_values,
    batches,
    read_stream,
    read_stream_contents,
    write_stream,
)

CATALOG = catalog_from_ddl(
    """
    CREATE TABLE shop (id INT NOT NULL, name VARCHAR(20), price DECIMAL(15,2), opened DATE, open BOOLEAN,
      PRIMARY KEY (id));
    CREATE TABLE sale (id BIGINT NOT NULL, shop_id INT, PRIMARY KEY (id),
      FOREIGN KEY (shop_id) REFERENCES shop (id));
    """
)
DAY = datetime.date(2024, 2, 29)

UPDATES = [
    Update(3, "shop", 1, (1, "corner", Decimal("2.50"), DAY, True)),
    Update(10, "sale", 1, (100, 1)),
    Update(11, "shop", 1, (2, None, None, None, None)),
    Update(40, "sale", -1, (100, 1)),
    Update(41, "shop", -1, (1, "corner", Decimal("2.50"), DAY, True)),
]


def write_raw(path, columns: dict[str, pa.Array]) -> None:
    """A stream file written by hand, with whatever types a foreign producer might choose."""
    pq.write_table(pa.table(columns), path)


def sale_columns(seq=(1, 2), op=(1, -1), **overrides) -> dict[str, pa.Array]:
    columns = {
        "id": pa.array([7, 7], pa.int64()),
        "shop_id": pa.array([1, 1], pa.int32()),
        "_seq": seq if isinstance(seq, pa.Array) else pa.array(seq, pa.int64()),
        "_op": op if isinstance(op, pa.Array) else pa.array(op, pa.int8()),
    }
    columns.update(overrides)
    return {name: array for name, array in columns.items() if array is not None}


def test_round_trip_keeps_values_types_and_global_order_with_gaps(tmp_path):
    write_stream(tmp_path, CATALOG, UPDATES)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sale.parquet", "shop.parquet"]
    read = read_stream(tmp_path, CATALOG)
    assert list(read) == UPDATES and read.checked
    assert [type(v) for v in read[0].row] == [int, str, Decimal, datetime.date, bool]


def test_written_files_use_catalog_arrow_types(tmp_path):
    write_stream(tmp_path, CATALOG, UPDATES)
    schema = pq.read_schema(tmp_path / "shop.parquet")
    assert [str(t) for t in schema.types] == ["int32", "string", "decimal128(15, 2)", "date32[day]", "bool", "int64", "int8"]
    assert not schema.field("id").nullable


def test_a_mapping_with_an_empty_table_writes_an_empty_file(tmp_path):
    write_stream(tmp_path, CATALOG, {"shop": UPDATES[:1], "sale": []})
    assert pq.read_table(tmp_path / "sale.parquet").num_rows == 0
    assert list(read_stream(tmp_path, CATALOG)) == UPDATES[:1]


def test_tables_without_a_file_have_no_updates(tmp_path):
    write_raw(tmp_path / "sale.parquet", sale_columns())
    assert list(read_stream(tmp_path, CATALOG)) == [Update(1, "sale", 1, (7, 1)), Update(2, "sale", -1, (7, 1))]


@pytest.mark.parametrize("op_type", [pa.int16(), pa.int32(), pa.int64()])
def test_op_and_seq_of_any_integer_type_are_accepted(tmp_path, op_type):
    write_raw(tmp_path / "sale.parquet", sale_columns(seq=pa.array([5, 9], pa.int32()), op=pa.array([1, -1], op_type)))
    assert pq.read_schema(tmp_path / "sale.parquet").field("_op").type == op_type
    assert [(u.seq, u.op) for u in read_stream(tmp_path, CATALOG)] == [(5, 1), (9, -1)]


def test_a_table_directory_of_parquet_parts_is_read(tmp_path):
    (tmp_path / "sale").mkdir()
    write_raw(tmp_path / "sale" / "part-0.parquet", sale_columns(seq=(4, 2)))
    write_raw(tmp_path / "sale" / "part-1.parquet", sale_columns(seq=(3, 1), op=(1, 1)))
    assert [u.seq for u in read_stream(tmp_path, CATALOG)] == [1, 2, 3, 4]


def test_decimals_stay_exact_and_underscore_files_are_ignored(tmp_path):
    write_raw(
        tmp_path / "shop.parquet",
        {
            "id": pa.array([1], pa.int32()),
            "name": pa.array(["x"], pa.large_string()),
            "price": pa.array([Decimal("0.07")], pa.decimal128(15, 2)),
            "opened": pa.array([DAY], pa.date32()),
            "open": pa.array([False]),
            "_seq": pa.array([1]),
            "_op": pa.array([1]),
        },
    )
    (tmp_path / "_SUCCESS").touch()
    assert list(read_stream(tmp_path, CATALOG)) == [Update(1, "shop", 1, (1, "x", Decimal("0.07"), DAY, False))]


READ_ERRORS = {
    "unknown table": ("other.parquet", sale_columns(), r"other\.parquet is for table 'other', which the catalog does not have"),
    "no _seq": ("sale.parquet", sale_columns(_seq=None), r"table sale .*missing column\(s\) _seq"),
    "no _op": ("sale.parquet", sale_columns(_op=None), r"table sale .*missing column\(s\) _op"),
    "no catalog column": ("sale.parquet", sale_columns(shop_id=None), r"table sale .*missing column\(s\) shop_id"),
    "extra column": ("sale.parquet", sale_columns(note=pa.array(["a", "b"])), r"table sale .*unexpected column\(s\) note"),
    "_op float": ("sale.parquet", sale_columns(op=pa.array([1.0, -1.0])), r"column _op has type double, expected an integer"),
    "_seq string": ("sale.parquet", sale_columns(seq=pa.array(["1", "2"])), r"column _seq has type string, expected an integer"),
    "_seq null": ("sale.parquet", sale_columns(seq=pa.array([None, 2], pa.int64())), r"table sale: _seq is NULL \(row 0 of .*sale\.parquet\)"),
    "_seq repeated": ("sale.parquet", sale_columns(seq=(4, 4)), r"duplicate _seq 4: twice in table sale"),
    "not parquet": ("sale.csv", None, r"holds sale\.csv, which is not a stream file \(<table>\.parquet"),
    "corrupt parquet": ("sale.parquet", b"PAR1 this is not a Parquet file", r"table sale \(.*sale\.parquet\): not a readable Parquet file: "),
}


@pytest.mark.parametrize("decimal_type", [pa.decimal128(15, 2), pa.decimal128(38, 10)], ids=str)
def test_decimals_of_any_precision_are_read_exactly_at_the_column_scale_and_keep_nulls(tmp_path, decimal_type):
    prices = [Decimal("24386.67"), None, Decimal("-0.07")]
    write_raw(
        tmp_path / "shop.parquet",
        {
            "id": pa.array([1, 2, 3]),
            "name": pa.array(["a", "b", "c"]),
            "price": pa.array(prices, decimal_type),
            "opened": pa.array([DAY] * 3),
            "open": pa.array([True] * 3),
            "_seq": pa.array([1, 2, 3]),
            "_op": pa.array([1, 1, 1]),
        },
    )
    assert [u.row[2] for u in read_stream(tmp_path, CATALOG)] == prices


@pytest.mark.parametrize("repeats", [True, False], ids=["few distinct values", "all distinct"])
def test_columns_of_repeated_values_read_as_the_same_values_each_made_once(tmp_path, repeats):
    """A column that repeats its values (made once per distinct value, then shared by the rows) reads
    exactly as one whose values are all distinct (made one per row), NULLs included."""
    count = 3 * arrow_values._SAMPLE
    rng = random.Random(5)

    def column(pool: list, distinct) -> list:
        return [None if rng.random() < 0.1 else rng.choice(pool) for _ in range(count)] if repeats else \
            [distinct(i) for i in range(count)]

    names = column(["a", "", "b\x00", "é"], lambda i: f"n{i}")
    prices = column([Decimal("0.07"), Decimal("-1.00"), Decimal("24386.67")], lambda i: Decimal(i).scaleb(-2))
    days = column([DAY, datetime.date(1, 1, 1)], lambda i: DAY + datetime.timedelta(days=i))
    updates = [Update(i, "shop", 1, (i, names[i], prices[i], days[i], True)) for i in range(count)]
    write_stream(tmp_path, CATALOG, updates)
    read = read_stream(tmp_path, CATALOG)
    assert [u.row for u in read] == [u.row for u in updates]
    assert {type(v) for u in read for v in u.row[1:4]} == ({str, Decimal, datetime.date, type(None)} if repeats
                                                            else {str, Decimal, datetime.date})
    assert all(str(u.row[2]) == str(w.row[2]) for u, w in zip(read, updates, strict=True) if u.row[2] is not None)
    assert len({id(u.row[2]) for u in read}) == (4 if repeats else count)  # 3 values and None, or one per row


@pytest.mark.parametrize(("file_name", "columns", "message"), READ_ERRORS.values(), ids=READ_ERRORS.keys())
def test_a_stream_unreadable_as_a_whole_is_refused_naming_file_table_and_reason(tmp_path, file_name, columns, message):
    if isinstance(columns, dict):
        write_raw(tmp_path / file_name, columns)
    else:
        (tmp_path / file_name).write_bytes(columns or b"id,shop_id\n7,1\n")
    with pytest.raises(StreamFormatError, match=message):
        read_stream(tmp_path, CATALOG)


def test_an_empty_stream_directory_is_refused(tmp_path):
    (tmp_path / "_SUCCESS").touch()
    with pytest.raises(StreamFormatError, match=r"holds no stream files"):
        read_stream(tmp_path, CATALOG)
    (tmp_path / "sale").mkdir()
    (tmp_path / "sale" / "_SUCCESS").touch()
    with pytest.raises(StreamFormatError, match=r"table sale \(.*sale\): the directory holds no Parquet files"):
        read_stream(tmp_path, CATALOG)
    (tmp_path / "sale" / "part-0.csv").write_text("id,shop_id\n")
    with pytest.raises(StreamFormatError, match=r"table sale \(.*sale\): not a readable Parquet file: .*part-0\.csv"):
        read_stream(tmp_path, CATALOG)


def test_a_file_given_as_the_stream_directory_is_named(tmp_path):
    (tmp_path / "s.parquet").touch()
    with pytest.raises(StreamFormatError, match=r"stream directory .*s\.parquet is a file, not a directory"):
        read_stream(tmp_path / "s.parquet", CATALOG)


# Changes the reader cannot read as one: the (seq, reason) of each; the other rows read normally.
SALE_DEFECTS = {
    "_op zero": (sale_columns(op=(1, 0)), [(2, r"_op is 0, must be \+1 \(insert\) or -1 \(delete\)")]),
    "_op two": (sale_columns(op=(2, 1)), [(1, r"_op is 2, must be")]),
    "_op null": (sale_columns(op=pa.array([1, None], pa.int8())), [(2, r"_op is NULL, must be")]),
    "null key": (sale_columns(id=pa.array([7, None])), [(2, r"NULL in key column id")]),
    "strings into int": (sale_columns(shop_id=pa.array(["a", "b"])),
                         [(1, r"column shop_id expects int, got string 'a'"), (2, r"got string 'b'")]),
    "numeric string into int": (sale_columns(shop_id=pa.array(["1", "2"])),
                                [(1, r"column shop_id expects int, got string '1'"), (2, r"got string '2'")]),
    "bool into int": (sale_columns(shop_id=pa.array([True, False])), [(1, r"column shop_id expects int, got boolean TRUE"),
                                                                     (2, r"got boolean FALSE")]),
    "fractional float into int": (sale_columns(shop_id=pa.array([1.0, 2.5])), [(2, r"column shop_id expects int, got double 2\.5")]),
    "nan into int": (sale_columns(shop_id=pa.array([float("nan"), 3.0])), [(1, r"column shop_id expects int, got double CAST\('NaN' AS DOUBLE\)")]),
    "floats beyond int64 into int": (sale_columns(shop_id=pa.array([1e30, float("-inf")])),
                                     [(1, r"got double 1e\+30"), (2, r"got double CAST\('-Infinity' AS DOUBLE\)")]),
    "fractional decimal into int": (sale_columns(shop_id=pa.array([Decimal("1.00"), Decimal("1.50")], pa.decimal128(5, 2))),
                                    [(2, r"column shop_id expects int, got decimal 1\.50")]),
    "int64 beyond int64 from uint64": (sale_columns(shop_id=pa.array([2**64 - 1, 5], pa.uint64())),
                                       [(1, r"column shop_id expects int, 18446744073709551615 is out of its range")]),
}


@pytest.mark.parametrize(("columns", "expected"), SALE_DEFECTS.values(), ids=SALE_DEFECTS.keys())
def test_a_change_that_cannot_be_read_carries_its_reason_and_its_values_as_written(tmp_path, columns, expected):
    write_raw(tmp_path / "sale.parquet", columns)
    contents = read_stream_contents(tmp_path, CATALOG)
    assert contents.updates.checked and contents.without_seq == ()
    defective = [(u.seq, u.defect) for u in contents.updates if u.defect is not None]
    assert [seq for seq, _ in defective] == [seq for seq, _ in expected]
    for (_, reason), (_, pattern) in zip(defective, expected, strict=True):
        assert re.search(pattern, reason), reason
    written = pa.Table.from_pydict({k: v for k, v in columns.items() if k in ("id", "shop_id")}).to_pylist()
    for update in contents.updates:
        if update.defect is None:
            assert [type(v) for v in update.row] == [int, int], "a readable row holds values of the column types"
        else:
            assert repr(update.row) == repr(tuple(written[update.seq - 1].values())), "a wrong row keeps its values as written"


def test_strings_are_read_from_any_string_layout_and_from_utf8_binary(tmp_path):
    for names in (pa.array(["a"], pa.large_string()), pa.array(["a"], pa.string_view()), pa.array([b"a"]),
                  pa.array(["a"]).dictionary_encode()):
        write_stream(tmp_path, CATALOG, {"shop": [Update(1, "shop", 1, (1, "a", Decimal("1.00"), DAY, True))]})
        data = pq.read_table(tmp_path / "shop.parquet")
        write_raw(tmp_path / "shop.parquet", {**{name: data[name] for name in data.column_names}, "name": names})
        [update] = read_stream(tmp_path, CATALOG)
        assert update.defect is None and update.row[1] == "a", names.type


def test_whole_floats_and_decimals_into_an_int_column_are_read_as_ints(tmp_path):
    write_raw(tmp_path / "sale.parquet", sale_columns(shop_id=pa.array([Decimal("3"), None], pa.decimal128(5, 0))))
    assert [u.row for u in read_stream(tmp_path, CATALOG)] == [(7, 3), (7, None)]
    write_raw(tmp_path / "sale.parquet", sale_columns(shop_id=pa.array([4.0, -2.0])))
    assert [u.row for u in read_stream(tmp_path, CATALOG)] == [(7, 4), (7, -2)]


SHOP_DEFECTS = {
    "int beyond the decimal's digits": ("price", pa.array([2**53 + 1], pa.int64()), r"column price expects decimal\(15,2\), got integer 9007199254740993: it has more than 13 integral digits"),
    "fraction beyond the decimal's scale": ("price", pa.array([Decimal("1.005")], pa.decimal128(5, 3)), r"column price expects decimal\(15,2\), got decimal 1\.005"),
    "string into double": ("price", pa.array(["1.5"]), r"column price expects decimal\(15,2\), got string '1\.5'"),
    "timestamp into date": ("opened", pa.array([datetime.datetime(2024, 1, 1, 3)]), r"column opened expects date, got TIMESTAMP"),
    "string into date": ("opened", pa.array(["2024-01-01"]), r"column opened expects date, got string '2024-01-01'"),
    "int into string": ("name", pa.array([5]), r"column name expects string, got integer 5"),
    "bytes that are not UTF-8 into string": ("name", pa.array([b"\xff"]), r"column name expects string, got X'FF'"),
    "int into bool": ("open", pa.array([1]), r"column open expects boolean, got integer 1"),
    "string into bool": ("open", pa.array(["true"]), r"column open expects boolean, got string 'true'"),
}


@pytest.mark.parametrize(("name", "values", "reason"), SHOP_DEFECTS.values(), ids=SHOP_DEFECTS.keys())
def test_no_value_is_cast_lossily_or_from_another_kind_of_type(tmp_path, name, values, reason):
    columns = {"id": pa.array([1]), "name": pa.array(["a"]), "price": pa.array([1.5]), "opened": pa.array([DAY]),
               "open": pa.array([True]), "_seq": pa.array([1]), "_op": pa.array([1])}
    write_raw(tmp_path / "shop.parquet", {**columns, name: values})
    [update] = read_stream(tmp_path, CATALOG)
    assert update.defect is not None and re.search(reason, update.defect), update.defect


def test_rows_without_a_seq_are_kept_apart_with_their_file_row(tmp_path):
    write_raw(tmp_path / "sale.parquet", sale_columns(seq=pa.array([None, 2, None]), op=(1, 1, -1),
                                                      id=pa.array([7, 8, 9]), shop_id=pa.array([1, 1, 1])))
    contents = read_stream_contents(tmp_path, CATALOG)
    assert list(contents.updates) == [Update(2, "sale", 1, (8, 1))]
    assert [(u.seq, u.op, u.row) for u in contents.without_seq] == [(None, 1, (7, 1)), (None, -1, (9, 1))]
    assert all("_seq is NULL (row" in u.defect for u in contents.without_seq)
    assert "row 2 of" in contents.without_seq[1].defect


def test_defects_land_on_their_own_update_across_tables_in_seq_order(tmp_path):
    write_stream(tmp_path, CATALOG, {"shop": [Update(20, "shop", 1, (1, "a", Decimal("1.00"), DAY, True))]})
    write_raw(tmp_path / "sale.parquet", sale_columns(seq=(30, 10), op=(-1, 1), shop_id=pa.array(["x", "y"])))
    updates = read_stream(tmp_path, CATALOG)
    assert [(u.seq, u.op, u.row, u.defect is None) for u in updates] == [
        (10, 1, (7, "y"), False), (20, 1, (1, "a", Decimal("1.00"), DAY, True), True), (30, -1, (7, "x"), False)]
    assert "'x'" in updates[2].defect and "'y'" in updates[0].defect


def test_a_seq_used_by_two_tables_is_named_with_both_places(tmp_path):
    write_stream(tmp_path, CATALOG, UPDATES)
    write_raw(tmp_path / "sale.parquet", sale_columns(seq=(1, 41)))
    with pytest.raises(StreamFormatError, match=r"duplicate _seq 41: in table sale and in table shop"):
        read_stream(tmp_path, CATALOG)


def test_a_table_given_as_file_and_directory_is_refused(tmp_path):
    write_raw(tmp_path / "sale.parquet", sale_columns())
    (tmp_path / "sale").mkdir()
    with pytest.raises(StreamFormatError, match=r"table sale has two stream inputs"):
        read_stream(tmp_path, CATALOG)


def test_a_missing_stream_directory_is_named(tmp_path):
    with pytest.raises(StreamFormatError, match=r"stream directory .*nowhere does not exist"):
        read_stream(tmp_path / "nowhere", CATALOG)


@pytest.mark.parametrize(
    ("updates", "message"),
    [
        ([Update(1, "sale", 0, (1, 1))], r"table sale, update with _seq 1: _op is 0, must be \+1 or -1"),
        ([Update(1, "sale", 1, (1,))], r"table sale .*update with _seq 1: has 1 values, the table has 2 columns"),
        ([Update(1, "sale", 1, (1, 2)), Update(2, "sale", 1, (3, "x"))], r"update with _seq 2: column shop_id expects int, got string 'x'"),
        ([Update(1, "sale", 1, (1, 2)), Update(7, "sale", 1, (3, True))], r"_seq 7: column shop_id expects int, got boolean TRUE"),
        ([Update(1, "sale", 1, (1, 2.5))], r"_seq 1: column shop_id expects int, got double 2.5"),
        ([Update(1, "shop", 1, (1, "a", 2**53 + 1, DAY, True))], r"_seq 1: column price expects decimal\(15,2\), got integer 9007199254740993: it has more than 13 integral digits"),
        ([Update(1, "shop", 1, (1, "a", Decimal("1.00"), datetime.datetime(2024, 1, 1, 5), True))], r"_seq 1: column opened expects date, got TIMESTAMP"),
        ([Update(1, "sale", 1, (None, 2))], r"table sale .*update with _seq 1: NULL in key column id"),
        ([Update(1, "sale", 1, (1, 2)), Update(1, "shop", 1, (1, "a", Decimal("1.00"), DAY, True))], r"duplicate _seq 1"),
        ([Update(1, "nosuch", 1, ())], r"unknown table 'nosuch'"),
    ],
)
def test_writing_refuses_invalid_updates_before_writing_anything(tmp_path, updates, message):
    with pytest.raises(ValueError, match=message):
        write_stream(tmp_path / "out", CATALOG, updates)
    assert not (tmp_path / "out").exists()


def test_an_update_listed_under_another_table_is_refused(tmp_path):
    with pytest.raises(StreamFormatError, match=r"_seq 10 of table sale is listed under table shop"):
        write_stream(tmp_path, CATALOG, {"shop": UPDATES[:2]})


def test_writing_over_another_stream_with_other_tables_is_refused(tmp_path):
    write_stream(tmp_path, CATALOG, UPDATES)
    with pytest.raises(StreamFormatError, match=r"already holds stream files for table\(s\) sale"):
        write_stream(tmp_path, CATALOG, UPDATES[:1])
    write_stream(tmp_path, CATALOG, [*UPDATES[:1], Update(5, "sale", 1, (1, 1))])
    assert len(read_stream(tmp_path, CATALOG)) == 2


def test_batches_are_consecutive_chunks_in_seq_order():
    chunks = list(batches(UPDATES, 2))
    assert [[u.seq for u in chunk] for chunk in chunks] == [[3, 10], [11, 40], [41]]
    assert list(batches([], 3)) == []


def test_a_batch_knows_whether_its_rows_were_checked_and_its_chunks_inherit_it(tmp_path):
    write_stream(tmp_path, CATALOG, UPDATES)
    assert [chunk.checked for chunk in batches(read_stream(tmp_path, CATALOG), 2)] == [True, True, True]
    assert [chunk.checked for chunk in batches(UPDATES, 2)] == [False, False, False]
    assert read_stream(tmp_path, CATALOG)[1:3] == UpdateBatch(UPDATES[1:3], checked=True)


def test_a_batch_is_in_seq_order_and_in_seq_order_sorts_what_it_is_given():
    assert UpdateBatch.in_seq_order(reversed(UPDATES)) == UpdateBatch(UPDATES)
    with pytest.raises(StreamFormatError, match=r"not in _seq order: _seq 3 \(shop\) after 10"):
        UpdateBatch([UPDATES[1], UPDATES[0]])


def test_batches_refuse_updates_out_of_seq_order_and_sizes_below_one():
    with pytest.raises(StreamFormatError, match=r"not in _seq order: _seq 3 \(shop\) after 10"):
        list(batches([UPDATES[1], UPDATES[0]], 5))
    with pytest.raises(ValueError, match="batch size must be at least 1"):
        list(batches(UPDATES, 0))
