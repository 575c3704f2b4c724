"""Which rows of a table's stream chunk some route of the query can keep: the stream reader makes the
other rows' Python values only for the columns every row needs.

A TPC-H Q3 lineitem change whose ship date fails ``l_shipdate > date '1995-03-15'`` (half of them) is
validated (its key, its fingerprint, which is made from the Arrow columns anyway) and dropped by the
selection of every route of its table; making its price and discount into ``Decimal`` objects first
was wasted. A ``RowMask`` says, computed on the Arrow columns of a chunk, which rows may be kept (a
superset of the rows any route keeps, built by ``operators/lowering/route_masks.py``), and which
columns are read for every row all the same: the primary key (the validator's) and the selections'
own columns, so each route's compiled selection still sees its row's true values and drops the row
itself. The mask decides only which rows' other columns are made: a row outside it holds None there,
and no route reads them. The rows keep every value as written for a rejects file (``WrittenRows``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs
import numpy as np
import pyarrow as pa

from catalog import types
from catalog.schema import Table

#: the columns of a chunk cast to their catalog types' Arrow types, in catalog column order
CastColumns = Sequence[pa.ChunkedArray | pa.Array]


@attrs.frozen
class RowMask:
    """``keep`` gives, for a chunk's cast columns, True at every row some route of the table may keep
    (never False at one it keeps); ``always``: the columns made into Python values for every row."""

    keep: Callable[[CastColumns], np.ndarray] = attrs.field(eq=False)
    always: frozenset[str]

    def thinning(self, table: Table, casts: CastColumns) -> tuple[np.ndarray, frozenset[str]] | None:
        """The positions of the rows to make every read column of, and the columns made only at those
        rows; None when the mask keeps nearly every row (``_WORTH``). Only columns whose Python values are dear to make (DECIMAL,
        DATE, STRING: 0.1-0.45 µs a value) are thinned: an integer costs less than the scatter. A NOT
        NULL column with a NULL is made at every row: that NULL is a defect the reader reports, and a
        None left for a dropped row would look like another."""
        kept = np.flatnonzero(self.keep(casts))
        if not casts or len(kept) > _WORTH * len(casts[0]):
            return None
        thin = frozenset(column.name for column, cast in zip(table.columns, casts, strict=True)
                         if column.name not in self.always and _dear(column.type)
                         and (column.nullable or not cast.null_count))
        return (kept, thin) if thin else None


#: the share of a chunk's rows above which a mask is not used: the scatter costs 12-19 ns a row of the
#: chunk, a value left unmade saves 0.1 (a string) to 0.45 µs (a DECIMAL)
_WORTH = 0.9


def _dear(column_type: types.DataType) -> bool:
    return isinstance(column_type, types.DecimalType) or column_type in (types.DATE, types.STRING)


def made_at(maker: Callable[[], list], kept: np.ndarray, length: int) -> Callable[[], list]:
    """A maker of ``length`` values, ``maker``'s (the values of the rows at ``kept``) at ``kept`` and None
    elsewhere: an object array's scatter and ``tolist``, 12-19 ns a row where a ``Decimal`` costs 450."""

    def make() -> list:
        values = np.empty(length, dtype=object)  # filled with None
        values[kept] = np.fromiter(maker(), dtype=object, count=len(kept))  # the objects themselves, no conversion
        return values.tolist()

    return make
