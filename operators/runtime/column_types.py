"""What a catalog column type means to the runtime: its Arrow type, the Python values a row may hold,
and which Arrow types a stream column may have to be read into it.

Every check of a value against a column type lives here, keyed by the catalog column type, so the
stream reader, the stream writer and the validator cannot drift apart, and a change of the catalog's
types (Spark's ``int``/``bigint``/``decimal(p,s)``...) is made in this one place. The reader reads a
stream column only by an *exact* cast: a value that would change on the way (a fractional float, an
integer beyond 2**53 into a double) is a wrong value, and a column of another kind (numeric strings
or booleans into an integer column, timestamps into a date column) is a wrong type, because reading
either silently would compute something other than what the producer wrote.
"""

from __future__ import annotations

import datetime
import decimal
from collections.abc import Callable

import attrs
import pyarrow as pa

from catalog import types
from catalog.literals import shown_value, sql_literal
from catalog.schema import Column
from operators.doubles import NAN
from operators.runtime.exact_numbers import checked_by_value, exact_number


def _is_string(arrow_type: pa.DataType) -> bool:
    """Strings in any Arrow layout, and binary: older Parquet writers (Hive, Impala) store strings as
    BINARY without the UTF8 annotation; the cast checks that the bytes are UTF-8."""
    if pa.types.is_dictionary(arrow_type):
        return _is_string(arrow_type.value_type)
    return any(is_kind(arrow_type) for is_kind in (pa.types.is_string, pa.types.is_large_string, pa.types.is_string_view,
                                                   pa.types.is_binary, pa.types.is_large_binary))


def _is_naive_or_aware_timestamp(arrow_type: pa.DataType) -> bool:
    """Any Arrow timestamp into a TIMESTAMP column: one with a time zone is the instant it holds; a
    naive one is read as an instant in UTC, as Spark 4 reads a Parquet timestamp that is not adjusted
    to UTC into a TIMESTAMP column (its microseconds as they are, whatever the session time zone).
    Units other than microseconds are read when exact (a nanosecond fraction is a lossy value)."""
    return pa.types.is_timestamp(arrow_type)


def _is_naive_timestamp(arrow_type: pa.DataType) -> bool:
    """Only a naive Arrow timestamp into a TIMESTAMP_NTZ column: an instant has no one local
    date-time (which zone's would it be?), so a column with a time zone is a wrong type."""
    return pa.types.is_timestamp(arrow_type) and arrow_type.tz is None


def _is_number(arrow_type: pa.DataType) -> bool:
    return pa.types.is_integer(arrow_type) or pa.types.is_floating(arrow_type) or pa.types.is_decimal(arrow_type)


@attrs.frozen
class RuntimeType:
    """One catalog column type as rows and files hold it."""

    arrow: pa.DataType  # the type written to stream files and the target of every read cast
    python: tuple[type, ...]  # the Python types a row's value may have (bool is never an int here)
    reads: Callable[[pa.DataType], bool]  # the Arrow types a stream column may have; values must cast exactly


_RUNTIME_TYPES: dict[types.DataType, RuntimeType] = {
    # A float or decimal column into an integer one is read when each value is a whole number; the
    # Arrow int32 of an INT column makes the read cast refuse values beyond its range.
    types.INT: RuntimeType(pa.int32(), (int,), _is_number),
    types.BIGINT: RuntimeType(pa.int64(), (int,), _is_number),
    types.DOUBLE: RuntimeType(pa.float64(), (int, float), _is_number),
    types.STRING: RuntimeType(pa.string(), (str,), _is_string),
    types.DATE: RuntimeType(pa.date32(), (datetime.date,), pa.types.is_date),
    types.BOOLEAN: RuntimeType(pa.bool_(), (bool,), pa.types.is_boolean),
    # an instant: an aware datetime (in UTC once read); a local date-time: a naive one
    types.TIMESTAMP: RuntimeType(pa.timestamp("us", tz="UTC"), (datetime.datetime,), _is_naive_or_aware_timestamp),
    types.TIMESTAMP_NTZ: RuntimeType(pa.timestamp("us"), (datetime.datetime,), _is_naive_timestamp),
}


def runtime_type(column_type: types.DataType) -> RuntimeType:
    """How rows and files hold a column of ``column_type``: DECIMAL(p,s) as Arrow decimal128(p,s) and
    ``decimal.Decimal`` values (an int is accepted and converted exactly, see ``conformed_decimal``)."""
    if isinstance(column_type, types.DecimalType):
        return RuntimeType(pa.decimal128(column_type.precision, column_type.scale), (decimal.Decimal, int), _is_number)
    return _RUNTIME_TYPES[column_type]


