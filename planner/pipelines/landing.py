"""Landing a stream's changes, part by part, where a pipeline's incremental views read them.

A pipeline's view reads ``changes_dir/<table>/`` (``definitions.landed_changes``): each run takes the
files that arrived since the last one. ``land(stream, changes_dir, part, parts)`` adds the ``part``-th
of ``parts`` slices of a stream-format directory (the changes ranked by ``_seq`` across all tables,
cut into slices of equal count) as one new file per table, so that runs in between apply the stream
in that many steps. Files whose names start with ``_`` or ``.`` are not tables (``stream_entries``).

The files hold the catalog's Arrow types exactly (the stream's values converted by the exact casts
of ``exact_numbers``; a value that would change is refused, naming table, column and file), because
Spark's file source reads them with the tables' Spark schema and would otherwise refuse or convert.
"""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from catalog.schema import Catalog, Table
from operators.runtime.column_types import arrow_type
from operators.runtime.exact_numbers import CAST_ERRORS, exact_cast
from operators.runtime.stream import OP_COLUMN, SEQ_COLUMN, StreamFormatError
from operators.runtime.stream.reader import stream_entries


def land(stream_dir: Path, changes_dir: Path, part: int, parts: int, catalog: Catalog) -> dict[str, int]:
    """Write slice ``part`` (1-based) of ``parts`` of ``stream_dir`` into ``changes_dir``; the number of
    changes landed per table."""
    if not 1 <= part <= parts:
        raise ValueError(f"part {part} of {parts}: a part is 1 to {parts}")
    entries = {name: ds.dataset(path, format="parquet") for name, path in stream_entries(stream_dir, catalog).items()}
    seqs = [entry.to_table(columns=[SEQ_COLUMN]).column(SEQ_COLUMN).cast(pa.int64()) for entry in entries.values()]
    ranked = pa.chunked_array([chunk for column in seqs for chunk in column.chunks], pa.int64()).combine_chunks().sort()
    total = len(ranked)
    low_rank, high_rank = total * (part - 1) // parts, total * part // parts
    if low_rank == high_rank:
        return dict.fromkeys(entries, 0)
    low = ranked[low_rank].as_py()
    high = ranked[high_rank].as_py() if high_rank < total else None
    landed = {}
    for name, entry in entries.items():
        data = _plain(entry.to_table())  # (Arrow filters no string_view column: cast first)
        seqs = data.column(SEQ_COLUMN).cast(pa.int64())
        wanted = pc.greater_equal(seqs, low)
        if high is not None:
            wanted = pc.and_(wanted, pc.less(seqs, high))
        data = data.filter(wanted)
        landed[name] = len(data)
        if len(data):
            _write(changes_dir / name, f"part-{part:05d}-of-{parts:05d}.parquet", _exact(data, catalog.table(name), stream_dir))
    return landed


def _plain(data: pa.Table) -> pa.Table:
    """``data`` with ``string_view`` columns (what some writers, tpchgen-cli among them, use) as strings."""
    return data.cast(pa.schema([pa.field(f.name, pa.string(), f.nullable) if pa.types.is_string_view(f.type) else f
                                for f in data.schema]))


def _exact(data: pa.Table, table: Table, source: Path) -> pa.Table:
    """``data`` with the table's columns in their catalog Arrow types, ``_op`` int32, ``_seq`` int64."""
    targets = [(column.name, arrow_type(column.type)) for column in table.columns]
    targets += [(OP_COLUMN, pa.int32()), (SEQ_COLUMN, pa.int64())]
    columns = []
    for name, target in targets:
        if name not in data.column_names:
            raise StreamFormatError(f"{source}: the changes to table {table.name} have no column {name}")
        try:
            columns.append(exact_cast(data.column(name), target))
        except CAST_ERRORS as err:
            raise StreamFormatError(f"{source}: column {name} of table {table.name} does not convert exactly to "
                                    f"{target}: {err}") from None
    return pa.Table.from_arrays(columns, names=[name for name, _ in targets])


def _write(directory: Path, name: str, data: pa.Table) -> None:
    """Write ``data`` as ``directory/name`` under a hidden name first: Spark's file source lists the
    directory at any moment and must not see half a file."""
    directory.mkdir(parents=True, exist_ok=True)
    staged = directory / f".{name}.tmp"
    pq.write_table(data, staged)
    os.replace(staged, directory / name)
