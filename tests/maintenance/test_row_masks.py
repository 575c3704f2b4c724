"""Reading only the selections' and keys' columns at the rows no route can keep (``row_masks`` +
``OpenStream.batches(masks=...)``) changes no result: over random insert/delete streams with NULLs in
the selections' columns and deletes of rows the selections drop, a masked read matches DuckDB after
every batch and an unmasked read change for change, with the generated program's stages and with
the generic ones; a rejected row the mask thinned still shows every value as written (``ivm run
--on-invalid quarantine``'s rejects file)."""

from __future__ import annotations

import datetime
import json
import random
from decimal import Decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from catalog.ddl import catalog_from_ddl
from operators.lowering.route_masks import row_masks
from operators.lowering.stream_columns import columns_read
from operators.runtime.stream import Update, open_stream, reader, write_stream
from planner.cli import main
from planner.view import MaintainedView
from planner.workloads.oracle import DuckDBOracle, assert_matches_reference
from tests.maintenance.checking import count_equal_changes, stream_tables

DDL = """
CREATE TABLE shop (s_id INT NOT NULL, s_region VARCHAR(10), PRIMARY KEY (s_id));
CREATE TABLE sale (id BIGINT NOT NULL, shop_id INT REFERENCES shop (s_id), day DATE, amount DECIMAL(15,2), qty INT,
                   note VARCHAR(20) NOT NULL, PRIMARY KEY (id));
"""
CATALOG = catalog_from_ddl(DDL)
DAY = datetime.date(1995, 3, 15)
QUERIES = {
    "join": """SELECT s_region, count(*) AS n, sum(amount) AS total, sum(qty) AS qty FROM shop, sale
               WHERE s_id = shop_id AND day > date '1995-03-15' AND (qty IS NULL OR qty < 7) AND s_region <> 'x'
               GROUP BY s_region""",
    "select": "SELECT id, note, amount, day FROM sale WHERE day >= date '1995-03-17' OR qty IN (1, 2, NULL)",
}


def random_stream(count: int, seed: int) -> list[Update]:
    """Inserts and deletes (of the row as inserted) of shops and sales, keys reused after a delete; NULLs
    in every nullable column."""
    rng = random.Random(seed)
    live: dict[tuple[str, int], tuple] = {}

    def maybe(value):
        return None if rng.random() < 0.15 else value

    updates = []
    for seq in range(1, count + 1):
        table = "shop" if rng.random() < 0.1 else "sale"
        key = rng.randint(1, 8) if table == "shop" else rng.randint(1, 120)
        if (table, key) in live and rng.random() < 0.6:
            updates.append(Update(seq, table, -1, live.pop((table, key))))
            continue
        if (table, key) in live:
            continue
        row = ((key, maybe(rng.choice("abx"))) if table == "shop" else
               (key, maybe(rng.randint(1, 8)), maybe(DAY + datetime.timedelta(rng.randint(-4, 4))),
                maybe(Decimal(rng.randint(0, 10_000)) / 100), maybe(rng.randint(0, 9)), f"note {seq}"))
        live[table, key] = row
        updates.append(Update(seq, table, 1, row))
    return updates


@pytest.mark.parametrize("compiled", [True, False], ids=["generated", "generic"])
@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("name", sorted(QUERIES))
def test_a_masked_read_matches_duckdb_and_an_unmasked_read(tmp_path, monkeypatch, name, seed, compiled):
    monkeypatch.setattr(reader, "_READ_ROWS", 97)  # chunks of a few batches: the mask is per chunk
    updates = random_stream(1_500, seed)
    sql = QUERIES[name]
    write_stream(tmp_path, CATALOG, updates)
    with MaintainedView(sql, CATALOG, compiled=compiled) as masked, DuckDBOracle(CATALOG) as oracle:
        dataflow, tables = masked.compiled.dataflow, masked.validator.tables
        masks = row_masks(dataflow, CATALOG)
        assert set(masks) >= {"sale"}
        read = open_stream(tmp_path, CATALOG).batches(40, tables=tables, columns=columns_read(dataflow, CATALOG),
                                                      masks=masks)
        oracle.load_stream(stream_tables(CATALOG, updates))
        informative = thinned = 0
        for number, batch in enumerate(read):
            masked.apply(batch)
            # the notes the mask left unmade (the column is NOT NULL: every None is one)
            thinned += sum(row[5] is None for changes in batch.tables if changes and changes.table == "sale"
                           for row in changes.rows)
            oracle.as_of(max(update.seq for update in batch))
            expected = oracle.reference(sql)
            assert_matches_reference(masked.result(), expected, f"masked read, batch {number}")
            informative += expected.is_informative()
        assert informative > 20 and thinned > 100
    # change for change the same as reading every value of every row
    with MaintainedView(sql, CATALOG) as whole, MaintainedView(sql, CATALOG, compiled=compiled) as masked:
        pairs = zip(open_stream(tmp_path, CATALOG).batches(40, tables=tables),
                    open_stream(tmp_path, CATALOG).batches(40, tables=tables, masks=masks), strict=True)
        assert count_equal_changes(whole, masked, pairs) > 10
    dropped_deletes = [u for u in updates if u.table == "sale" and u.op == -1 and (u.row[2] is None or u.row[2] <= DAY)]
    assert len(dropped_deletes) > 20, "the stream must delete rows the selections drop"


