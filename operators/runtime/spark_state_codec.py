"""How one key's state is written in the Spark runner's state store: bytes per key, typed rows compact.

Why: a bucket's chunk used to be one pickled dict key text → state, so a batch that touched one key
of a chunk unpickled and re-pickled every key in it, and every ``Decimal`` and ``date`` in them went
through pickle's object protocol (``Decimal('21168.23')`` by its text, a class call to load;
RESULTS.md: 4–6 µs per value against 0.12 µs for an int). Now a chunk is a dict key text → *bytes*,
each key's state encoded on its own (``StateCodec``): a batch decodes and encodes only the keys it
touches, and the untouched ones travel as the bytes they were read as (pickle copies them).

``RowCodec`` encodes a table row of known column types as a tuple of plain values before pickling it:
DECIMAL(p, s) as the integer value·10^s, DATE as its day number since 0001-01-01 (``toordinal``),
TIMESTAMP as microseconds since 1970 (UTC), NULL as None; every other value as itself. Decoding
gives back the same value with the same exponent (a DECIMAL of scale s reads back with exponent -s,
as Arrow gives it to the runner); a value whose exponent is not the column's (which the runner never
stores) is kept as the ``Decimal`` itself, so nothing is ever rounded. The encode and decode
functions are generated per row shape, one expression per column, not a loop over types.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Sequence
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

from catalog import types
from catalog.types import DECIMAL_CONTEXT, DataType, DecimalType

PROTOCOL = pickle.HIGHEST_PROTOCOL
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_EPOCH_NTZ = datetime(1970, 1, 1)


class StateCodec:
    """A key's state as bytes and back: plain pickle (any state a stage keeps)."""

    def encode(self, value: Any) -> bytes:
        return pickle.dumps(value, PROTOCOL)

    def decode(self, data: bytes) -> Any:
        return pickle.loads(data)


PICKLED = StateCodec()


def _scaled(value: Decimal, scale: int) -> int | Decimal:
    """A DECIMAL of exponent ``-scale`` as its integer value·10^scale; any other Decimal as itself.
    Read off its text, the fastest way CPython offers (``as_tuple`` and ``scaleb`` cost ~10× more)."""
    text = str(value)
    if scale:
        if len(text) <= scale or text[-scale - 1] != "." or "E" in text:
            return value  # another exponent (or exponent notation): kept exactly as it is
        text = text[: -scale - 1] + text[-scale:]
    elif not text.lstrip("-").isdigit():
        return value
    number = int(text)
    return value if number == 0 and text[0] == "-" else number  # (-0.00 would read back as 0.00)


def _unscaled(value: int | Decimal, scale: int) -> Decimal:
    return Decimal(value).scaleb(-scale, DECIMAL_CONTEXT) if type(value) is int else value


def _micros(value: datetime, epoch: datetime) -> int:
    delta = value - epoch
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


_HELPERS = {
    "_scaled": _scaled,
    "_unscaled": _unscaled,
    "_micros": _micros,
    "_ordinal": date.toordinal,
    "_from_ordinal": date.fromordinal,
    "_timedelta": timedelta,
    "_EPOCH": _EPOCH,
    "_EPOCH_NTZ": _EPOCH_NTZ,
}


def _column_code(data_type: DataType | None, cell: str) -> tuple[str, str]:
    """(encode expression, decode expression) of one column whose value is ``cell``."""
    if isinstance(data_type, DecimalType):
        return f"_scaled({cell}, {data_type.scale})", f"_unscaled({cell}, {data_type.scale})"
    if data_type == types.DATE:
        return f"_ordinal({cell})", f"_from_ordinal({cell})"
    if data_type in types.TIMESTAMPS:
        epoch = "_EPOCH" if data_type == types.TIMESTAMP else "_EPOCH_NTZ"
        return f"_micros({cell}, {epoch})", f"{epoch} + _timedelta(microseconds={cell})"
    return cell, cell


class RowCodec(StateCodec):
    """A row of ``column_types`` (a table's, in catalog order) as a pickled tuple of plain values."""

    def __init__(self, column_types: Sequence[DataType | None]):
        self.column_types = tuple(column_types)
        self._encode_row, self._decode_row = _row_functions(self.column_types)

    def __getstate__(self) -> dict:
        return {"column_types": self.column_types}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["column_types"])

    def encode(self, value: tuple) -> bytes:
        return pickle.dumps(self._encode_row(value), PROTOCOL)

    def decode(self, data: bytes) -> tuple:
        return self._decode_row(pickle.loads(data))


def _row_functions(column_types: Sequence[DataType | None]) -> tuple[Callable, Callable]:
    encoded, decoded = [], []
    for position, data_type in enumerate(column_types):
        cell = f"r[{position}]"
        encode, decode = _column_code(data_type, cell)
        encoded.append(cell if encode == cell else f"None if {cell} is None else {encode}")
        decoded.append(cell if decode == cell else f"None if {cell} is None else {decode}")
    namespace = dict(_HELPERS)
    source = f"def encode(r): return ({''.join(e + ', ' for e in encoded)})\n" \
             f"def decode(r): return ({''.join(d + ', ' for d in decoded)})\n"
    exec(compile(source, "<row codec>", "exec"), namespace)  # noqa: S102 - generated from column types only
    return namespace["encode"], namespace["decode"]
