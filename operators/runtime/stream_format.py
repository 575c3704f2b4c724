"""The change stream on disk: one Parquet file (or directory) per table, rows tagged ``_seq`` and ``_op``.

A stream directory holds ``<table>.parquet`` or ``<table>/`` for each table that changes; its rows carry
the table's columns plus ``_seq`` (int64, one order across *all* tables, gaps allowed) and ``_op``
(+1 insert, −1 delete, any integer type). Reading merges the tables into one ``UpdateBatch`` in
``_seq`` order, each row a tuple of Python values in the catalog's column order (DECIMAL as
decimal.Decimal, exact). Every check names the table, the row (counted from 0 in file order) and what is wrong, because
a bad stream is user input and the user has to find the offending row.

Conversion goes column by column through Arrow and numpy: the per-cell Python work is only building
the final tuples, so about a million updates read or write in a few seconds.
"""

from __future__ import annotations

import gc
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from itertools import islice
from operator import attrgetter, lt
from pathlib import Path
from typing import overload

import attrs
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from catalog import types
from catalog.schema import Catalog, Table

SEQ_COLUMN = "_seq"
OP_COLUMN = "_op"
INSERT, DELETE = 1, -1

_ARROW_TYPES = {
    types.INT: pa.int32(),
    types.BIGINT: pa.int64(),
    types.DOUBLE: pa.float64(),
    types.STRING: pa.string(),
    types.DATE: pa.date32(),
    types.BOOLEAN: pa.bool_(),
}


def arrow_type(dtype: types.DataType) -> pa.DataType:
    """The Arrow type a column of Spark type ``dtype`` is stored as (DECIMAL as decimal128: exact)."""
    if isinstance(dtype, types.DecimalType):
        return pa.decimal128(dtype.precision, dtype.scale)
    try:
        return _ARROW_TYPES[dtype]
    except KeyError:
        raise StreamFormatError(f"type {dtype} has no stream-format column type") from None


_ARROW_CONVERSION_ERRORS = (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OverflowError)


class StreamFormatError(ValueError):
    """A stream file is malformed; the message names the table, the row and the reason."""


@attrs.frozen
class Update:
    """One change of a base table: ``op`` is +1 (insert) or −1 (delete) of ``row`` at position ``seq``."""

    seq: int
    table: str
    op: int
    row: tuple


@attrs.frozen
class UpdateBatch(Sequence[Update]):
    """Updates of base tables in ``_seq`` order, and whether their rows' column types are known good.

    This is the one change representation from the stream reader to the validator, and the one place
    that keeps ``_seq`` order: constructing a batch refuses updates out of order (a stream is an
    order), ``in_seq_order`` sorts what a caller hands in. ``checked`` is True when every row's
    column types were checked against the catalog column by column as it was read (``read_stream``,
    ``load_tables``) or built to the schema by a generator; the validator then skips its per-row
    type check, a third of its time. A slice of a batch is a batch with the same ``checked``.
    """

    updates: tuple[Update, ...] = attrs.field(converter=tuple)
    checked: bool = False

    def __attrs_post_init__(self) -> None:
        later = _first_out_of_order(self.updates)
        if later is not None:
            update, previous = self.updates[later], self.updates[later - 1].seq
            raise StreamFormatError(f"updates are not in _seq order: _seq {update.seq} ({update.table}) after {previous}")

    @classmethod
    def in_seq_order(cls, updates: Iterable[Update]) -> UpdateBatch:
        """``updates`` (rows not checked) sorted by ``_seq``; an ``UpdateBatch`` is returned as it is."""
        if isinstance(updates, UpdateBatch):
            return updates
        updates = tuple(updates)
        if _first_out_of_order(updates) is not None:
            updates = tuple(sorted(updates, key=attrgetter("seq")))
        return cls._in_order(updates, checked=False)

    @classmethod
    def _in_order(cls, updates: tuple[Update, ...], checked: bool) -> UpdateBatch:
        """A batch of updates already known to be in ``_seq`` order (sorted, or a slice of a batch):
        constructing it does not scan them a second time."""
        batch = object.__new__(cls)
        object.__setattr__(batch, "updates", updates)
        object.__setattr__(batch, "checked", checked)
        return batch

    def __len__(self) -> int:
        return len(self.updates)

    @overload
    def __getitem__(self, index: int) -> Update: ...

    @overload
    def __getitem__(self, index: slice) -> UpdateBatch: ...

    def __getitem__(self, index: int | slice) -> Update | UpdateBatch:
        if isinstance(index, slice):
            return UpdateBatch._in_order(self.updates[index], self.checked)
        return self.updates[index]

    def __iter__(self) -> Iterator[Update]:
        return iter(self.updates)


