"""``MaintainedView.batches``: a stream read for the view (the reader's pushdown, as ``ivm run`` reads)
maintains the same result as the stream's whole rows, and reads only what the view needs."""

from __future__ import annotations

import random

from catalog.ddl import catalog_from_ddl
from operators.runtime.stream import Update, open_stream, write_stream
from planner.view import MaintainedView

CATALOG = catalog_from_ddl("""
CREATE TABLE shop (id INT NOT NULL, name VARCHAR(20), region VARCHAR(10), PRIMARY KEY (id));
CREATE TABLE sale (id BIGINT NOT NULL, shop_id INT, amount INT, note VARCHAR(20), PRIMARY KEY (id),
                   FOREIGN KEY (shop_id) REFERENCES shop (id));
CREATE TABLE unused (id INT NOT NULL, PRIMARY KEY (id));
""")
SQL = ("SELECT s.region, SUM(t.amount) AS total, COUNT(*) AS n FROM sale t JOIN shop s ON t.shop_id = s.id "
       "WHERE t.amount > 20 GROUP BY s.region")


def _updates(seed: int) -> list[Update]:
    """Inserts and deletes of shops and sales (dangling sales, deleted shops, rows the filter drops)."""
    rng, seq, updates = random.Random(seed), 0, []
    shops, sales = {}, {}
    for _ in range(400):
        seq += 1
        kind = rng.random()
        if kind < 0.15:
            key = rng.randrange(12)
            if key in shops:
                updates.append(Update(seq, "shop", -1, shops.pop(key)))
            else:
                shops[key] = (key, f"shop{key}", rng.choice(["EU", "US", "ASIA"]))
                updates.append(Update(seq, "shop", +1, shops[key]))
        elif kind < 0.25 and sales:
            key = rng.choice(sorted(sales))
            updates.append(Update(seq, "sale", -1, sales.pop(key)))
        elif kind < 0.3:
            updates.append(Update(seq, "unused", +1, (seq,)))
        else:
            sales[seq] = (seq, rng.randrange(14), rng.randrange(50), "n" * rng.randrange(4))
            updates.append(Update(seq, "sale", +1, sales[seq]))
    return updates


def test_batches_read_for_the_view_maintain_what_whole_rows_maintain(tmp_path):
    write_stream(tmp_path, CATALOG, _updates(7))
    with MaintainedView(SQL, CATALOG) as pushed, MaintainedView(SQL, CATALOG) as whole:
        informative = 0
        for read, full in zip(pushed.batches(open_stream(tmp_path, CATALOG), 25),
                              open_stream(tmp_path, CATALOG).batches(25), strict=True):
            pushed.apply(read)
            whole.apply(full)
            assert pushed.result() == whole.result()
            informative += bool(whole.result())
        assert informative >= 8


def test_batches_read_for_the_view_leave_out_what_it_does_not_read(tmp_path):
    write_stream(tmp_path, CATALOG, _updates(3))
    view = MaintainedView(SQL, CATALOG)
    read = [changes for batch in view.batches(open_stream(tmp_path, CATALOG), 1000)
            for changes in batch.tables if changes is not None]
    assert {changes.table for changes in read} == {"shop", "sale"}  # not the table no stage reads
    sale_rows = [row for changes in read if changes.table == "sale" for row in changes.rows]
    assert sale_rows and all(row[3] is None for row in sale_rows)  # sale.note: no stage reads it
