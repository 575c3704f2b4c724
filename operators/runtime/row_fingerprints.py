"""Row fingerprints: what the validator keeps per key instead of the row (see ``validate.py``).

A fingerprint is the 128-bit BLAKE2b digest of a canonical encoding of the row, made column by column
in Arrow: each value is cast to its string form in its catalog column's Arrow type (an integer in
decimal digits, a DECIMAL at its column's scale, a date as ISO, a double after adding 0.0 so that
-0.0 and 0.0 are one value), prefixed by its length in bytes and a colon, or ``N`` for NULL; the row's
encoding is its columns' pieces in order. Every piece is self-delimiting and every string form is
one-to-one on the values of its type, so two rows have one encoding exactly when they are equal (with
NaN equal to NaN, as in Spark's grouping). The stream reader computes fingerprints on the Arrow
columns it reads (``arrow_fingerprints``), the validator from Python rows by converting them to the
same Arrow types first (``row_fingerprints``), so both give one fingerprint per row value.

A wrong delete passes only if its row's digest equals the stored row's: one chance in 2**128 per
delete (about 3e-27 for a trillion deletes), and BLAKE2b is a cryptographic hash, so not even a
crafted stream can aim at it. Python's ``hash`` would not do: 64 bits, randomized per process for
strings, and colliding by design for numbers (``hash(-1) == hash(-2)``). Per row, the Python work
left is one BLAKE2b call; ``repr`` of a TPC-H lineitem row alone costs several times that.
"""

from __future__ import annotations

from collections.abc import Sequence
from hashlib import blake2b

import pyarrow as pa
import pyarrow.compute as pc

from catalog.schema import Table
from operators.runtime.column_types import arrow_type

_NULL = "N"
_CONVERSION_ERRORS = (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OverflowError)


def arrow_fingerprints(columns: Sequence[pa.Array | pa.ChunkedArray]) -> list[bytes]:
    """The fingerprint of each row of ``columns``, each column already in its catalog type's Arrow type."""
    pieces = []
    for column in columns:
        if pa.types.is_floating(column.type):
            column = pc.add(column, 0.0)  # -0.0 + 0.0 is 0.0: equal values, one spelling
        text = pc.cast(column, pa.string())
        piece = pc.binary_join_element_wise(pc.cast(pc.binary_length(text), pa.string()), text, ":")
        pieces.append(pc.fill_null(piece, _NULL))
    encoded = pc.binary_join_element_wise(*pieces, "").cast(pa.binary())
    return [blake2b(value, digest_size=16).digest() for value in encoded.to_pylist()]


def row_fingerprints(rows: Sequence[tuple], table: Table) -> list[bytes]:
    """The fingerprint of each of ``rows``, valid rows of ``table`` (as ``arrow_fingerprints`` of their
    columns). A row a caller vouched for whose values do not convert to their columns' Arrow types
    (a generator's bug, not stream input) gets a digest of its ``repr``, which starts with ``(``
    where every Arrow encoding starts with a digit or ``N``: it equals no valid row's fingerprint."""
    if not rows:
        return []
    try:
        return arrow_fingerprints(
            [pa.array([row[i] for row in rows], arrow_type(column.type)) for i, column in enumerate(table.columns)]
        )
    except _CONVERSION_ERRORS:
        if len(rows) > 1:
            return [fingerprint for row in rows for fingerprint in row_fingerprints([row], table)]
        return [blake2b(repr(rows[0]).encode(), digest_size=16).digest()]
