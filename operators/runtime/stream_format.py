"""The change stream on disk: one Parquet file (or directory) per table, rows tagged ``_seq`` and ``_op``.

A stream directory holds ``<table>.parquet`` or ``<table>/`` for each table that changes; its rows carry
the table's columns plus ``_seq`` (int64, one order across *all* tables, gaps allowed) and ``_op``
(+1 insert, −1 delete, any integer type). Reading merges the tables in ``_seq`` order, each row a
tuple of Python values in the catalog's column order (DECIMAL as decimal.Decimal, exact): lazily, in
``ChangeBatch``es of the caller's size that hold each table's changes column by column
(``open_stream``; ``ivm run`` at TPC-H SF 1 holds a few batches, not 16 M changes), or whole, as one
``UpdateBatch`` of ``Update`` objects (``read_stream``, for tests and small streams). A bad stream is user input and the user has to find the offending change, so what is wrong
with one change (a value of the wrong type, a NULL key, an ``_op`` other than +1/-1) travels with
that update to the validator, which names its table, ``_seq`` and column and applies the run's
invalid-input policy; only what makes the stream unreadable as a whole is raised here, naming the
file. No value is cast lossily: ``column_types`` says which Arrow types each column type reads.

Conversion goes column by column through Arrow and numpy: the per-cell Python work is only building
the final tuples (and a value of a column that repeats its values is made once, ``_python_values``),
so about a million updates read or write in a few seconds. ``OpenStream.batches`` reads each table's
next chunk when a batch needs it, on the caller's thread (a read-ahead thread was measured to cost
more than it saved on two cores).
"""

from __future__ import annotations

import gc
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, date, datetime
from decimal import Decimal
from itertools import islice, repeat
from operator import attrgetter, lt
from pathlib import Path
from typing import ClassVar, NamedTuple, overload

import attrs
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from catalog import types
from catalog.literals import sql_literal
from catalog.schema import Catalog, Column, Table
from operators.doubles import canonical_values
from operators.runtime.column_types import arrow_type, column_reads, value_defect
from operators.runtime.exact_numbers import (
    casts_exactly,
    checked_by_value,
    exact_cast,
    exact_number,
    inexact_floats,
)
from operators.runtime.row_fingerprints import arrow_fingerprints
from operators.runtime.row_masks import RowMask, made_at

SEQ_COLUMN = "_seq"
OP_COLUMN = "_op"
INSERT, DELETE = 1, -1



_ARROW_CONVERSION_ERRORS = (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OverflowError)


class StreamFormatError(ValueError):
    """A stream is unreadable as a whole (or a write is refused); the message names the file or table."""


class UnknownStreamTableError(StreamFormatError):
    """A stream holds a file of a table the catalog does not have (``ivm run`` hints at --catalog)."""


@attrs.frozen
class Update:
    """One change of a base table: ``op`` is +1 (insert) or −1 (delete) of ``row`` at position ``seq``.

    ``defect`` is None: the change was read as one. See ``UnreadableUpdate`` for the others.
    """

    seq: int
    table: str
    op: int
    row: tuple
    defect: ClassVar[str | None] = None  # a class attribute: a fifth field costs every read update 15%


@attrs.frozen
class UnreadableUpdate(Update):
    """A change the stream reader could not read as one, and why (``defect``: a value not of its
    column's type, a NULL key, ``_op`` not +1/-1, a NULL ``_seq``). Its values are as written; the
    validator rejects it with that reason under the run's invalid-input policy. ``op`` is None
    for a NULL ``_op``; ``seq`` is None only for a NULL ``_seq`` (``StreamContents.without_seq``),
    never in an ``UpdateBatch``.
    """

    defect: str  # (seq and op are not redeclared as Optional here: that would reorder the fields)


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


