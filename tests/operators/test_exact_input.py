"""No lossy cast on the way in (issue 24, item 2): a float into a DECIMAL column, and every other cast
of the reader, reads a value only when it is exactly one of the column's; else the change is invalid,
named by table, _seq, column and value, on the stream reader, the writer, the Python API and ``ivm run``."""

from __future__ import annotations

import datetime
import json
from decimal import Decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from catalog.ddl import catalog_from_ddl
from operators.runtime.exact_numbers import exact_cast
from operators.runtime.stream import StreamFormatError, Update, read_stream, write_stream
from operators.runtime.validate import InvalidChangeError, Validator
from planner.cli import main
from planner.view import MaintainedView

DDL = """
CREATE TABLE item (id INT NOT NULL, price DECIMAL(10,2), qty DECIMAL, weight DOUBLE, n BIGINT, sold DATE,
  PRIMARY KEY (id));
"""
CATALOG = catalog_from_ddl(DDL)
DAY = datetime.date(2024, 2, 29)
QUERY = "select sum(price) as total, count(*) as n from item"


def item_file(path, seqs, **columns: pa.Array) -> None:
    """A hand-written item file (a foreign producer's types); columns not given are NULL or whole."""
    count = len(seqs)
    data = {"id": pa.array(range(1, count + 1), pa.int32()), "price": pa.nulls(count, pa.decimal128(10, 2)),
            "qty": pa.nulls(count, pa.decimal128(10, 0)), "weight": pa.nulls(count, pa.float64()),
            "n": pa.nulls(count, pa.int64()), "sold": pa.nulls(count, pa.date32()),
            **columns, "_seq": pa.array(seqs, pa.int64()), "_op": pa.array([1] * count, pa.int8())}
    pq.write_table(pa.table(data), path)


def test_a_float_into_a_decimal_column_is_read_only_when_its_shortest_text_fits_exactly(tmp_path):
    item_file(tmp_path / "item.parquet", [1, 2, 3, 4, 5], price=pa.array([22.81, 22.811, 1.005, 0.1, None]))
    updates = read_stream(tmp_path, CATALOG)
    assert [u.row[1] for u in updates if u.defect is None] == [Decimal("22.81"), Decimal("0.10"), None]
    assert all(type(u.row[1]) is Decimal for u in updates if u.defect is None and u.row[1] is not None)
    defects = {u.seq: u.defect for u in updates if u.defect is not None}
    assert defects == {
        2: "column price expects decimal(10,2), got double 22.811: it has more than 2 fractional digits",
        3: "column price expects decimal(10,2), got double 1.005: it has more than 2 fractional digits",
    }


def test_a_bare_decimal_is_decimal_10_0_and_refuses_every_fractional_float(tmp_path):
    assert str(CATALOG.table("item").column("qty").type) == "decimal(10,0)"
    item_file(tmp_path / "item.parquet", [1, 2, 3], qty=pa.array([3.0, 0.5, 2.5]))
    updates = read_stream(tmp_path, CATALOG)
    assert updates[0].defect is None and updates[0].row[2] == Decimal("3")
    assert [u.defect for u in updates[1:]] == [
        "column qty expects decimal(10,0), got double 0.5: it has more than 0 fractional digits",
        "column qty expects decimal(10,0), got double 2.5: it has more than 0 fractional digits",
    ]


# Every cast of the reader that could lose something: (column, values written, the row read or the
# reason refused) for each value.
LOSSY = {
    "float into bigint beyond 2**53": ("n", pa.array([2.0**53, 2.0**60]),
                                       [2**53, "got double 1.152921504606847e+18: a float beyond 2**53 is not exactly one integer"]),
    "int64 beyond 2**53 into double": ("weight", pa.array([2**53, 2**53 + 1], pa.int64()),
                                       [float(2**53), "got integer 9007199254740993: an integer beyond 2**53 is not exactly a double"]),
    "decimal not exactly a double": ("weight", pa.array([Decimal("0.10"), Decimal("12345678901234567890.1")], pa.decimal128(38, 1)),
                                     [0.1, "got decimal 12345678901234567890.1: it is not exactly a double"]),
    "decimal of larger scale into smaller": ("price", pa.array([Decimal("1.230"), Decimal("1.234")], pa.decimal128(6, 3)),
                                             [Decimal("1.23"), "got decimal 1.234: it has more than 2 fractional digits"]),
    "decimal beyond the precision": ("price", pa.array([Decimal("12345678.12"), Decimal("123456789.12")], pa.decimal128(38, 2)),
                                     [Decimal("12345678.12"), "got decimal 123456789.12: it has more than 8 integral digits"]),
    "int64 into a narrower decimal": ("qty", pa.array([5, 12345678901], pa.int64()),
                                      [Decimal(5), "got integer 12345678901: it has more than 10 integral digits"]),
    "float32 into decimal by its own shortest text": ("price", pa.array([0.1, 0.125], pa.float32()),
                                                       [Decimal("0.10"), "got double 0.125: it has more than 2 fractional digits"]),
    "nan and infinity into decimal": ("price", pa.array([float("nan"), float("inf")]),
                                      ["got double CAST('NaN' AS DOUBLE): it is not a finite number",
                                       "got double CAST('Infinity' AS DOUBLE): it is not a finite number"]),
    "timestamps into date": ("sold", pa.array([datetime.datetime(2024, 1, 1), datetime.datetime(2024, 1, 1, 3)]),
                             ["got TIMESTAMP '2024-01-01 00:00:00'", "got TIMESTAMP '2024-01-01 03:00:00'"]),
    "uint64 beyond bigint": ("n", pa.array([2**63 - 1, 2**63], pa.uint64()),
                             [2**63 - 1, "column n expects bigint, 9223372036854775808 is out of its range"]),
}


