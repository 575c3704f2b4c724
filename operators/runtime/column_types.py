"""What a catalog column type means to the runtime: its Arrow type, the Python values a row may hold,
and which Arrow types a stream column may have to be read into it.

Every check of a value against a column type lives here, keyed by the catalog column type, so the
stream reader, the stream writer and the validator cannot drift apart, and a change of the catalog's
types (Spark's ``int``/``bigint``/``decimal(p,s)``...) is made in this one table. The reader reads a
stream column only by an *exact* cast: a value that would change on the way (a fractional float, an
integer beyond 2**53 into a double) is a wrong value, and a column of another kind (numeric strings
or booleans into an integer column, timestamps into a date column) is a wrong type, because reading
either silently would compute something other than what the producer wrote.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable

import attrs
import pyarrow as pa

from catalog.schema import Column


def _is_string(arrow_type: pa.DataType) -> bool:
    """Strings in any Arrow layout, and binary: older Parquet writers (Hive, Impala) store strings as
    BINARY without the UTF8 annotation; the cast checks that the bytes are UTF-8."""
    if pa.types.is_dictionary(arrow_type):
        return _is_string(arrow_type.value_type)
    return any(is_kind(arrow_type) for is_kind in (pa.types.is_string, pa.types.is_large_string, pa.types.is_string_view,
                                                   pa.types.is_binary, pa.types.is_large_binary))


def _is_number(arrow_type: pa.DataType) -> bool:
    return pa.types.is_integer(arrow_type) or pa.types.is_floating(arrow_type) or pa.types.is_decimal(arrow_type)


@attrs.frozen
class RuntimeType:
    """One catalog column type as rows and files hold it."""

    arrow: pa.DataType  # the type written to stream files and the target of every read cast
    python: tuple[type, ...]  # the Python types a row's value may have (bool is never an int here)
    reads: Callable[[pa.DataType], bool]  # the Arrow types a stream column may have; values must cast exactly


RUNTIME_TYPES: dict[str, RuntimeType] = {
    # A float or decimal column into an integer one is read when each value is a whole number.
    "int": RuntimeType(pa.int64(), (int,), _is_number),
    "float": RuntimeType(pa.float64(), (int, float), _is_number),
    "string": RuntimeType(pa.string(), (str,), _is_string),
    "date": RuntimeType(pa.date32(), (datetime.date,), pa.types.is_date),
    "bool": RuntimeType(pa.bool_(), (bool,), pa.types.is_boolean),
}

ARROW_TYPES: dict[str, pa.DataType] = {name: runtime.arrow for name, runtime in RUNTIME_TYPES.items()}


def value_defect(column: Column, value: object, in_key: bool = False) -> str | None:
    """Why ``value`` cannot be ``column``'s value in a row (NULL where NULL is not allowed, a wrong
    Python type); None when it can. The reason names the column, the expected type and the value."""
    if value is None:
        if in_key:
            return f"NULL in key column {column.name}"
        return None if column.nullable else f"NULL in NOT NULL column {column.name}"
    allowed = RUNTIME_TYPES[column.type].python
    wrong_bool = isinstance(value, bool) and column.type != "bool"
    wrong_datetime = isinstance(value, datetime.datetime)  # a datetime is a date subclass that carries a time
    if not isinstance(value, allowed) or wrong_bool or wrong_datetime:
        return f"column {column.name} expects {column.type}, got {type(value).__name__} {value!r}"
    return None


def column_reads(column: Column, arrow_type: pa.DataType) -> bool:
    """Whether a stream column of ``arrow_type`` is read into ``column`` (value by value, exactly)."""
    return RUNTIME_TYPES[column.type].reads(arrow_type)