@attrs.define  # not frozen: a frozen class's __init__ costs 0.7 µs, the reader makes one per table and batch
class TableChanges:
    """One table's changes of a batch, column by column, in ``_seq`` order: the form the stream reader
    makes and the validator checks, with no object per change (``update`` builds one on demand, for
    an error message or a rejects file).

    ``defects`` says, by position, why the reader could not read a change (see ``UnreadableUpdate``);
    such a change keeps its values as written. ``fingerprints`` are the rows' fingerprints
    (``row_fingerprints``), which the reader computes on its Arrow columns for every readable change
    (None at a defective one); None (for changes not read from a stream) leaves them to the validator.

    ``seqs``: a list, or (as the stream reader makes them) an int64 numpy array, read only to build an
    ``Update``: no Python int per change is made for them.

    ``written`` is None when ``rows`` hold every column. A reader told to read only some columns
    (``OpenStream.batches``'s ``columns``) leaves the others None in ``rows`` and keeps the Arrow
    rows here, so ``update`` still shows a change as it was written (an error message, a rejects file).
    """

    table: str
    seqs: Sequence[int]
    ops: list[int | None]
    rows: list[tuple]
    defects: dict[int, str]
    fingerprints: list[bytes] | None = None
    written: WrittenRows | None = None

    def __len__(self) -> int:
        return len(self.rows)

    def update(self, position: int) -> Update:
        """The change at ``position`` as one ``Update`` (an ``UnreadableUpdate`` when it has a defect),
        with every column of its row as written."""
        row = self.rows[position] if self.written is None else self.written.row(position)
        seq = self.seqs[position]
        values = (int(seq) if isinstance(seq, np.integer) else seq, self.table, self.ops[position], row)
        defect = self.defects.get(position)
        return Update(*values) if defect is None else UnreadableUpdate(*values, defect)

    def one(self, position: int) -> TableChanges:
        """The change at ``position`` alone: ``slice(position, position + 1)`` for a batch of one change,
        without the slice's dict comprehension over the chunk's defects and its list slices."""
        defects, written, fingerprints = self.defects, self.written, self.fingerprints
        defect = defects.get(position) if defects else None
        if written is not None:
            written = written.one(position)
        return TableChanges(self.table, self.seqs[position : position + 1], [self.ops[position]], [self.rows[position]],
                            {} if defect is None else {0: defect},
                            None if fingerprints is None else [fingerprints[position]], written)

    def slice(self, start: int, stop: int) -> TableChanges:
        defects = {row - start: reason for row, reason in self.defects.items() if start <= row < stop}
        fingerprints = None if self.fingerprints is None else self.fingerprints[start:stop]
        written = None if self.written is None else self.written.slice(start, stop)
        return TableChanges(self.table, self.seqs[start:stop], self.ops[start:stop], self.rows[start:stop], defects,
                            fingerprints, written)

    @classmethod
    def concatenate(cls, parts: Sequence[TableChanges]) -> TableChanges:
        ops, rows, defects = [], [], {}
        for part in parts:
            defects.update({len(rows) + row: reason for row, reason in part.defects.items()})
            ops += part.ops
            rows += part.rows
        if all(isinstance(part.seqs, np.ndarray) or not part.seqs for part in parts):
            seqs = np.concatenate([np.asarray(part.seqs, np.int64) for part in parts])
        else:
            seqs = [seq for part in parts for seq in part.seqs]
        known = all(part.fingerprints is not None for part in parts)
        fingerprints = [f for part in parts for f in part.fingerprints] if known else None
        partial = [part.written for part in parts if part.written is not None]
        if partial and len(partial) < len(parts):
            raise ValueError(f"table {parts[0].table}: cannot join changes read whole with changes read in part")
        return cls(parts[0].table, seqs, ops, rows, defects, fingerprints, WrittenRows.joined(partial) if partial else None)

    @classmethod
    def of_updates(cls, table: str, updates: Sequence[Update]) -> TableChanges:
        """``updates`` of ``table`` (in ``_seq`` order) column by column."""
        defects = {position: u.defect for position, u in enumerate(updates) if u.defect is not None}
        return cls(table, [u.seq for u in updates], [u.op for u in updates], [u.row for u in updates], defects)