class CheckedTables(dict[str, list[tuple]]):
    """Rows of base tables (by table name) whose column types were checked as they were read.

    ``load_tables`` returns one; a stream built of its rows is a ``checked`` ``UpdateBatch``, so the
    knowledge travels with the rows instead of as a flag beside them.
    """


def _first_out_of_order(updates: Sequence[Update]) -> int | None:
    """The position of the first update whose ``_seq`` is not above its predecessor's; None if none."""
    seqs = [update.seq for update in updates]
    if all(map(lt, seqs, islice(seqs, 1, None))):  # the common case, at C speed
        return None
    return next(i for i in range(1, len(seqs)) if seqs[i] <= seqs[i - 1])


@contextmanager
def gc_paused() -> Iterator[None]:
    """Build millions of (acyclic) tuples without the cyclic GC rescanning them all the while.

    With a million rows already alive, the collector's full passes made reading a stream 3-4x
    slower; nothing built here can form a cycle, so nothing is lost by pausing it.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def arrow_schema(table: Table) -> pa.Schema:
    """The Arrow schema of ``table``'s columns (no ``_seq``/``_op``), nullability from the catalog."""
    return pa.schema([pa.field(c.name, arrow_type(c.type), nullable=c.nullable) for c in table.columns])


@gc_paused()
def rows_from_arrow(data: pa.Table, table: Table, source: str) -> list[tuple]:
    """``table``'s columns of ``data`` as tuples of Python values in catalog order.

    ``source`` (a file name) goes into error messages. Columns of ``data`` that the catalog does
    not know are ignored here; callers that must reject them check beforehand.
    """
    missing = [name for name in table.column_names if name not in data.column_names]
    if missing:
        raise StreamFormatError(f"table {table.name} ({source}): missing column(s) {', '.join(missing)}")
    columns = [_python_values(data[c.name], c.type, c.nullable, table.name, c.name, source) for c in table.columns]
    return list(zip(*columns, strict=True))


def _python_values(
    column: pa.ChunkedArray, sql_type: types.DataType, nullable: bool, table: str, name: str, source: str
) -> list:
    where = f"table {table} ({source}), column {name}"
    try:
        column = _cast(column, sql_type)
    except _ARROW_CONVERSION_ERRORS as error:
        row = next((i for i in range(len(column)) if not _casts(column.slice(i, 1), sql_type)), None)
        at_row = "" if row is None else f", row {row}"
        raise StreamFormatError(f"{where}{at_row}: cannot read {column.type} as {sql_type}: {error}") from None
    if column.null_count:
        if not nullable:
            raise StreamFormatError(f"{where}, row {_first_true(column.is_null())}: NULL in a NOT NULL column")
        return column.to_pylist()
    if sql_type == types.STRING or isinstance(sql_type, types.DecimalType):
        return column.to_pylist()  # decimal128 → decimal.Decimal with the column's scale: exact
    return column.to_numpy().tolist()


def _cast(column: pa.ChunkedArray, sql_type: types.DataType) -> pa.ChunkedArray | pa.Array:
    return column.cast(arrow_type(sql_type))


def _casts(column: pa.ChunkedArray, sql_type: types.DataType) -> bool:
    try:
        _cast(column, sql_type)
    except _ARROW_CONVERSION_ERRORS:
        return False
    return True