def test_the_rejects_file_shows_a_thinned_row_as_written(tmp_path, capsys):
    (tmp_path / "schema.sql").write_text(DDL)
    (tmp_path / "q.sql").write_text(QUERIES["join"])
    updates = [Update(1, "shop", 1, (1, "a")),
               Update(2, "sale", 1, (10, 1, DAY + datetime.timedelta(3), Decimal("5.25"), 2, "kept")),
               Update(3, "sale", 1, (11, 1, DAY, Decimal("7.50"), 3, "dropped")),
               # a duplicate key of a row the selection drops: rejected, shown as written
               Update(4, "sale", 1, (11, 1, DAY - datetime.timedelta(1), Decimal("8.75"), 4, "again")),
               Update(5, "sale", -1, (11, 1, DAY, Decimal("7.50"), 3, "dropped"))]
    rejects, out = tmp_path / "rejects.jsonl", tmp_path / "out.parquet"
    stream = write_stream(tmp_path / "stream", CATALOG, updates)
    assert main(["run", "--query", str(tmp_path / "q.sql"), "--catalog", str(tmp_path / "schema.sql"),
                 "--stream", str(stream), "--on-invalid", "quarantine", "--rejects", str(rejects),
                 "--out", str(out), "--batch-size", "10"]) == 0
    [line] = [json.loads(line) for line in rejects.read_text().splitlines()]
    assert (line["seq"], line["row"]) == (4, ["11", "1", "1995-03-14", "8.75", "4", "again"])
    assert line["reason"].startswith("duplicate primary key (11)")
    assert "result: 1 rows" in capsys.readouterr().out


def test_a_null_in_a_not_null_column_of_a_dropped_row_is_refused_and_the_other_rows_read(tmp_path):
    """The NULL is the reader's defect: the column is then made at every row of its chunk, so no None
    left for a dropped row can pass for another."""
    days = [DAY + datetime.timedelta(1), DAY, DAY - datetime.timedelta(1), DAY + datetime.timedelta(2)]
    pq.write_table(pa.table({
        "id": pa.array([1, 2, 3, 4], pa.int64()), "shop_id": pa.array([1, 1, 1, 1], pa.int32()),
        "day": pa.array(days, pa.date32()), "amount": pa.array([Decimal("1.50")] * 4, pa.decimal128(15, 2)),
        "qty": pa.array([1, 3, 5, 1], pa.int32()), "note": pa.array(["a", None, "c", "d"]),
        "_seq": pa.array([1, 2, 3, 4], pa.int64()), "_op": pa.array([1, 1, 1, 1], pa.int8())}), tmp_path / "sale.parquet")
    with MaintainedView(QUERIES["select"], CATALOG, on_invalid="quarantine") as view:
        dataflow = view.compiled.dataflow
        for batch in open_stream(tmp_path, CATALOG).batches(10, columns=columns_read(dataflow, CATALOG),
                                                           masks=row_masks(dataflow, CATALOG)):
            view.apply(batch)
        [rejected] = view.rejected
        assert (rejected.update.seq, rejected.update.row[5], rejected.reason) == (2, None, "NULL in NOT NULL column note")
        assert sorted(view.result()) == [(1, "a", Decimal("1.50"), days[0]), (4, "d", Decimal("1.50"), days[3])]