class WrittenRows(NamedTuple):
    """Rows of a table as written in the stream, kept as Arrow rows (``segments``: a table and a row
    range in it, in turn) and read into Python values one row at a time, on demand. (A named tuple:
    one is sliced per table per batch, and an attrs class's ``__init__`` costs a microsecond.)"""

    table: Table
    segments: tuple[tuple[pa.Table, int, int], ...]

    def row(self, position: int) -> tuple:
        for data, start, stop in self.segments:
            if position < stop - start:
                rows, _, _ = _rows_and_defects(data.slice(start + position, 1), self.table, "")
                return rows[0]
            position -= stop - start
        raise IndexError(position)

    def one(self, position: int) -> WrittenRows:
        """``slice(position, position + 1)``, for ``TableChanges.one``."""
        segments = self.segments
        if len(segments) != 1:
            return self.slice(position, position + 1)
        ((data, first, _),) = segments  # what a cursor hands out one by one: one chunk
        return _written_rows(self.table, ((data, first + position, first + position + 1),))

    def slice(self, start: int, stop: int) -> WrittenRows:
        if len(self.segments) == 1:  # what a cursor slices: one chunk
            ((data, first, last),) = self.segments
            return WrittenRows(self.table, ((data, first + start, min(first + stop, last)),))
        kept, offset = [], 0
        for data, first, last in self.segments:
            length = last - first
            low, high = max(start - offset, 0), min(stop - offset, length)
            if low < high:
                kept.append((data, first + low, first + high))
            offset += length
        return WrittenRows(self.table, tuple(kept))

    @classmethod
    def joined(cls, parts: Sequence[WrittenRows]) -> WrittenRows:
        return cls(parts[0].table, tuple(segment for part in parts for segment in part.segments))


def _written_rows(table: Table, segments: tuple) -> WrittenRows:
    """``WrittenRows(table, segments)`` without the named tuple's keyword-taking ``__new__`` (a third of
    ``TableChanges.one``)."""
    return tuple.__new__(WrittenRows, (table, segments))


@attrs.define  # not frozen: the reader makes one per batch (see TableChanges)
class ChangeBatch:
    """A batch of changes as the stream reader hands it out: each table's changes column by column
    (``tables``), and ``order``, the index in ``tables`` of each change in ``_seq`` order, which is
    all it takes to iterate the batch as ``Update`` objects in ``_seq`` order (for callers that want
    them; the local engine never does). Its rows were checked against the catalog as they were read,
    like those of a ``checked`` ``UpdateBatch``. A table the reader was told to skip is None in
    ``tables``: its changes count in ``len`` but are not read, so iterating leaves them out.
    ``order`` is an int numpy array, or for a batch of one change a tuple of one int (``batches(1)``:
    no array, and ``order[0]`` an int, not a numpy scalar). Nothing mutates a batch once made.
    """

    tables: tuple[TableChanges | None, ...]
    order: np.ndarray | tuple[int]

    def __len__(self) -> int:
        return len(self.order)

    def __iter__(self) -> Iterator[Update]:
        positions = [0] * len(self.tables)
        order = self.order
        for table in order.tolist() if isinstance(order, np.ndarray) else order:
            changes = self.tables[table]
            if changes is not None:
                yield changes.update(positions[table])
                positions[table] += 1


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
        # What was built goes to the permanent generation first: re-enabled, the collector would
        # otherwise scan all of it at once on the next allocation (1.3 s of a 17 s run at SF 0.1).
        # Frozen objects are still freed by reference counting, as the runners' frozen states are.
        gc.freeze()
        if enabled:
            gc.enable()


