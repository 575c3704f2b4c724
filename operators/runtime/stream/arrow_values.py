"""Arrow columns to Python values and back, column by column: the exact reads each column type allows
(no lossy cast), the per-value defects that travel with an update to the validator, and the rows of
a table written as Arrow (``arrow_from_rows``).
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, date, datetime
from decimal import Decimal
from itertools import islice, repeat

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from catalog import types
from catalog.literals import sql_literal
from catalog.schema import Column, Table
from operators.doubles import canonical_values
from operators.runtime.column_types import arrow_type, column_reads, value_defect
from operators.runtime.exact_numbers import (
    casts_exactly,
    checked_by_value,
    exact_cast,
    exact_number,
    inexact_floats,
)
from operators.runtime.row_masks import made_at
from operators.runtime.stream.errors import ARROW_CONVERSION_ERRORS, StreamFormatError


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
    rows, defects, _ = rows_and_defects(data, table, source)
    if defects:
        row = min(defects)
        raise StreamFormatError(f"table {table.name} ({source}), row {row}: {defects[row]}")
    return rows


def rows_and_defects(data: pa.Table, table: Table, source: str, read: Collection[str] | None = None,
                      casts: Sequence[pa.ChunkedArray | pa.Array] | None = None,
                      makers: Sequence[ValueMaker | None] | None = None,
                      ) -> tuple[list[tuple], dict[int, str], list[pa.ChunkedArray | pa.Array] | None]:
    """Rows of ``data`` in catalog column order, why each row that cannot be read is wrong (by row
    position; the first wrong column of a row names it), and, when no row is wrong, each column cast
    to its catalog type's Arrow type (what ``arrow_fingerprints`` takes). A wrong row keeps its values
    as written. ``casts``: the columns already cast so (``_arrow_ready``), used instead of casting again;
    ``makers``: with them, the makers of the read columns' Python values (``value_maker``, None for
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
        return cast_column(data, column.type) if ready is None else ready
    except ARROW_CONVERSION_ERRORS:
        return None


# A cast that fails is retried on blocks of this many values, then value by value in a failing block,
# so one bad value in a million costs a few hundred casts, not a million.
_CAST_BLOCK = 4096


def _read_column(data: pa.ChunkedArray, column: Column, in_key: bool, ready: pa.ChunkedArray | pa.Array | None = None,
                 maker: ValueMaker | None = None) -> tuple[list, dict[int, str], pa.ChunkedArray | pa.Array | None]:
    """One stream column as Python values of ``column``'s type, the reason for each value that
    cannot be read exactly (see ``column_types``; such a value stays as written so a rejects file
    shows what the producer sent), and the column cast to its Arrow type (None if it does not cast).
    ``ready``: the column already cast; ``maker``: with it, the maker of its values (``value_maker``)."""
    if not column_reads(column, data.type):
        raw = data.to_pylist()
        # A whole column of the wrong kind: every value is wrong, not only the first.
        refused = (row for row, value in enumerate(raw) if value is not None or value_defect(column, None, in_key))
        defects = {row: _wrong_value(column, data.type, raw[row], in_key) for row in refused}
        # a column written as NULLs of another type (Parquet's null type) is all NULL: that reads
        return raw, defects, None if defects else pa.nulls(len(data), arrow_type(column.type))
    defects: dict[int, str] = {}
    try:
        cast = cast_column(data, column.type) if ready is None else ready
    except ARROW_CONVERSION_ERRORS:
        lossy = _uncastable(data, column.type)
        raw = [data[row].as_py() for row in lossy]
        defects = {row: _wrong_value(column, data.type, value, in_key) for row, value in zip(lossy, raw, strict=True)}
        valid = np.ones(len(data), dtype=bool)
        valid[lossy] = False
        cast = cast_column(data.filter(pa.array(valid)), column.type)
        written = dict(zip(lossy, raw, strict=True))
        read = iter(python_values(cast, column.type))
        values = [written[row] if row in written else next(read) for row in range(len(data))]
        return (*_null_defects(values, column, in_key, defects), None)
    values = python_values(cast, column.type) if maker is None else maker()
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


def python_values(column: pa.ChunkedArray | pa.Array, column_type: types.DataType) -> list:
    """``column``'s values as Python values of ``column_type`` (``value_maker`` and its maker at once)."""
    return value_maker(column, column_type)()


#: what ``value_maker`` returns: makes a column's Python values (the work that needs the GIL)
ValueMaker = Callable[[], list]


def value_maker(column: pa.ChunkedArray | pa.Array, column_type: types.DataType,
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
    Arrow and numpy half done now, see ``value_maker``)."""
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


def cast_column(column: pa.ChunkedArray, column_type: types.DataType) -> pa.ChunkedArray | pa.Array:
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
        except ARROW_CONVERSION_ERRORS:
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
    except ARROW_CONVERSION_ERRORS:
        return False
    return True
