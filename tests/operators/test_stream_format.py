"""The on-disk change stream: round trips, tolerated variations, and errors that name table, row, reason."""

from __future__ import annotations

import datetime
from decimal import Decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from catalog.ddl import catalog_from_ddl
from operators.runtime.stream_format import (
    StreamFormatError,
    Update,
    UpdateBatch,
    batches,
    read_stream,
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
    "_op zero": ("sale.parquet", sale_columns(op=(1, 0)), r"table sale .*row 1: _op is 0, must be \+1 \(insert\) or -1"),
    "_op two": ("sale.parquet", sale_columns(op=(2, 1)), r"row 0: _op is 2"),
    "_op float": ("sale.parquet", sale_columns(op=pa.array([1.0, -1.0])), r"column _op has type double, expected an integer"),
    "_op null": ("sale.parquet", sale_columns(op=pa.array([1, None], pa.int8())), r"table sale .*row 1: _op is NULL"),
    "_seq null": ("sale.parquet", sale_columns(seq=pa.array([None, 2], pa.int64())), r"table sale .*row 0: _seq is NULL"),
    "null key": ("sale.parquet", sale_columns(id=pa.array([7, None])), r"table sale .*column id, row 1: NULL in a NOT NULL"),
    "wrong type": ("sale.parquet", sale_columns(shop_id=pa.array(["a", "b"])), r"table sale .*column shop_id, row 0: cannot read string"),
    "bad value": ("sale.parquet", sale_columns(shop_id=pa.array(["1", "b"])), r"column shop_id, row 1: cannot read string"),
    "_seq repeated": ("sale.parquet", sale_columns(seq=(4, 4)), r"duplicate _seq 4: in table sale row 0 and in table sale row 1"),
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


@pytest.mark.parametrize(("file_name", "columns", "message"), READ_ERRORS.values(), ids=READ_ERRORS.keys())
def test_reading_errors_name_file_table_row_and_reason(tmp_path, file_name, columns, message):
    write_raw(tmp_path / file_name, columns)
    with pytest.raises(StreamFormatError, match=message):
        read_stream(tmp_path, CATALOG)


def test_a_seq_used_by_two_tables_is_named_with_both_places(tmp_path):
    write_stream(tmp_path, CATALOG, UPDATES)
    write_raw(tmp_path / "sale.parquet", sale_columns(seq=(1, 41)))
    with pytest.raises(StreamFormatError, match=r"duplicate _seq 41: in table sale row 1 and in table shop row 2"):
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
        ([Update(1, "sale", 1, (1,))], r"table sale .*row 0: has 1 values, the table has 2 columns"),
        ([Update(1, "sale", 1, (1, 2)), Update(2, "sale", 1, (3, "x"))], r"column shop_id, row 1: value 'x' is not a int32"),
        ([Update(1, "sale", 1, (None, 2))], r"table sale .*column id, row 0: NULL in a NOT NULL column"),
        ([Update(1, "sale", 1, (1, 2)), Update(1, "shop", 1, (1, "a", 1.0, DAY, True))], r"duplicate _seq 1"),
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
