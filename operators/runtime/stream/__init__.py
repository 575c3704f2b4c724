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


from operators.runtime.stream.arrow_values import (
    ValueMaker,
    arrow_from_rows,
    arrow_schema,
    cast_column,
    gc_paused,
    python_values,
    rows_and_defects,
    rows_from_arrow,
    timestamp_maker,
    value_maker,
)
from operators.runtime.stream.changes import (
    DELETE,
    INSERT,
    OP_COLUMN,
    SEQ_COLUMN,
    ChangeBatch,
    CheckedTables,
    TableChanges,
    UnreadableUpdate,
    Update,
    UpdateBatch,
    WrittenRows,
    batches,
)
from operators.runtime.stream.errors import (
    ARROW_CONVERSION_ERRORS,
    StreamFormatError,
    UnknownStreamTableError,
)
from operators.runtime.stream.reader import (
    ArrowReady,
    OpenStream,
    StreamContents,
    check_unique_seqs,
    open_stream,
    read_stream,
    read_stream_contents,
    stream_entries,
)
from operators.runtime.stream.writer import (
    write_stream,
)

__all__ = [
    "ARROW_CONVERSION_ERRORS",
    "ArrowReady",
    "ChangeBatch",
    "CheckedTables",
    "DELETE",
    "INSERT",
    "OP_COLUMN",
    "OpenStream",
    "SEQ_COLUMN",
    "StreamContents",
    "StreamFormatError",
    "TableChanges",
    "UnknownStreamTableError",
    "UnreadableUpdate",
    "Update",
    "UpdateBatch",
    "ValueMaker",
    "WrittenRows",
    "arrow_from_rows",
    "arrow_schema",
    "batches",
    "cast_column",
    "check_unique_seqs",
    "gc_paused",
    "open_stream",
    "python_values",
    "read_stream",
    "read_stream_contents",
    "rows_and_defects",
    "rows_from_arrow",
    "stream_entries",
    "timestamp_maker",
    "value_maker",
    "write_stream",
]