def arrow_schema(table: Table) -> pa.Schema:
    """The Arrow schema of ``table``'s columns (no ``_seq``/``_op``), nullability from the catalog."""
    return pa.schema([pa.field(c.name, arrow_type(c.type), nullable=c.nullable) for c in table.columns])


@gc_paused()
def rows_from_arrow(data: pa.Table, table: Table, source: str) -> list[tuple]:
    """``table``'s columns of ``data`` as tuples of Python values in catalog order.

    ``source`` (a file name) goes into error messages. Columns of ``data`` that the catalog does
    not know are ignored here; callers that must reject them check beforehand. A value that cannot
    be read exactly into its column refuses the whole table, naming the row (these are base tables,
    without a ``_seq``).
    """
    rows, defects, _ = _rows_and_defects(data, table, source)
    if defects:
        row = min(defects)
        raise StreamFormatError(f"table {table.name} ({source}), row {row}: {defects[row]}")
    return rows


def _rows_and_defects(data: pa.Table, table: Table, source: str, read: Collection[str] | None = None,
                      casts: Sequence[pa.ChunkedArray | pa.Array] | None = None,
                      makers: Sequence[ValueMaker | None] | None = None,
                      ) -> tuple[list[tuple], dict[int, str], list[pa.ChunkedArray | pa.Array] | None]:
    """Rows of ``data`` in catalog column order, why each row that cannot be read is wrong (by row
    position; the first wrong column of a row names it), and, when no row is wrong, each column cast
    to its catalog type's Arrow type (what ``arrow_fingerprints`` takes). A wrong row keeps its values
    as written. ``casts``: the columns already cast so (``_arrow_ready``), used instead of casting again;
    ``makers``: with them, the makers of the read columns' Python values (``_value_maker``, None for
    a column not read).

    Given ``read``, only those columns become Python values; the others are None in every row. They
    are checked all the same, on the Arrow column (``_unread_column``): a column with a value that
    cannot be its column's is read whole after all, so a wrong row keeps every value as written."""
    missing = [name for name in table.column_names if name not in data.column_names]
    if missing:
        raise StreamFormatError(f"table {table.name} ({source}): missing column(s) {', '.join(missing)}")
    defects: dict[int, str] = {}
    columns: list = []
    prepared = casts or [None] * len(table.columns)
    makers = makers or [None] * len(table.columns)
    casts = []
    for column, ready, maker in zip(table.columns, prepared, makers, strict=True):
        in_key = column.name in table.primary_key
        cast = None if read is None or column.name in read else _unread_column(data[column.name], column, in_key, ready)
        if cast is not None:
            columns.append(None)
            casts.append(cast)
            continue
        values, column_defects, cast = _read_column(data[column.name], column, in_key, ready, maker)
        columns.append(values)
        casts.append(cast)
        for row, reason in column_defects.items():
            defects.setdefault(row, reason)
    if all(values is None for values in columns):  # a table nothing reads a column of (COUNT(*))
        rows = [(None,) * len(columns)] * len(data)
    else:
        # zip stops at the shortest input: the read columns all have len(data) values
        rows = list(zip(*(repeat(None) if values is None else values for values in columns)))  # noqa: B905
    return rows, defects, None if defects else casts


def _unread_column(data: pa.ChunkedArray, column: Column, in_key: bool, ready: pa.ChunkedArray | pa.Array | None = None
                   ) -> pa.ChunkedArray | pa.Array | None:
    """``data`` cast to ``column``'s Arrow type when every value of it is one of ``column``'s (what
    ``_read_column`` would find no defect in), else None: then it is read after all."""
    if not column_reads(column, data.type):
        return None
    if data.null_count and value_defect(column, None, in_key) is not None:
        return None
    try:
        return _cast(data, column.type) if ready is None else ready
    except _ARROW_CONVERSION_ERRORS:
        return None


# A cast that fails is retried on blocks of this many values, then value by value in a failing block,
# so one bad value in a million costs a few hundred casts, not a million.
_CAST_BLOCK = 4096