def _first_true(mask: pa.ChunkedArray | pa.Array) -> int:
    return int(np.flatnonzero(mask.to_numpy(zero_copy_only=False))[0])


def arrow_from_rows(rows: Sequence[tuple], table: Table, source: str) -> pa.Table:
    """Tuples in catalog column order as an Arrow table with ``arrow_schema(table)``."""
    width = len(table.columns)
    bad = next((i for i, row in enumerate(rows) if len(row) != width), None)
    if bad is not None:
        raise StreamFormatError(
            f"table {table.name} ({source}), row {bad}: has {len(rows[bad])} values, the table has {width} columns"
        )
    schema = arrow_schema(table)
    arrays = [_arrow_values([row[i] for row in rows], field, table.name, source) for i, field in enumerate(schema)]
    return pa.Table.from_arrays(arrays, schema=schema)


def _arrow_values(values: list, field: pa.Field, table: str, source: str) -> pa.Array:
    where = f"table {table} ({source}), column {field.name}"
    try:
        array = pa.array(values, field.type)
    except _ARROW_CONVERSION_ERRORS:
        row = next(i for i, value in enumerate(values) if not _converts(value, field.type))
        raise StreamFormatError(f"{where}, row {row}: value {values[row]!r} is not a {field.type}") from None
    if array.null_count and not field.nullable:
        raise StreamFormatError(f"{where}, row {_first_true(array.is_null())}: NULL in a NOT NULL column")
    return array


def _converts(value: object, arrow_type: pa.DataType) -> bool:
    try:
        pa.array([value], arrow_type)
    except _ARROW_CONVERSION_ERRORS:
        return False
    return True


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
    _check_unique_seqs(
        {table: np.array([u.seq for u in table_updates], np.int64) for table, table_updates in by_table.items()}
    )
    files = {
        stream_dir / f"{name}.parquet": _table_file(catalog.table(name), table_updates, stream_dir / f"{name}.parquet")
        for name, table_updates in by_table.items()
    }
    stream_dir.mkdir(parents=True, exist_ok=True)
    stale = sorted(set(_stream_entries(stream_dir, catalog)) - set(by_table))
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
    data = arrow_from_rows([u.row for u in ordered], table, str(path))
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


def _stream_entries(stream_dir: Path, catalog: Catalog) -> dict[str, Path]:
    """Each table's file or directory in ``stream_dir``; names starting with ``.`` or ``_`` are not data."""
    entries: dict[str, Path] = {}
    for path in sorted(stream_dir.iterdir()):
        if path.name.startswith((".", "_")) or not (path.is_dir() or path.suffix == ".parquet"):
            continue
        name = path.stem if path.is_file() else path.name
        if not catalog.has_table(name):
            raise StreamFormatError(f"stream file {path} is for table {name!r}, which the catalog does not have")
        table = catalog.table(name).name
        if table in entries:
            raise StreamFormatError(f"table {table} has two stream inputs: {entries[table]} and {path}")
        entries[table] = path
    return entries


@gc_paused()
def read_stream(stream_dir: Path | str, catalog: Catalog) -> UpdateBatch:
    """Every update under ``stream_dir``, all tables merged in ``_seq`` order (see module docstring).

    Each column was cast to its catalog type and NULL keys refused as it was read, so the batch is
    ``checked``.
    """
    stream_dir = Path(stream_dir)
    if not stream_dir.is_dir():
        raise StreamFormatError(f"stream directory {stream_dir} does not exist")
    tables, seqs, ops, rows = [], [], [], []
    for table_name, path in _stream_entries(stream_dir, catalog).items():
        table_seqs, table_ops, table_rows = _read_table(path, catalog.table(table_name))
        tables.append(table_name)
        seqs.append(table_seqs)
        ops.append(table_ops)
        rows.append(table_rows)
    if not tables:
        return UpdateBatch((), checked=True)
    _check_unique_seqs(dict(zip(tables, seqs, strict=True)))
    all_seqs = np.concatenate(seqs)
    order = np.argsort(all_seqs, kind="stable")
    table_ids = np.repeat(np.arange(len(tables)), [len(s) for s in seqs])[order].tolist()
    all_rows = [row for table_rows in rows for row in table_rows]
    updates = tuple(
        Update(seq, tables[table_id], op, all_rows[index])
        for seq, table_id, op, index in zip(
            all_seqs[order].tolist(), table_ids, np.concatenate(ops)[order].tolist(), order.tolist(), strict=True
        )
    )
    return UpdateBatch(updates, checked=True)