@pytest.mark.parametrize(("column", "values", "expected"), LOSSY.values(), ids=LOSSY.keys())
def test_no_cast_of_the_reader_changes_a_value(tmp_path, column, values, expected):
    item_file(tmp_path / "item.parquet", list(range(1, len(values) + 1)), **{column: values})
    position = CATALOG.table("item").column_names.index(column)
    for update, outcome in zip(read_stream(tmp_path, CATALOG), expected, strict=True):
        if isinstance(outcome, str):
            assert update.defect is not None and outcome in update.defect, update.defect
            assert update.defect.startswith(f"column {column} expects")
        else:
            assert update.defect is None and update.row[position] == outcome
            assert type(update.row[position]) is type(outcome)


@pytest.mark.parametrize("cast", [
    (pa.array([22.811]), pa.decimal128(10, 2)), (pa.array([2.0**60]), pa.int64()),
    (pa.array([Decimal("0.10000000000000000001")], pa.decimal128(38, 20)), pa.float64()),
])
def test_the_exact_cast_raises_where_arrows_safe_cast_rounds(cast):
    column, target = cast
    column.cast(target)  # pyarrow's safe cast: no error, a changed value
    with pytest.raises(pa.ArrowInvalid):
        exact_cast(column, target)


def test_writing_converts_an_exact_float_and_refuses_any_other(tmp_path):
    write_stream(tmp_path / "ok", CATALOG, [Update(1, "item", 1, (1, 22.81, 3.0, 1.5, 4.0, DAY))])
    [update] = read_stream(tmp_path / "ok", CATALOG)
    assert update.row == (1, Decimal("22.81"), Decimal("3"), 1.5, 4, DAY)
    for row, reason in (((1, 22.811, None, None, None, None), "column price expects decimal(10,2), got double 22.811"),
                        ((1, None, None, None, 2.5, None), "column n expects bigint, got double 2.5: it is not a whole number")):
        with pytest.raises(StreamFormatError, match=r"update with _seq 7: " + reason.replace("(", r"\(").replace(")", r"\)")):
            write_stream(tmp_path / "bad", CATALOG, [Update(7, "item", 1, row)])


def test_the_validator_converts_exact_floats_and_refuses_others_however_often_a_signature_was_seen():
    validator = Validator(CATALOG, ["item"])
    accepted, _ = validator.check([Update(1, "item", 1, (1, 22.81, None, Decimal("1.50"), 4.0, None))])
    assert accepted["item"] == [((1, Decimal("22.81"), None, 1.5, 4, None), 1)]
    assert [type(value) for value in accepted["item"][0][0][1:5:3]] == [Decimal, int]
    for seq, row, reason in ((2, (2, 22.811, None, None, None, None), "column price expects decimal(10,2), got double 22.811"),
                             (3, (3, None, None, None, 4.5, None), "column n expects bigint, got double 4.5"),
                             (4, (2**40, None, None, None, None, None), "column id expects int, 1099511627776 is out of its range"),
                             (5, (5, None, None, 2**60, None, None), "an integer beyond 2**53 is not exactly a double"),
                             (6, (6, None, None, Decimal("0.1000000000000000001"), None, None), "got decimal 0.1000000000000000001: it is not exactly a double")):
        before = validator.state()
        with pytest.raises(InvalidChangeError) as error:
            validator.check([Update(seq, "item", 1, row)])
        assert f"invalid change to table item at _seq {seq}" in str(error.value) and reason in str(error.value)
        assert validator.state() == before