def _read_column(data: pa.ChunkedArray, column: Column, in_key: bool, ready: pa.ChunkedArray | pa.Array | None = None,
                 maker: ValueMaker | None = None) -> tuple[list, dict[int, str], pa.ChunkedArray | pa.Array | None]:
    """One stream column as Python values of ``column``'s type, the reason for each value that
    cannot be read exactly (see ``column_types``; such a value stays as written so a rejects file
    shows what the producer sent), and the column cast to its Arrow type (None if it does not cast).
    ``ready``: the column already cast; ``maker``: with it, the maker of its values (``_value_maker``)."""
    if not column_reads(column, data.type):
        raw = data.to_pylist()
        # A whole column of the wrong kind: every value is wrong, not only the first.
        refused = (row for row, value in enumerate(raw) if value is not None or value_defect(column, None, in_key))
        defects = {row: _wrong_value(column, data.type, raw[row], in_key) for row in refused}
        # a column written as NULLs of another type (Parquet's null type) is all NULL: that reads
        return raw, defects, None if defects else pa.nulls(len(data), arrow_type(column.type))
    defects: dict[int, str] = {}
    try:
        cast = _cast(data, column.type) if ready is None else ready
    except _ARROW_CONVERSION_ERRORS:
        lossy = _uncastable(data, column.type)
        raw = [data[row].as_py() for row in lossy]
        defects = {row: _wrong_value(column, data.type, value, in_key) for row, value in zip(lossy, raw, strict=True)}
        valid = np.ones(len(data), dtype=bool)
        valid[lossy] = False
        cast = _cast(data.filter(pa.array(valid)), column.type)
        written = dict(zip(lossy, raw, strict=True))
        read = iter(_python_values(cast, column.type))
        values = [written[row] if row in written else next(read) for row in range(len(data))]
        return (*_null_defects(values, column, in_key, defects), None)
    values = _python_values(cast, column.type) if maker is None else maker()
    return (*_null_defects(values, column, in_key, defects, cast.null_count), cast)


def _null_defects(
    values: list, column: Column, in_key: bool, defects: dict[int, str], null_count: int | None = None
) -> tuple[list, dict[int, str]]:
    """Add a reason for each NULL where ``column`` (a key, or NOT NULL) allows none."""
    if null_count == 0 or value_defect(column, None, in_key) is None:
        return values, defects
    for row, value in enumerate(values):
        if value is None:
            defects.setdefault(row, value_defect(column, None, in_key))
    return values, defects


def _wrong_value(column: Column, written_as: pa.DataType, value: object, in_key: bool) -> str:
    """Why a value written as ``written_as`` is not a value of ``column``: of another Python type
    (``value_defect`` names it), or one that changes when cast (an integer beyond 2**53 into a
    double), or of an Arrow type the column does not read whose Python value would pass."""
    return value_defect(column, value, in_key) or (
        f"column {column.name} expects {column.type}, got {written_as} {sql_literal(value)}, "
        f"which is not exactly a {column.type}"
    )


def _uncastable(data: pa.ChunkedArray, column_type: types.DataType) -> list[int]:
    """Positions (ascending) of the values of ``data`` that do not cast exactly to ``column_type``."""
    if pa.types.is_floating(data.type) and pa.types.is_integer(arrow_type(column_type)):
        return np.flatnonzero(inexact_floats(data, arrow_type(column_type))).tolist()
    bad: list[int] = []
    for start in range(0, len(data), _CAST_BLOCK):
        block = data.slice(start, _CAST_BLOCK)
        if not _casts(block, column_type):
            bad.extend(start + i for i in range(len(block)) if not _casts(block.slice(i, 1), column_type))
    return bad


def _python_values(column: pa.ChunkedArray | pa.Array, column_type: types.DataType) -> list:
    """``column``'s values as Python values of ``column_type`` (``_value_maker`` and its maker at once)."""
    return _value_maker(column, column_type)()


