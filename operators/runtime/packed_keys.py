"""The validator's key of a table row: a two-integer primary key packed into one int (issue 13).

Why: a window stream inserts and deletes keys in key order. Python hashes an int to itself, so a
dict keyed by ints puts consecutive keys in neighbouring slots and keeps the stream's locality; a
tuple's hash scatters them, and once the dict outgrows the caches every probe is a miss
(`examples/benchmarks/scale_causes.py dicts`: 972 ns per insert + delete with (orderkey, linenumber)
tuples against 237 ns with ints in stream order, at SF 1's lineitem window). Lineitem's key
(l_orderkey, l_linenumber) is such a pair, and its state is the validator's largest.

The packing is exact: ``(a, b)`` becomes ``(a << width) | b`` when ``0 <= b < 2**width``, which maps
the pairs with such a ``b`` one to one onto the ints; any other pair (``b`` out of range, or a value
that is not an int) stays the tuple ``(a, b)``, which never equals an int. A pair's key therefore
depends only on the pair and ``width``. ``width`` starts at 0 and grows to the bits of the largest
``b`` seen (``fit``), at most ``MAX_WIDTH``: larger ``b`` stay tuples; widening re-keys the stored
state in place (O(state), at most ``MAX_WIDTH`` times per table), so the representation of a key can
change between batches but never inside one (``fit`` runs before a batch computes any key).
The validator's probe computes the packed key inline (``validate.store_changes``), and so does the
compiled runner's generated probe of a batch of one change (``codegen.validator_key``).
``unpacked`` gives back the pair, for messages and for comparing two validators' states.

A primary key of one column is that column's value (already an int for integer keys); other keys
are tuples, as before.
"""

from __future__ import annotations

from operator import itemgetter

from catalog.schema import Table
from catalog.types import INTEGRAL
from operators.zset import Row

#: the most bits the second column gets: a wider ``b`` stays a tuple (keeps consecutive ``a`` close)
MAX_WIDTH = 16


class RowKey:
    """A table's primary key as the validator stores it: ``of(row)``, ``shown(key)``, ``unpacked(key)``."""

    #: the bits of a packed key's second column (``PackedRowKey``); no packing here
    width = 0

    def __init__(self, table: Table):
        self.positions = tuple(table.column_names.index(k) for k in table.primary_key)
        self.of = itemgetter(*self.positions)

    def fit(self, rows: list[Row], state: dict) -> None:
        """Make ready to key ``rows`` (nothing to do for an unpacked key): call it before computing
        any key of a batch, since it may re-key ``state``."""

    def shown(self, key) -> tuple:
        """The key as the primary key's values, for messages."""
        return key if isinstance(key, tuple) else (key,)

    def unpacked(self, key):
        """The key as ``itemgetter`` of the primary key gives it (a scalar for one column)."""
        return key


class PackedRowKey(RowKey):
    """A primary key of two integer columns, packed (see the module docstring)."""

    def __init__(self, table: Table):
        super().__init__(table)
        self.second = itemgetter(self.positions[1])
        self.width = 0
        self.of = _packer(*self.positions, 0)

    def fit(self, rows: list[Row], state: dict) -> None:
        """Widen so that the largest ``b`` of ``rows`` packs (up to ``MAX_WIDTH`` bits), re-keying
        ``state`` in place; call before computing any key of the batch."""
        try:
            high = max(map(self.second, rows)) if len(rows) > 1 else self.second(rows[0])
            bits = high.bit_length() if high >= 0 else 0
        except (TypeError, AttributeError, ValueError, IndexError):  # not ints (or no rows): stay tuples
            return
        if bits <= self.width or bits > MAX_WIDTH:
            return
        unpacked = [(self.unpacked(key), value) for key, value in state.items()]
        self.width = bits
        self.of = _packer(*self.positions, bits)
        state.clear()
        pack = _packer(0, 1, bits)
        for pair, value in unpacked:
            state[pack(pair)] = value

    def shown(self, key) -> tuple:
        return self.unpacked(key)

    def unpacked(self, key) -> tuple:
        if isinstance(key, tuple):
            return key
        return key >> self.width, key & ((1 << self.width) - 1)


def _packer(first: int, second: int, width: int):
    """The key of one row at ``width`` (the module docstring's rule)."""
    limit = 1 << width

    def of(row: Row, first=first, second=second, width=width, limit=limit):
        b = row[second]
        try:
            if 0 <= b < limit:
                return (row[first] << width) | b
        except TypeError:
            pass
        return (row[first], b)

    return of


def key_for(table: Table) -> RowKey:
    """The key the validator stores ``table``'s rows under (the table has a primary key)."""
    columns = [table.column(name) for name in table.primary_key]
    if len(columns) == 2 and all(column.type in INTEGRAL for column in columns):
        return PackedRowKey(table)
    return RowKey(table)
