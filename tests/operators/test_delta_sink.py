"""A view's change feed written to Delta with delta-rs, once per batch id (``operators/runtime/delta_sink.py``)."""

from __future__ import annotations

import pyarrow as pa
from deltalake import DeltaTable

from operators.runtime.delta_sink import write_batch


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