@pytest.mark.parametrize("policy", ["error", "quarantine"])
def test_the_python_api_rejects_or_quarantines_an_inexact_float_and_keeps_its_state(policy):
    with MaintainedView(QUERY, CATALOG, on_invalid=policy) as view:
        view.apply([Update(1, "item", 1, (1, 22.81, None, None, None, None))])
        assert view.result() == [(Decimal("22.81"), 1)]
        bad = [Update(2, "item", 1, (2, 1.0, None, None, None, None)), Update(3, "item", 1, (3, 1.005, None, None, None, None))]
        if policy == "error":
            with pytest.raises(InvalidChangeError, match=r"table item at _seq 3 .*column price expects decimal\(10,2\), "
                                                         r"got double 1\.005: it has more than 2 fractional digits"):
                view.apply(bad)
            assert view.result() == [(Decimal("22.81"), 1)], "a rejected batch changes nothing"
        else:
            view.apply(bad)
            assert view.result() == [(Decimal("23.81"), 2)]
            [rejected] = view.rejected
            assert rejected.update.seq == 3 and "got double 1.005" in rejected.reason


def run(tmp_path, *options: str) -> int:
    ddl, query = tmp_path / "schema.sql", tmp_path / "q.sql"
    ddl.write_text(DDL)
    query.write_text(QUERY)
    return main(["run", "--query", str(query), "--catalog", str(ddl), "--stream", str(tmp_path / "s"), *options])


def test_ivm_run_stops_on_an_inexact_float_with_one_line_or_quarantines_it(tmp_path, capsys):
    (tmp_path / "s").mkdir()
    item_file(tmp_path / "s" / "item.parquet", [4, 9], price=pa.array([22.81, 22.811]))
    assert run(tmp_path) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert ("invalid change to table item at _seq 9 (op +1, row (2, 22.811, NULL, NULL, NULL, NULL)): column price "
            "expects decimal(10,2), got double 22.811: it has more than 2 fractional digits") in err
    rejects, out = tmp_path / "rejects.jsonl", tmp_path / "r.parquet"
    assert run(tmp_path, "--on-invalid", "quarantine", "--rejects", str(rejects), "--out", str(out)) == 0
    [line] = [json.loads(line) for line in rejects.read_text().splitlines()]
    assert (line["table"], line["seq"]) == ("item", 9) and "got double 22.811" in line["reason"]
    assert pq.read_table(out).to_pylist() == [{"total": Decimal("22.81"), "n": 1}]


def test_the_spark_stream_source_reads_exact_floats_and_names_an_inexact_one(tmp_path):
    from operators.runtime.spark_stream_source import (
        BatchSlice,
        SeqBatches,
        StreamDirectoryReader,
        _table_spec,
    )

    path = tmp_path / "item.parquet"
    options = {"files": json.dumps([str(path)]), "batches": json.dumps({"first": 1, "size": 10, "count": 1}),
               "table": json.dumps(_table_spec(CATALOG.table("item")))}
    reader = StreamDirectoryReader(options)
    assert reader.batches == SeqBatches(1, 10, 1)
    item_file(path, [4, 2], price=pa.array([22.81, 0.1]), qty=pa.array([3, 4], pa.int64()))
    [batch] = reader.read(BatchSlice(str(path), 1, 11))
    assert batch.column("price").to_pylist() == [Decimal("22.81"), Decimal("0.10")]
    assert batch.column("qty").to_pylist() == [Decimal(3), Decimal(4)]
    item_file(path, [4, 9, 2], price=pa.array([22.81, 1.005, 22.811]))
    with pytest.raises(InvalidChangeError, match=r"table item at _seq 2 \(op \+1, row \(3, 22\.811, NULL, NULL, NULL, NULL\)\): "
                                                 r"column price expects decimal\(10,2\), got double 22\.811: it has more than 2"):
        list(reader.read(BatchSlice(str(path), 1, 11)))


@pytest.mark.spark
def test_ivm_run_on_spark_stops_on_an_inexact_float_naming_it(tmp_path, capsys):
    (tmp_path / "s").mkdir()
    item_file(tmp_path / "s" / "item.parquet", [4, 9], price=pa.array([22.81, 22.811]))
    assert run(tmp_path, "--engine", "spark", "--work-dir", str(tmp_path / "work")) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert ("table item at _seq 9 (op +1, row (2, 22.811, NULL, NULL, NULL, NULL)): column price expects decimal(10,2), "
            "got double 22.811: it has more than 2 fractional digits") in err
