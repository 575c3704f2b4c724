"""Row fingerprints: what the validator keeps per key instead of the row (see ``validate.py``).

A fingerprint is the 128-bit BLAKE2b digest of a canonical encoding of the row, made column by column
on Arrow arrays of the catalog columns' Arrow types: first a fixed-width part, per column a validity
byte and then the value's bytes (an integer, date or DECIMAL's unscaled integer in two's complement,
a double after adding 0.0 so that -0.0 and 0.0 are one value, and every NaN the one NaN; zeros for NULL) or, for a string, its
length in bytes; then the bytes of the row's strings in column order. The lengths make the encoding
self-delimiting, and each column type's bytes are one-to-one on its values (a DECIMAL column has one
scale), so two rows have one encoding exactly when they are equal (every NaN equal to every NaN, as in Spark). The stream reader fingerprints the Arrow columns it reads
(``arrow_fingerprints``), the validator Python rows by converting them to the same Arrow types
first (``row_fingerprints``), so both give one fingerprint per row value. Building the encoding is
numpy work on whole columns; per row only one BLAKE2b call is left (about 0.9 µs for a lineitem
row, where the digest of its ``repr`` took 5).

A wrong delete passes only if its row's digest equals the stored row's: one chance in 2**128 per
delete (about 3e-27 for a trillion deletes), and BLAKE2b is a cryptographic hash, so not even a
crafted stream can aim at it. Python's ``hash`` would not do: 64 bits, randomized per process for
strings, and colliding by design for numbers (``hash(-1) == hash(-2)``).
"""

from __future__ import annotations

from collections.abc import Sequence
from hashlib import blake2b

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from catalog.schema import Table
from operators.runtime.column_types import arrow_type

_CONVERSION_ERRORS = (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OverflowError)


def arrow_fingerprints(columns: Sequence[pa.Array | pa.ChunkedArray]) -> list[bytes]:
    """The fingerprint of each row of ``columns``, each column already in its catalog type's Arrow type."""
    rows = len(columns[0]) if columns else 0
    if not rows:
        return []
    fixed, strings = [], []
    for column in columns:
        if isinstance(column, pa.ChunkedArray):
            column = column.combine_chunks()
        valid = column.is_valid().to_numpy(zero_copy_only=False)
        fixed.append(valid.astype(np.uint8).reshape(rows, 1))
        if pa.types.is_string(column.type):
            text = pc.fill_null(column, "") if column.null_count else column
            fixed.append(pc.binary_length(text).to_numpy().astype("<i4").view(np.uint8).reshape(rows, 4))
            strings.append(text.cast(pa.binary()))
            continue
        if pa.types.is_boolean(column.type):
            column = column.cast(pa.uint8())
        elif pa.types.is_floating(column.type):
            column = pc.add(column, 0.0)  # -0.0 + 0.0 is 0.0: equal values, one encoding
            if pc.any(pc.is_nan(column)).as_py():  # every NaN one value (Spark's NaN = NaN), one encoding
                column = pc.if_else(pc.is_nan(column), pa.scalar(float("nan"), column.type), column)
        width = column.type.bit_width // 8
        values = np.frombuffer(column.buffers()[1], np.uint8)[column.offset * width : (column.offset + rows) * width]
        values = values.reshape(rows, width)
        if column.null_count:  # what a NULL's slot holds is undefined
            values = values.copy()
            values[~valid] = 0
        fixed.append(values)
    block = np.ascontiguousarray(np.hstack(fixed))
    encoded = pa.FixedSizeBinaryArray.from_buffers(pa.binary(block.shape[1]), rows, [None, pa.py_buffer(block)])
    if strings:
        encoded = pc.binary_join_element_wise(encoded.cast(pa.binary()), *strings, b"")
    return [blake2b(value, digest_size=16).digest() for value in encoded.to_pylist()]


def row_fingerprints(rows: Sequence[tuple], table: Table) -> list[bytes]:
    """The fingerprint of each of ``rows``, valid rows of ``table`` (as ``arrow_fingerprints`` of their
    columns). A row a caller vouched for whose values do not convert to their columns' Arrow types
    (a generator's bug, not stream input) gets a digest of its ``repr``, which starts with ``(``
    where every Arrow encoding starts with a validity byte (0 or 1): it equals no valid row's."""
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