def arrow_type(column_type: types.DataType) -> pa.DataType:
    return runtime_type(column_type).arrow


def value_defect(column: Column, value: object, in_key: bool = False) -> str | None:
    """Why ``value`` cannot be ``column``'s value in a row (NULL where NULL is not allowed, a wrong
    Python type, a number out of the type's range or needing rounding); None when it can. The
    reason names the column, the expected type and the value."""
    return conformed_value(column, value, in_key)[1]


def conformed_value(column: Column, value: object, in_key: bool = False) -> tuple[object, str | None]:
    """``value`` in its column's representation (a DECIMAL at exactly its column's scale), and the
    reason it cannot be the column's value (None when it can): the check and the conversion in one pass."""
    if value is None:
        if in_key:
            return value, f"NULL in key column {column.name}"
        return value, None if column.nullable else f"NULL in NOT NULL column {column.name}"
    written = value
    value, reason = exact_number(value, column.type)  # a float into an exact column, exactly or not at all
    if reason:
        return written, f"column {column.name} expects {column.type}, got {shown_value(written)}: {reason}"
    allowed = runtime_type(column.type).python
    wrong_bool = isinstance(value, bool) and column.type != types.BOOLEAN
    # a datetime is a date subclass that carries a time
    wrong_datetime = isinstance(value, datetime.datetime) and column.type not in types.TIMESTAMPS
    if not isinstance(value, allowed) or wrong_bool or wrong_datetime:
        return written, f"column {column.name} expects {column.type}, got {shown_value(written)}"
    if column.type in types.TIMESTAMPS:
        return _conformed_timestamp(column, value)
    if column.type in types.INTEGRAL:
        low, high = types.integral_range(column.type)
        if not low <= value <= high:
            return written, f"column {column.name} expects {column.type}, {sql_literal(written)} is out of its range"
    if isinstance(column.type, types.DecimalType):
        scaled, reason = conformed_decimal(value, column.type)
        if reason:
            return written, f"column {column.name} expects {column.type}, got {shown_value(written)}: {reason}"
        return scaled, None
    if value != value:  # a NaN: the one NaN, equal to itself and above every number (operators/doubles.py)
        return NAN, None
    return value, None


def _conformed_timestamp(column: Column, value: datetime.datetime) -> tuple[datetime.datetime, str | None]:
    """A TIMESTAMP's value is an aware datetime, made UTC (one representation per instant); a
    TIMESTAMP_NTZ's a naive one: a naive instant or an aware local date-time would be a guess."""
    aware = value.tzinfo is not None and value.utcoffset() is not None
    if column.type == types.TIMESTAMP:
        if not aware:
            return value, (f"column {column.name} expects timestamp (an instant: a datetime with a time zone), "
                           f"got the naive datetime {value.isoformat(' ')}")
        return value.astimezone(datetime.UTC), None
    if aware:
        return value, (f"column {column.name} expects timestamp_ntz (a local date-time: a datetime without a time zone), "
                       f"got {value.isoformat(' ')}")
    return value, None


def checked_by_type(column_type: types.DataType, python_type: type) -> bool:
    """Whether a value of ``python_type`` that ``conformed_value`` accepts for one value of the column
    accepts it for every value (beyond an integer column's range, which the validator checks apart):
    not a float into an exact column nor an int or Decimal into a DOUBLE one (``checked_by_value``), nor
    anything into a DECIMAL one (its digits count) or a TIMESTAMP one. The validator's cache of row type
    signatures relies on this."""
    if isinstance(column_type, types.DecimalType) or column_type in types.TIMESTAMPS:
        return False  # (a TIMESTAMP's datetime is aware or naive, and made UTC)
    return not checked_by_value(python_type, column_type)


def conformed_decimal(value: int | decimal.Decimal, dtype: types.DecimalType) -> tuple[decimal.Decimal, str | None]:
    """``value`` with exactly ``dtype``'s scale (the representation every DECIMAL value has, which AVG's
    result scale relies on), or the reason it needs rounding or more digits: nothing lossy is accepted."""
    exact = decimal.Decimal(value)
    scaled = exact.quantize(decimal.Decimal(1).scaleb(-dtype.scale), context=types.DECIMAL_CONTEXT)
    if scaled != exact:
        return scaled, f"it has more than {dtype.scale} fractional digits"
    if scaled.adjusted() >= dtype.precision - dtype.scale:
        return scaled, f"it has more than {dtype.precision - dtype.scale} integral digits"
    return scaled, None


def column_reads(column: Column, arrow_type: pa.DataType) -> bool:
    """Whether a stream column of ``arrow_type`` is read into ``column`` (value by value, exactly)."""
    return runtime_type(column.type).reads(arrow_type)
