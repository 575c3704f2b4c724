"""Writing a stream directory: one Parquet file per table, rows tagged ``_seq`` and ``_op``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from catalog.schema import Catalog, Table
from operators.runtime.stream.arrow_values import arrow_from_rows
from operators.runtime.stream.changes import DELETE, INSERT, OP_COLUMN, SEQ_COLUMN, Update, UpdateBatch
from operators.runtime.stream.errors import StreamFormatError
from operators.runtime.stream.reader import check_unique_seqs, stream_entries


def write_stream(
    stream_dir: Path | str, catalog: Catalog, updates: Mapping[str, Sequence[Update]] | Iterable[Update]
) -> Path:
    """Write ``updates`` as ``<table>.parquet`` files under ``stream_dir``; return the directory.

    Given a mapping, a table with an empty list still gets a (empty) file. Files of the written
    tables are replaced; a directory that already holds stream files of *other* tables is refused,
    since reading it back would silently mix two streams.
    """
    stream_dir = Path(stream_dir)
    by_table = _group_by_table(catalog, updates)
    check_unique_seqs(
        {table: np.array([u.seq for u in table_updates], np.int64) for table, table_updates in by_table.items()}
    )
    files = {
        stream_dir / f"{name}.parquet": _table_file(catalog.table(name), table_updates, stream_dir / f"{name}.parquet")
        for name, table_updates in by_table.items()
    }
    stream_dir.mkdir(parents=True, exist_ok=True)
    stale = sorted(set(stream_entries(stream_dir, catalog)) - set(by_table))
    if stale:
        raise StreamFormatError(
            f"{stream_dir} already holds stream files for table(s) {', '.join(stale)} that this write does "
            "not replace; write to an empty directory"
        )
    for path, data in files.items():
        pq.write_table(data, path)
    return stream_dir


def _table_file(table: Table, updates: Sequence[Update], path: Path) -> pa.Table:
    ordered = UpdateBatch.in_seq_order(updates)  # _seq values are unique here (write_stream checked)
    bad = next((u for u in ordered if u.op not in (INSERT, DELETE)), None)
    if bad is not None:
        raise StreamFormatError(f"table {table.name}, update with _seq {bad.seq}: _op is {bad.op!r}, must be +1 or -1")
    data = arrow_from_rows([u.row for u in ordered], table, str(path), [u.seq for u in ordered])
    data = data.append_column(pa.field(SEQ_COLUMN, pa.int64(), nullable=False), pa.array([u.seq for u in ordered], pa.int64()))
    return data.append_column(pa.field(OP_COLUMN, pa.int8(), nullable=False), pa.array([u.op for u in ordered], pa.int8()))


def _group_by_table(
    catalog: Catalog, updates: Mapping[str, Sequence[Update]] | Iterable[Update]
) -> dict[str, list[Update]]:
    grouped: dict[str, list[Update]] = defaultdict(list)
    if isinstance(updates, Mapping):
        for table, table_updates in updates.items():
            name = catalog.table(table).name
            grouped[name].extend(table_updates)
            wrong = next((u for u in table_updates if u.table != table and catalog.table(u.table).name != name), None)
            if wrong is not None:
                raise StreamFormatError(f"update with _seq {wrong.seq} of table {wrong.table} is listed under table {name}")
    else:
        for update in updates:
            grouped[update.table].append(update)
    # One catalog lookup per spelling of a table name, not one per update.
    merged: dict[str, list[Update]] = defaultdict(list)
    for table, table_updates in grouped.items():
        merged[catalog.table(table).name].extend(table_updates)
    return dict(merged)
