"""The change types of a stream: one ``Update``; an ``UpdateBatch`` of them in ``_seq`` order; a table's
changes column by column (``TableChanges``) and a batch of those as the reader hands it out
(``ChangeBatch``); ``batches`` cuts a stream into batches.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from itertools import islice
from operator import attrgetter, lt
from typing import ClassVar, NamedTuple, overload

import attrs
import numpy as np
import pyarrow as pa

from catalog.schema import Table
from operators.runtime.stream.arrow_values import rows_and_defects
from operators.runtime.stream.errors import StreamFormatError

SEQ_COLUMN = "_seq"


OP_COLUMN = "_op"


INSERT, DELETE = 1, -1


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
                rows, _, _ = rows_and_defects(data.slice(start + position, 1), self.table, "")
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


def batches(updates: UpdateBatch | Iterable[Update], size: int) -> Iterator[UpdateBatch]:
    """Consecutive chunks of at most ``size`` updates, refusing input that is not in ``_seq`` order.

    Chunks of an ``UpdateBatch`` keep its ``checked``; other input is unchecked.
    """
    if size < 1:
        raise ValueError(f"batch size must be at least 1, got {size}")
    stream = updates if isinstance(updates, UpdateBatch) else UpdateBatch(tuple(updates))
    for start in range(0, len(stream), size):
        yield stream[start : start + size]