def _read_table(path: Path, table: Table) -> tuple[np.ndarray, np.ndarray, list[tuple]]:
    data = pq.read_table(path)
    where = f"table {table.name} ({path})"
    present = set(data.column_names)
    missing = [name for name in (*table.column_names, SEQ_COLUMN, OP_COLUMN) if name not in present]
    if missing:
        raise StreamFormatError(f"{where}: missing column(s) {', '.join(missing)}")
    extra = sorted(present - {*table.column_names, SEQ_COLUMN, OP_COLUMN})
    if extra:
        raise StreamFormatError(f"{where}: unexpected column(s) {', '.join(extra)} (not in the catalog)")
    seqs = _integer_column(data[SEQ_COLUMN], SEQ_COLUMN, where)
    ops = _integer_column(data[OP_COLUMN], OP_COLUMN, where)
    bad_ops = np.flatnonzero((ops != INSERT) & (ops != DELETE))
    if len(bad_ops):
        row = int(bad_ops[0])
        raise StreamFormatError(f"{where}, row {row}: _op is {ops[row]}, must be +1 (insert) or -1 (delete)")
    return seqs, ops.astype(np.int8), rows_from_arrow(data, table, str(path))


def _integer_column(column: pa.ChunkedArray, name: str, where: str) -> np.ndarray:
    if not pa.types.is_integer(column.type):
        raise StreamFormatError(f"{where}: column {name} has type {column.type}, expected an integer type")
    if column.null_count:
        raise StreamFormatError(f"{where}, row {_first_true(column.is_null())}: {name} is NULL")
    try:
        return column.cast(pa.int64()).to_numpy()
    except pa.ArrowInvalid as error:
        raise StreamFormatError(f"{where}: column {name} does not fit int64: {error}") from None


def _check_unique_seqs(seqs_by_table: Mapping[str, np.ndarray]) -> None:
    """Raise naming both places if one ``_seq`` value occurs twice, within a table or across tables."""
    names = list(seqs_by_table)
    if not names:
        return
    seqs = np.concatenate([seqs_by_table[name] for name in names])
    if len(seqs) == 0:
        return
    order = np.argsort(seqs, kind="stable")
    repeats = np.flatnonzero(seqs[order][1:] == seqs[order][:-1])
    if not len(repeats):
        return
    table_ids = np.repeat(np.arange(len(names)), [len(seqs_by_table[name]) for name in names])
    starts = np.concatenate([[0], np.cumsum([len(seqs_by_table[name]) for name in names])])
    first, second = (int(order[repeats[0] + k]) for k in (0, 1))
    places = [f"table {names[table_ids[i]]} row {i - starts[table_ids[i]]}" for i in (first, second)]
    raise StreamFormatError(f"duplicate _seq {seqs[first]}: in {places[0]} and in {places[1]}")


def batches(updates: UpdateBatch | Iterable[Update], size: int) -> Iterator[UpdateBatch]:
    """Consecutive chunks of at most ``size`` updates, refusing input that is not in ``_seq`` order.

    Chunks of an ``UpdateBatch`` keep its ``checked``; other input is unchecked.
    """
    if size < 1:
        raise ValueError(f"batch size must be at least 1, got {size}")
    stream = updates if isinstance(updates, UpdateBatch) else UpdateBatch(tuple(updates))
    for start in range(0, len(stream), size):
        yield stream[start : start + size]