#: what ``_value_maker`` returns: makes a column's Python values (the work that needs the GIL)
ValueMaker = Callable[[], list]


def _value_maker(column: pa.ChunkedArray | pa.Array, column_type: types.DataType,
                 kept: np.ndarray | None = None) -> ValueMaker:
    """Do now the Arrow and numpy half of making ``column``'s Python values (casts, dictionary
    encoding: no Python object per value, the GIL released), and return what makes the values
    themselves. The stream reader calls this when it makes a chunk ready (``_arrow_ready``) and
    the maker when it converts the chunk, which then does only the work that needs Python objects. Given ``kept`` (positions),
    the values are made only there, None elsewhere (``row_masks``), unless they repeat: then each
    distinct one is made once anyway, and a row costs less than leaving it out would."""
    if _repeats(column, column_type):
        # Python values dear to make: when a column repeats them (a discount, a date, a market
        # segment), each distinct one is made once and its rows share it (the values are immutable),
        # a list index a row instead of an object.
        encoded = pc.dictionary_encode(column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column)
        if len(encoded.dictionary) < _DISTINCT_SHARE * len(encoded):
            make_distinct = _each_value_maker(encoded.dictionary, column_type)
            nulls = bool(encoded.null_count)
            indices = (encoded.indices.fill_null(len(encoded.dictionary)) if nulls else encoded.indices).to_numpy()

            def shared() -> list:
                distinct = make_distinct()
                # an object array's take and tolist: half the time of a list lookup per row
                values = np.empty(len(distinct) + nulls, dtype=object)  # a trailing None for NULL
                values[: len(distinct)] = distinct
                return values.take(indices).tolist()

            return shared
    if kept is not None:
        return made_at(_each_value_maker(column.take(kept), column_type), kept, len(column))
    return _each_value_maker(column, column_type)


#: the share of distinct values below which a column's values are made once per distinct value; the
#: first values of a column sampled to see whether it repeats any (encoding a column of values that
#: are all distinct costs as much as making a third of its objects)
_DISTINCT_SHARE, _SAMPLE, _SAMPLE_SHARE = 0.5, 2048, 0.9


def _repeats(column: pa.ChunkedArray | pa.Array, column_type: types.DataType) -> bool:
    """Whether ``column`` is of a type whose Python values are dear to make (DECIMAL, DATE, STRING)
    and its first values repeat."""
    if not (isinstance(column_type, types.DecimalType) or column_type in (types.DATE, types.STRING)):
        return False
    return len(column) >= 2 * _SAMPLE and len(pc.unique(column.slice(0, _SAMPLE))) < _SAMPLE_SHARE * _SAMPLE


def _each_value_maker(column: pa.ChunkedArray | pa.Array, column_type: types.DataType) -> ValueMaker:
    """The maker of ``column``'s values as Python values of ``column_type``, one made per value (its
    Arrow and numpy half done now, see ``_value_maker``)."""
    if isinstance(column_type, types.DecimalType):
        # decimal128 → decimal.Decimal with the column's scale, exactly: from Arrow's string of each
        # value (same digits, same exponent) in 0.45 µs a value, where to_pylist takes 1.1 µs
        texts = pc.cast(column, pa.string())
        if column.null_count:
            return lambda: [None if text is None else Decimal(text) for text in texts.to_pylist()]
        return lambda: list(map(Decimal, texts.to_pylist()))
    if column_type == types.DOUBLE and pc.any(pc.is_nan(column)).as_py():
        return lambda: canonical_values(column.to_pylist())  # every NaN the one NaN (operators/doubles.py)
    if column_type in types.TIMESTAMPS:
        return timestamp_maker(column, aware=column_type == types.TIMESTAMP)
    if column.null_count or column_type == types.STRING:
        return column.to_pylist
    if column_type == types.DATE:
        # numpy turns datetime64 into dates in microseconds a value; from the day number, 0.2 µs
        days = column.cast(pa.int32()).to_numpy() + _EPOCH_ORDINAL
        return lambda: list(map(date.fromordinal, days.tolist()))
    return column.to_numpy().tolist


