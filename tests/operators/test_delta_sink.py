"""A view's change feed, and its result, written to Delta with delta-rs once per batch id
(``operators/runtime/delta_sink.py``)."""

from __future__ import annotations

import random
from collections import Counter
from decimal import Decimal

import pyarrow as pa
from deltalake import DeltaTable

from operators.runtime.delta_sink import apply_batch, write_batch


def test_a_batch_is_written_once_per_app_and_batch_id(tmp_path):
    path = str(tmp_path / "changes")
    assert write_batch(path, pa.table({"a": [1, 2], "_weight": [1, 1]}), "q", 0)
    assert write_batch(path, pa.table({"a": [1, 3], "_weight": [-1, 1]}), "q", 1)
    assert not write_batch(path, pa.table({"a": [1, 3], "_weight": [-1, 1]}), "q", 1)  # a replayed batch
    assert not write_batch(path, pa.table({"a": [9], "_weight": [1]}), "q", 0)
    assert write_batch(path, pa.table({"a": [7], "_weight": [1]}), "other", 0)  # another view's sink
    table = DeltaTable(path)
    rows = table.to_pyarrow_table().to_pylist()
    assert sorted((row["a"], row["_weight"]) for row in rows) == [(1, -1), (1, 1), (2, 1), (3, 1), (7, 1)]
    assert (table.transaction_version("q"), table.transaction_version("other"), table.version()) == (1, 0, 2)


def test_the_result_table_follows_random_batches_with_duplicates_nulls_and_replays(tmp_path):
    path, rng = str(tmp_path / "result"), random.Random(3)
    schema = pa.schema([("seg", pa.string()), ("total", pa.decimal128(12, 2)), ("_batch", pa.int64()),
                        ("_weight", pa.int32())])
    values = [(seg, total) for seg in ("A", "B", None) for total in (Decimal("1.50"), Decimal("-2.00"), None)]
    result: Counter = Counter()
    for batch in range(12):
        changes = []
        for _ in range(rng.randint(0, 6)):
            row = rng.choice(values)
            weight = -1 if result[row] > 0 and rng.random() < 0.5 else 1  # a delete of a row the result holds
            result[row] += weight
            changes.append((row, weight))
        data = pa.Table.from_pylist([{"seg": seg, "total": total, "_batch": batch, "_weight": weight}
                                     for (seg, total), weight in changes], schema=schema)
        assert apply_batch(path, data, "q", batch)
        assert not apply_batch(path, data, "q", batch)  # a replayed batch changes nothing
        assert result_rows(path) == +result
    assert +result, "the result ends empty: the comparison would prove little"
    assert max(result.values()) > 1, "no duplicate row: the counts were never tested"


def result_rows(path: str) -> Counter:
    return Counter({(row["seg"], row["total"]): row["_count"] for row in DeltaTable(path).to_pyarrow_table().to_pylist()})
