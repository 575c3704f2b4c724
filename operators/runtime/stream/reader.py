"""Reading a stream directory: whole (``read_stream``) or lazily in batches of the caller's size
(``open_stream``), each table's next chunk read when a batch needs it.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

import attrs
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from catalog.schema import Catalog, Table
from operators.runtime.column_types import arrow_type, column_reads
from operators.runtime.row_fingerprints import arrow_fingerprints
from operators.runtime.row_masks import RowMask
from operators.runtime.stream.arrow_values import (
    ValueMaker,
    cast_column,
    gc_paused,
    rows_and_defects,
    value_maker,
)
from operators.runtime.stream.changes import (
    DELETE,
    INSERT,
    OP_COLUMN,
    SEQ_COLUMN,
    ChangeBatch,
    TableChanges,
    UnreadableUpdate,
    UpdateBatch,
    WrittenRows,
)
from operators.runtime.stream.errors import (
    ARROW_CONVERSION_ERRORS,
    StreamFormatError,
    UnknownStreamTableError,
)


def stream_entries(stream_dir: Path, catalog: Catalog) -> dict[str, Path]:
    """Each table's file or directory in ``stream_dir``; names starting with ``.`` or ``_`` are not data.

    Any other file that is not ``<table>.parquet`` is refused rather than skipped: a stream exported
    as CSV, or a table file misnamed, would otherwise read as a stream without that table's changes.
    """
    entries: dict[str, Path] = {}
    for path in sorted(stream_dir.iterdir()):
        if path.name.startswith((".", "_")):
            continue
        if not (path.is_dir() or path.suffix == ".parquet"):
            raise StreamFormatError(
                f"stream directory {stream_dir} holds {path.name}, which is not a stream file "
                "(<table>.parquet, or a directory <table>/ of Parquet files)"
            )
        name = path.stem if path.is_file() else path.name
        if not catalog.has_table(name):
            raise UnknownStreamTableError(f"stream file {path} is for table {name!r}, which the catalog does not have")
        table = catalog.table(name).name
        if table in entries:
            raise StreamFormatError(f"table {table} has two stream inputs: {entries[table]} and {path}")
        entries[table] = path
    return entries


@attrs.frozen
class StreamContents:
    """What a stream directory holds: its updates in ``_seq`` order, and the rows without a ``_seq``.

    A row whose ``_seq`` is NULL has no place in the order, so it is in no batch; it is kept as an
    ``UnreadableUpdate`` with ``seq`` None and a ``defect`` naming its file row, for the caller's
    policy to stop on or to set aside.
    """

    updates: UpdateBatch
    without_seq: tuple[UnreadableUpdate, ...] = ()


def read_stream(stream_dir: Path | str, catalog: Catalog) -> UpdateBatch:
    """Every update under ``stream_dir``, all tables merged in ``_seq`` order (see module docstring).

    A row without a ``_seq`` is refused here; ``read_stream_contents`` hands such rows back instead.
    """
    contents = read_stream_contents(stream_dir, catalog)
    if contents.without_seq:
        first = contents.without_seq[0]
        raise StreamFormatError(f"table {first.table}: {first.defect}")
    return contents.updates


@gc_paused()
def read_stream_contents(stream_dir: Path | str, catalog: Catalog) -> StreamContents:
    """Every update under ``stream_dir`` in ``_seq`` order as ``Update`` objects, and the rows that have
    no ``_seq``: ``open_stream`` read whole, for tests and small streams (a large one is read batch by
    batch with ``OpenStream.batches`` instead)."""
    stream = open_stream(stream_dir, catalog)
    updates = tuple(update for batch in stream.batches(_READ_ROWS) for update in batch)
    return StreamContents(UpdateBatch._in_order(updates, checked=True), stream.without_seq)


# Rows converted from Arrow to Python tuples at a time: large enough that the per-call costs of
# Arrow vanish, small enough that a chunk of a wide table stays a few tens of MB.
_READ_ROWS = 65_536


def open_stream(stream_dir: Path | str, catalog: Catalog) -> OpenStream:
    """Check a stream directory as a whole and get ready to read it in batches (``OpenStream.batches``).

    Only the ``_seq`` and ``_op`` columns are read here (a few bytes per change), so everything that
    makes the stream unreadable as a whole raises ``StreamFormatError`` before any batch is handed
    out, as before streaming: a file that is not Parquet, missing or unknown columns, a ``_seq``/
    ``_op`` column that is not of an integer type, one ``_seq`` used twice, no stream file at all.
    A data page that is corrupt in a column other than ``_seq``/``_op`` is found only when the batch
    holding it is read; that still raises ``StreamFormatError`` naming the file. The rows without a
    ``_seq`` are read here too (they are rare), into ``OpenStream.without_seq``.
    """
    stream_dir = Path(stream_dir)
    if not stream_dir.is_dir():
        what = "is a file, not a directory" if stream_dir.exists() else "does not exist"
        raise StreamFormatError(f"stream directory {stream_dir} {what}")
    entries = stream_entries(stream_dir, catalog)
    if not entries:
        raise StreamFormatError(
            f"stream directory {stream_dir} holds no stream files (<table>.parquet, or a directory <table>/)"
        )
    sources, seqs = zip(*(_TableSource.open(path, catalog.table(name)) for name, path in entries.items()), strict=True)
    order = check_unique_seqs({source.table.name: table_seqs for source, table_seqs in zip(sources, seqs, strict=True)})
    without_seq = tuple(update for source in sources for update in source.unsequenced_updates())
    return OpenStream(tuple(sources), order, without_seq)


@attrs.frozen
class OpenStream:
    """A stream directory checked as a whole (``open_stream``), read lazily in batches.

    ``order`` holds, for each change in ``_seq`` order, the index of its table in ``sources``: that is
    all a batch needs to know to take the next changes of each table (each table's changes are read
    in ``_seq`` order, see ``_TableSource``), so the whole stream is never in memory as Python objects.
    """

    sources: tuple[_TableSource, ...]
    order: np.ndarray
    without_seq: tuple[UnreadableUpdate, ...]

    def __len__(self) -> int:
        """The number of changes that have a ``_seq`` (the rows without one are in ``without_seq``)."""
        return len(self.order)

    def batches(self, size: int, tables: Collection[str] | None = None,
                columns: Mapping[str, Collection[str]] | None = None,
                masks: Mapping[str, RowMask] | None = None) -> Iterator[ChangeBatch]:
        """Consecutive batches of ``size`` changes (the last one shorter) in ``_seq`` order, read as they
        are made (so in order, once). Given ``tables``, only their changes are read (``ChangeBatch``): a
        query's validator ignores the changes of the tables it does not read, so converting them to
        Python values would be wasted. Given ``columns``, a table named there has only those columns
        read into Python values, the others None in its rows (still checked, and kept as written for
        ``TableChanges.update``): for a caller whose every reader of the rows needs only those. Given
        ``masks``, a table named there has its read columns but ``RowMask.always`` made only at the rows
        its mask keeps (``row_masks``), None at the others."""
        if size < 1:
            raise ValueError(f"batch size must be at least 1, got {size}")
        columns, masks = columns or {}, masks or {}
        cursors = [_TableCursor(source, columns.get(source.table.name), masks.get(source.table.name))
                   if tables is None or source.table.name in tables else None
                   for source in self.sources]
        if size == 1:
            yield from self._one_by_one(cursors)
            return
        for start in range(0, len(self.order), size):
            order = self.order[start : start + size]
            counts = np.bincount(order, minlength=len(cursors)).tolist()
            yield ChangeBatch(tuple(_taken(cursor, count) for cursor, count in zip(cursors, counts, strict=True)), order)

    def _one_by_one(self, cursors: list[_TableCursor | None]) -> Iterator[ChangeBatch]:
        """``batches(1)``: per change, its table's ``TableChanges.one`` between the other tables' empty
        changes (made once: nothing mutates a batch) and an order of one int. The general path's
        per-batch numpy slice, ``bincount`` and empty ``TableChanges`` of every table cost 8 µs a change."""
        empty = tuple(None if cursor is None else cursor.empty() for cursor in cursors)
        around = [(empty[:i], empty[i + 1 :]) for i in range(len(cursors))]
        orders = [(i,) for i in range(len(cursors))]
        for start in range(0, len(self.order), _READ_ROWS):
            for table in self.order[start : start + _READ_ROWS].tolist():
                cursor = cursors[table]
                before, after = around[table]
                changes = None if cursor is None else cursor.take_one()
                yield ChangeBatch((*before, changes, *after), orders[table])


def _taken(cursor: _TableCursor | None, count: int) -> TableChanges | None:
    if cursor is None:
        return None
    return cursor.take(count) if count else cursor.empty()


@attrs.frozen
class _TableSource:
    """One table's stream input, opened: its Parquet files, the rows whose ``_seq`` is NULL (by row
    number over ``files`` in turn), and whether the others are in ``_seq`` order as they lie."""

    path: Path
    table: Table
    files: tuple[Path, ...]
    unsequenced: np.ndarray
    in_order: bool

    @classmethod
    def open(cls, path: Path, table: Table) -> tuple[_TableSource, np.ndarray]:
        """The opened input and the ``_seq`` of its rows that have one, in file order."""
        where = f"table {table.name} ({path})"
        files = tuple(sorted(p for p in path.rglob("*") if p.is_file() and not _hidden(p, path))) if path.is_dir() else (path,)
        if not files:
            raise StreamFormatError(f"{where}: the directory holds no Parquet files")
        seq_parts, op_parts = [], []
        for file in files:
            data = _read_parquet(file, where, columns=(SEQ_COLUMN, OP_COLUMN), table=table)
            seq_parts.append(_integer_column(data[SEQ_COLUMN], SEQ_COLUMN, where))
            op_parts.append(_integer_column(data[OP_COLUMN], OP_COLUMN, where))
        seqs = pa.chunked_array([chunk for part in seq_parts for chunk in part.chunks], pa.int64())
        if seqs.null_count:
            has_seq = seqs.is_valid().to_numpy(zero_copy_only=False)
            unsequenced, seqs = np.flatnonzero(~has_seq), seqs.filter(pa.array(has_seq))
        else:
            unsequenced = np.empty(0, np.int64)
        values = seqs.to_numpy()
        return cls(path, table, files, unsequenced, bool(np.all(values[1:] > values[:-1]))), values

    def chunks(self) -> Iterator[pa.Table]:
        """The rows that have a ``_seq``, in ``_seq`` order, as Arrow tables of at most ``_READ_ROWS``.

        A file written by ``write_stream`` is in ``_seq`` order and is streamed; a table whose rows
        are not is read whole and sorted, so its memory is that of the table (never of the stream).
        """
        if not self.in_order:
            data = pa.concat_tables(self._file_chunks())
            data = data.filter(data[SEQ_COLUMN].is_valid())
            data = data.take(pc.sort_indices(data[SEQ_COLUMN]))
            for start in range(0, len(data), _READ_ROWS):
                yield data.slice(start, _READ_ROWS)
            return
        for data in self._file_chunks():
            yield data.filter(data[SEQ_COLUMN].is_valid()) if data[SEQ_COLUMN].null_count else data

    def _file_chunks(self) -> Iterator[pa.Table]:
        where = f"table {self.table.name} ({self.path})"
        for file in self.files:
            try:
                for batch in pq.ParquetFile(file).iter_batches(batch_size=_READ_ROWS):
                    yield pa.Table.from_batches([batch])
            except (*ARROW_CONVERSION_ERRORS, OSError) as error:
                raise _unreadable(where, file, error) from None

    def unsequenced_updates(self) -> Iterator[UnreadableUpdate]:
        """The rows whose ``_seq`` is NULL, with their values as read and a defect naming the file row."""
        if not len(self.unsequenced):
            return
        data = pa.concat_tables(self._file_chunks()).take(pa.array(self.unsequenced))
        rows, _, _ = rows_and_defects(data, self.table, str(self.path))
        for row_number, row, op in zip(self.unsequenced.tolist(), rows, data[OP_COLUMN].to_pylist(), strict=True):
            yield UnreadableUpdate(
                None, self.table.name, op, row,
                f"_seq is NULL (row {row_number} of {self.path}), so the change has no place in the stream",
            )


def _hidden(path: Path, root: Path) -> bool:
    return any(part.startswith((".", "_")) for part in path.relative_to(root).parts)


def _read_parquet(file: Path, where: str, columns: Sequence[str], table: Table) -> pa.Table:
    """``columns`` of one Parquet file, after checking its columns are exactly ``table``'s plus
    ``_seq`` and ``_op``."""
    try:
        parquet = pq.ParquetFile(file)
        present = set(parquet.schema_arrow.names)
        missing = [name for name in (*table.column_names, SEQ_COLUMN, OP_COLUMN) if name not in present]
        if missing:
            raise StreamFormatError(f"{where}: missing column(s) {', '.join(missing)}")
        # a column of a type spark-ivm lacks may be there: it is not read (nor decoded)
        extra = sorted(present - {*table.column_names, *(c.name for c in table.unsupported_columns), SEQ_COLUMN, OP_COLUMN})
        if extra:
            raise StreamFormatError(f"{where}: unexpected column(s) {', '.join(extra)} (not in the catalog)")
        return parquet.read(columns=list(columns))
    except (*ARROW_CONVERSION_ERRORS, OSError) as error:
        raise _unreadable(where, file, error) from None


def _unreadable(where: str, file: Path, error: Exception) -> StreamFormatError:
    return StreamFormatError(f"{where}: not a readable Parquet file: {file}: {_one_line(error)}")


class ArrowReady(NamedTuple):
    """A chunk of a table's stream rows as read (``data``), and what can be done with it without
    Python objects (Arrow and numpy work that releases the GIL): its columns cast to their catalog types, the rows'
    fingerprints and the makers of the read columns' Python values (``value_maker``; None for a
    column not read), all three None when a column does not cast (the reader then finds the
    defects); its ``_seq`` (numpy) and ``_op`` (int64, NULLs kept) and where ``_op`` is neither +1
    nor -1 (``bad_ops``, positions)."""

    data: pa.Table
    casts: list[pa.ChunkedArray] | None
    fingerprints: list[bytes] | None
    makers: list[ValueMaker | None] | None
    seqs: np.ndarray
    ops: pa.ChunkedArray
    bad_ops: np.ndarray


def _arrow_ready(data: pa.Table, table: Table, where: str = "", read: Collection[str] | None = None,
                 mask: RowMask | None = None) -> ArrowReady:
    """``data`` made ready (``ArrowReady``) for the rows of ``table``, of which ``read`` are read into
    Python values (None: all), some only at the rows ``mask`` keeps; ``where`` names the input in an error."""
    seqs = _integer_column(data[SEQ_COLUMN], SEQ_COLUMN, where).to_numpy()
    ops = _integer_column(data[OP_COLUMN], OP_COLUMN, where)
    bad_ops = np.flatnonzero(pc.invert(pc.is_in(ops, pa.array([INSERT, DELETE]))).to_numpy(zero_copy_only=False))
    casts = []
    for column in table.columns:
        if column.name not in data.column_names or not column_reads(column, data[column.name].type):
            return ArrowReady(data, None, None, None, seqs, ops, bad_ops)
        try:
            casts.append(cast_column(data[column.name], column.type))
        except ARROW_CONVERSION_ERRORS:
            return ArrowReady(data, None, None, None, seqs, ops, bad_ops)
    kept, thin = (mask and mask.thinning(table, casts)) or (None, ())
    makers = [value_maker(cast, column.type, kept if column.name in thin else None)
              if read is None or column.name in read else None for column, cast in zip(table.columns, casts, strict=True)]
    return ArrowReady(data, casts, arrow_fingerprints(casts), makers, seqs, ops, bad_ops)


class _TableCursor:
    """Reads one table's changes in ``_seq`` order and hands them out ``take(n)`` at a time; ``read``:
    the columns to read into Python values (None: all of them), ``mask``: of which rows (``RowMask``)."""

    def __init__(self, source: _TableSource, read: Collection[str] | None = None, mask: RowMask | None = None):
        self._source = source
        self._read = None if read is None or set(source.table.column_names) <= set(read) else frozenset(read)
        self._in_part = self._read is not None or mask is not None  # rows kept as written too (WrittenRows)
        # Decoded, cast and fingerprinted when the caller needs the chunk, on the caller's thread. A
        # read-ahead thread per table was measured to cost more than it overlapped on two cores: its
        # Arrow buffers, allocated there and freed here, were zeroed anew by the kernel (huge pages),
        # and the process ran on 0.98 of a CPU all the same (RESULTS.md, issue 13, "the reader's thread").
        where, read = f"table {source.table.name} ({source.path})", self._read
        self._chunks = (_arrow_ready(data, source.table, where, read, mask) for data in source.chunks())
        self._chunk = self.empty()  # converted; handed out up to _offset
        self._offset = 0

    def empty(self) -> TableChanges:
        written = WrittenRows(self._source.table, ()) if self._in_part else None
        return TableChanges(self._source.table.name, [], [], [], {}, [], written)

    def take(self, count: int) -> TableChanges:
        parts: list[TableChanges] = []
        while count:
            if self._offset == len(self._chunk):
                self._chunk, self._offset = self._convert(next(self._chunks)), 0
            part = self._chunk.slice(self._offset, self._offset + count)
            parts.append(part)
            count -= len(part)
            self._offset += len(part)
        return parts[0] if len(parts) == 1 else TableChanges.concatenate(parts)

    def take_one(self) -> TableChanges:
        """``take(1)``, without the list of parts."""
        offset, chunk = self._offset, self._chunk
        while offset == len(chunk.rows):  # (a chunk can be empty)
            self._chunk = chunk = self._convert(next(self._chunks))
            offset = 0
        self._offset = offset + 1
        return chunk.one(offset)

    @gc_paused()
    def _convert(self, ready: ArrowReady) -> TableChanges:
        """One chunk of rows as Python values (see ``rows_and_defects``), with their ``_seq`` and ``_op``
        and why each change that cannot be read is wrong."""
        data, table, ops = ready.data, self._source.table, ready.ops
        rows, defects, casts = rows_and_defects(data, table, str(self._source.path), self._read, ready.casts,
                                                 ready.makers)
        # The change's own _op is the first thing wrong with it, before any column.
        for row in ready.bad_ops.tolist():
            op = ops[row].as_py()
            defects[row] = ("_op is NULL" if op is None else f"_op is {op}") + ", must be +1 (insert) or -1 (delete)"
        op_values = ops.to_pylist() if ops.null_count else ops.to_numpy().tolist()
        fingerprints = _fingerprints(ready, casts, table, defects)
        written = WrittenRows(table, ((data, 0, len(data)),)) if self._in_part else None
        return TableChanges(table.name, ready.seqs, op_values, rows, defects, fingerprints, written)


def _fingerprints(ready: ArrowReady, casts: list | None, table: Table, defects: Mapping[int, str]) -> list[bytes | None]:
    """The fingerprints of a chunk's changes, None at each defective one. They are made here, never
    left to the validator, whose fingerprints of rows read in part (``OpenStream.batches``'s
    ``columns``) would not be those of the whole rows: a row inserted in a chunk with a wrong change
    would not match its delete in a later chunk."""
    if not defects:  # every value cast exactly: the casts the reading made are the fingerprints' input
        return ready.fingerprints or arrow_fingerprints(casts)
    if ready.fingerprints is not None:  # every column cast (the defects are _op's or NULLs'): keep them
        fingerprints: list[bytes | None] = list(ready.fingerprints)
        for position in defects:
            fingerprints[position] = None
        return fingerprints
    readable = np.ones(len(ready.data), dtype=bool)
    readable[list(defects)] = False
    data = ready.data.filter(pa.array(readable))
    # a change without a defect has every value castable, and NULL in a column written as another type
    made = iter(arrow_fingerprints([cast_column(data[c.name], c.type) if column_reads(c, data[c.name].type)
                                    else pa.nulls(len(data), arrow_type(c.type)) for c in table.columns]))
    return [None if position in defects else next(made) for position in range(len(ready.data))]


def _integer_column(column: pa.ChunkedArray, name: str, where: str) -> pa.ChunkedArray:
    """``_seq`` or ``_op`` as int64 (NULLs kept): a column of another type makes no stream at all."""
    if not pa.types.is_integer(column.type):
        raise StreamFormatError(f"{where}: column {name} has type {column.type}, expected an integer type")
    try:
        return column.cast(pa.int64())
    except pa.ArrowInvalid as error:
        raise StreamFormatError(f"{where}: column {name} does not fit int64: {error}") from None


def _one_line(error: Exception) -> str:
    return " ".join(str(error).split())


def check_unique_seqs(seqs_by_table: Mapping[str, np.ndarray]) -> np.ndarray:
    """Raise naming the ``_seq`` and its table(s) if one ``_seq`` value occurs twice; else return, for
    each ``_seq`` in ascending order, the index of its table in ``seqs_by_table`` (the stream's merge
    order: one sort serves the check and the merge)."""
    names = list(seqs_by_table)
    if not names:
        return np.empty(0, np.int16)
    seqs = np.concatenate([seqs_by_table[name] for name in names])
    table_ids = np.repeat(np.arange(len(names), dtype=np.int16), [len(seqs_by_table[name]) for name in names])
    if len(seqs) == 0:
        return table_ids
    order = np.argsort(seqs, kind="stable")
    ordered = seqs[order]
    repeats = np.flatnonzero(ordered[1:] == ordered[:-1])
    if not len(repeats):
        return table_ids[order]
    first, second = (int(order[repeats[0] + k]) for k in (0, 1))
    tables = [names[table_ids[i]] for i in (first, second)]
    where = f"twice in table {tables[0]}" if tables[0] == tables[1] else f"in table {tables[0]} and in table {tables[1]}"
    raise StreamFormatError(f"duplicate _seq {seqs[first]}: {where}")