_EPOCH_ORDINAL = date(1970, 1, 1).toordinal()


def timestamp_maker(column: pa.ChunkedArray | pa.Array, aware: bool) -> ValueMaker:
    """The maker of a timestamp[us] column's values: through numpy's datetime64, 0.3 µs a value where
    pyarrow's to_pylist of a column with a time zone takes 10 µs; aware ones in UTC (``timezone.utc``)."""
    micros = column.cast(pa.int64())
    valid = None if not micros.null_count else pc.is_valid(micros).to_numpy(zero_copy_only=False)
    local = micros.fill_null(0).to_numpy().astype("datetime64[us]")

    def make() -> list:
        values = local.tolist()
        if aware:
            values = [value.replace(tzinfo=UTC) for value in values]
        if valid is not None:
            values = [value if keep else None for value, keep in zip(values, valid.tolist(), strict=True)]
        return values

    return make


def _cast(column: pa.ChunkedArray, column_type: types.DataType) -> pa.ChunkedArray | pa.Array:
    """``column`` in the Arrow type of ``column_type`` by an exact cast: a value that would change fails."""
    return exact_cast(column, arrow_type(column_type))


def _casts(column: pa.ChunkedArray, column_type: types.DataType) -> bool:
    return casts_exactly(column, arrow_type(column_type))


def arrow_from_rows(rows: Sequence[tuple], table: Table, source: str, seqs: Sequence[int] | None = None) -> pa.Table:
    """Tuples in catalog column order as an Arrow table with ``arrow_schema(table)``.

    A value that is not of its column's type (``value_defect``: a bool or a str for an int, a
    datetime for a date, a NULL key) is refused rather than converted, naming the column and the row:
    by its ``_seq`` when ``seqs`` are given (the rows are updates), else by position.
    """
    def place(row: int) -> str:
        return f"row {row}" if seqs is None else f"update with _seq {seqs[row]}"

    width = len(table.columns)
    bad = next((i for i, row in enumerate(rows) if len(row) != width), None)
    if bad is not None:
        raise StreamFormatError(
            f"table {table.name} ({source}), {place(bad)}: has {len(rows[bad])} values, the table has {width} columns"
        )
    schema = arrow_schema(table)
    arrays = []
    for i, (column, field) in enumerate(zip(table.columns, schema, strict=True)):
        values = [row[i] for row in rows]
        where = f"table {table.name} ({source})"
        wrong = _first_wrong_value(values, column, column.name in table.primary_key)
        if wrong is not None:
            raise StreamFormatError(f"{where}, {place(wrong[0])}: {wrong[1]}")
        if any(checked_by_value(kind, column.type) for kind in set(map(type, values))):  # each exact (checked)
            values = [exact_number(value, column.type)[0] for value in values]
        try:
            arrays.append(pa.array(values, field.type))
        except _ARROW_CONVERSION_ERRORS:
            row = next(i for i, value in enumerate(values) if not _converts(value, field.type))
            raise StreamFormatError(
                f"{where}, {place(row)}: column {column.name} expects {column.type}, got {sql_literal(values[row])}, "
                f"which is not exactly a {field.type}"
            ) from None
    return pa.Table.from_arrays(arrays, schema=schema)


def _first_wrong_value(values: list, column: Column, in_key: bool) -> tuple[int, str] | None:
    """The first position whose value ``value_defect`` refuses, and why. ``value_defect`` depends only
    on a value's kind (``_value_kind``), so it runs once per distinct kind, not once per value; but a float into an
    exact column (and a number into a DOUBLE one) is exact or not by its value (``exact_numbers``), so
    each such value is checked.
    (Beyond that, ``pa.array`` refuses an integer out of its column's range or a Decimal with too many
    digits.)"""
    wrong = []
    for value_type in set(map(_value_kind, values)):
        positions = (i for i, value in enumerate(values) if _value_kind(value) == value_type)
        each = checked_by_value(value_type, column.type)
        for position in positions if each else islice(positions, 1):
            reason = value_defect(column, values[position], in_key)
            if reason is not None:
                wrong.append((position, reason))
                break
    return min(wrong, default=None)


