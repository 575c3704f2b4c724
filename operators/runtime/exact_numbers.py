"""Numbers read into a column of another numeric kind, exactly or not at all: the one statement of the
rule, for Arrow columns (the stream readers, local and Spark) and single values (the Python API).

pyarrow's "safe" cast refuses most lossy casts (a fraction into an integer, an integer beyond 2**53
into a double, a decimal of larger scale into a smaller one, a value out of range, a date64 with a
time of day into a date32), but not all, and refuses some exact ones:

- float → decimal128 rounds: 22.811 becomes 22.81 in a ``decimal(10,2)``, 1.005 becomes 1.00;
- decimal128 → double rounds to the nearest double: 12345678901234567890.1 becomes 1.2345678901234567e19;
- float → integer takes a float beyond 2**53, which stands for 2**(e-52) integers at once;
- int64 → decimal128(p, 0) refuses every value, fitting or not, when p < 19 (a check of the type).

What "exact" means between a float and a decimal. A float holds a binary fraction; its value as a
decimal number is taken to be its *shortest round-trip text* (Python's ``repr``, Arrow's float to
string cast, in the float's own width): the fewest digits that read back as the same float. So the
float 22.81 is the decimal 22.81, though its binary value is 22.8099999999999987210...: the producer
wrote 22.81, the float is the one nearest to it, every engine prints it as 22.81, and Spark itself turns
a double into a decimal through that text (``Decimal(d)`` is ``BigDecimal(Double.toString(d))``). By
the binary value no fractional float would be exactly a ``decimal(p,2)``, and no float stream could
fill a DECIMAL column at all. The float 1.005 is the decimal 1.005: three fractional digits, so not a
``decimal(15,2)``, refused rather than rounded; and since a bare ``DECIMAL`` is ``decimal(10,0)``,
every fractional float is refused there. The other way, a decimal is read into a DOUBLE column when
the double's shortest text is the decimal's value again (0.10 is the double 0.1).

An integer column takes a float that is a whole number of magnitude at most 2**53, where each float
is exactly one integer and each integer one float: the mirror of Arrow's rule for an integer into a
double, which ``exact_number`` applies to Python ints too.
"""

from __future__ import annotations

import decimal
import math

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from catalog import types

#: Integers of magnitude up to this are exactly one double each, and the reverse.
EXACT_FLOAT_INTEGERS = 2**53


def exact_cast(column: pa.ChunkedArray | pa.Array, target: pa.DataType) -> pa.ChunkedArray | pa.Array:
    """``column`` cast to ``target`` with no value changed; ``pa.ArrowInvalid`` when one would be."""
    source = column.type
    if pa.types.is_floating(source) and pa.types.is_decimal(target):
        # through the shortest text: Arrow's string → decimal cast refuses a digit it would drop
        return pc.cast(pc.cast(column, pa.string()), target)
    if pa.types.is_floating(source) and pa.types.is_integer(target):
        if pc.any(pc.greater(pc.abs(column), EXACT_FLOAT_INTEGERS)).as_py():
            raise pa.ArrowInvalid(f"a float beyond 2**53 is not exactly one integer ({target})")
        return column.cast(target)
    if pa.types.is_integer(source) and pa.types.is_decimal(target):
        return column.cast(pa.decimal128(types.MAX_PRECISION, 0)).cast(target)  # checks each value's digits
    if pa.types.is_decimal(source) and pa.types.is_floating(target):
        doubles = column.cast(target)
        same = pc.all(pc.equal(pc.cast(pc.cast(doubles, pa.string()), source), column)).as_py()
        if same is not False:  # None: every value NULL
            return doubles
        raise pa.ArrowInvalid(f"a {source} value is not exactly a {target}")
    return column.cast(target)


#: What a cast that would change a value (or cannot be made) raises.
CAST_ERRORS = (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OverflowError)


def casts_exactly(column: pa.ChunkedArray | pa.Array, target: pa.DataType) -> bool:
    """Whether ``exact_cast`` casts ``column`` to ``target``."""
    try:
        exact_cast(column, target)
    except CAST_ERRORS:
        return False
    return True


def inexact_floats(column: pa.ChunkedArray | pa.Array, target: pa.DataType) -> np.ndarray:
    """Whether each value of a float ``column`` fails to cast exactly to the integer type ``target``
    (NULL does not), at numpy speed: the common lossy column (pandas turns an integer column with NULLs
    into floats). A float is a whole number in range exactly when truncating it to an integer and back
    gives it again; NaN, ±inf and out-of-range values truncate to something else."""
    truncated = column.cast(target, safe=False).cast(column.type, safe=False)
    same = pc.and_(pc.equal(truncated, column), pc.less_equal(pc.abs(column), EXACT_FLOAT_INTEGERS))
    return ~same.fill_null(True).to_numpy(zero_copy_only=False)


def exact_number(value: object, target: types.DataType) -> tuple[object, str | None]:
    """A Python float, int or Decimal as a value of the numeric type ``target`` (a float into an integer
    or DECIMAL column), with the reason it is not exactly one (None when it is). A value of another
    kind, or one already of ``target``'s kind, is returned as it is: ``conformed_value`` checks it."""
    if isinstance(value, bool):
        return value, None
    if isinstance(value, float) and target != types.DOUBLE and types.is_numeric(target):
        if not math.isfinite(value):
            return value, "it is not a finite number"
        if target in types.INTEGRAL:
            if not value.is_integer():
                return value, "it is not a whole number"
            if abs(value) > EXACT_FLOAT_INTEGERS:
                return value, "a float beyond 2**53 is not exactly one integer"
            return int(value), None
        return decimal.Decimal(repr(value)), None  # its shortest text: see the module docstring
    if isinstance(value, int) and target == types.DOUBLE and abs(value) > EXACT_FLOAT_INTEGERS:
        return value, "an integer beyond 2**53 is not exactly a double"
    if isinstance(value, decimal.Decimal) and target == types.DOUBLE:
        double = float(value)
        if decimal.Decimal(repr(double)) != value:
            return value, "it is not exactly a double"
        return double, None
    return value, None


def checked_by_value(python_type: type, target: types.DataType) -> bool:
    """Whether ``exact_number`` looks at a value of ``python_type`` for a ``target`` column, not only at
    its type: a float into an exact column, an int or a Decimal into a DOUBLE one."""
    if python_type is float:
        return target != types.DOUBLE and types.is_numeric(target)
    return python_type in (int, decimal.Decimal) and target == types.DOUBLE