def _value_kind(value: object) -> object:
    """What ``value_defect`` depends on: a value's type, and for a datetime whether it is aware."""
    return type(value) if not isinstance(value, datetime) else (datetime, value.tzinfo is None)


def _converts(value: object, target: pa.DataType) -> bool:
    try:
        pa.array([value], target)
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


def _stream_entries(stream_dir: Path, catalog: Catalog) -> dict[str, Path]:
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
    entries = _stream_entries(stream_dir, catalog)
    if not entries:
        raise StreamFormatError(
            f"stream directory {stream_dir} holds no stream files (<table>.parquet, or a directory <table>/)"
        )
    sources, seqs = zip(*(_TableSource.open(path, catalog.table(name)) for name, path in entries.items()), strict=True)
    order = _check_unique_seqs({source.table.name: table_seqs for source, table_seqs in zip(sources, seqs, strict=True)})
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
            except (*_ARROW_CONVERSION_ERRORS, OSError) as error:
                raise _unreadable(where, file, error) from None

    def unsequenced_updates(self) -> Iterator[UnreadableUpdate]:
        """The rows whose ``_seq`` is NULL, with their values as read and a defect naming the file row."""
        if not len(self.unsequenced):
            return
        data = pa.concat_tables(self._file_chunks()).take(pa.array(self.unsequenced))
        rows, _, _ = _rows_and_defects(data, self.table, str(self.path))
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
    except (*_ARROW_CONVERSION_ERRORS, OSError) as error:
        raise _unreadable(where, file, error) from None


def _unreadable(where: str, file: Path, error: Exception) -> StreamFormatError:
    return StreamFormatError(f"{where}: not a readable Parquet file: {file}: {_one_line(error)}")


class ArrowReady(NamedTuple):
    """A chunk of a table's stream rows as read (``data``), and what can be done with it without
    Python objects (Arrow and numpy work that releases the GIL): its columns cast to their catalog types, the rows'
    fingerprints and the makers of the read columns' Python values (``_value_maker``; None for a
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
            casts.append(_cast(data[column.name], column.type))
        except _ARROW_CONVERSION_ERRORS:
            return ArrowReady(data, None, None, None, seqs, ops, bad_ops)
    kept, thin = (mask and mask.thinning(table, casts)) or (None, ())
    makers = [_value_maker(cast, column.type, kept if column.name in thin else None)
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
        """One chunk of rows as Python values (see ``_rows_and_defects``), with their ``_seq`` and ``_op``
        and why each change that cannot be read is wrong."""
        data, table, ops = ready.data, self._source.table, ready.ops
        rows, defects, casts = _rows_and_defects(data, table, str(self._source.path), self._read, ready.casts,
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
    made = iter(arrow_fingerprints([_cast(data[c.name], c.type) if column_reads(c, data[c.name].type)
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


def _check_unique_seqs(seqs_by_table: Mapping[str, np.ndarray]) -> np.ndarray:
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


def batches(updates: UpdateBatch | Iterable[Update], size: int) -> Iterator[UpdateBatch]:
    """Consecutive chunks of at most ``size`` updates, refusing input that is not in ``_seq`` order.

    Chunks of an ``UpdateBatch`` keep its ``checked``; other input is unchecked.
    """
    if size < 1:
        raise ValueError(f"batch size must be at least 1, got {size}")
    stream = updates if isinstance(updates, UpdateBatch) else UpdateBatch(tuple(updates))
    for start in range(0, len(stream), size):
        yield stream[start : start + size]
