"""Values as the Spark SQL literals a user would write: how every message shows a value.

A user reads an error in SQL's words, not Python's: ``DATE '2019-04-14'``, not
``datetime.date(2019, 4, 14)``; ``22.81``, not ``Decimal('22.81')``; ``'text'``, ``NULL``, ``TRUE``.
Validation errors (operators/runtime), refusals (planner/sql) and run-time errors (planner/ir/values.py)
all show values through ``sql_literal``. It lives in the catalog layer, the bottom one, because the
runtime's validator may not import the planner's IR.
"""

from __future__ import annotations

import datetime
import decimal
import math

from catalog import types

#: The Spark type name of each Python value kind, for "got <kind> <literal>" in messages (bool first:
#: it is an int subclass; datetime before date: it is a date subclass).
_KINDS: tuple[tuple[type, str], ...] = (
    (bool, "boolean"), (int, "integer"), (float, "double"), (decimal.Decimal, "decimal"), (str, "string"),
    (datetime.datetime, "timestamp"), (datetime.date, "date"), (bytes, "binary"),
)


def sql_literal(value: object, dtype: types.DataType | None = None) -> str:
    """``value`` as a Spark SQL literal; ``dtype`` (when known) shows an interval's unit and a DECIMAL at
    its scale, and a value of no SQL kind falls back to its Python repr.

    >>> sql_literal(datetime.date(2019, 4, 14)), sql_literal(decimal.Decimal("22.81")), sql_literal("it's")
    ("DATE '2019-04-14'", '22.81', "'it\\\\'s'")
    >>> sql_literal(None), sql_literal(True), sql_literal(float("nan")), sql_literal(3, types.IntervalType("day"))
    ('NULL', 'TRUE', "CAST('NaN' AS DOUBLE)", 'INTERVAL 3 DAY')
    """
    if value is None:
        return "NULL"
    if isinstance(dtype, types.IntervalType):
        amount, unit = value if isinstance(value, tuple) else (value, dtype.unit)
        return f"INTERVAL {amount} {unit.upper()}"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "CAST('NaN' AS DOUBLE)"
        if math.isinf(value):
            return f"CAST('{'-' if value < 0 else ''}Infinity' AS DOUBLE)"
        return repr(value)
    if isinstance(value, decimal.Decimal):
        return format(value, "f")
    if isinstance(value, str):
        # Spark's string literals escape with a backslash ('' is two adjacent literals, concatenated)
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if isinstance(value, datetime.datetime):
        return f"TIMESTAMP '{value.isoformat(sep=' ')}'"
    if isinstance(value, datetime.date):
        return f"DATE '{value.isoformat()}'"
    if isinstance(value, bytes):
        return f"X'{value.hex().upper()}'"
    if isinstance(value, tuple):
        return "(" + ", ".join(sql_literal(v) for v in value) + ")"
    return repr(value)


def value_kind(value: object) -> str:
    """The Spark type name of a Python value's kind (``double`` for a float...), for messages that say
    what a value was written as; the Python type name for a value of no SQL kind."""
    return next((name for kind, name in _KINDS if isinstance(value, kind)), type(value).__name__)


def shown_value(value: object) -> str:
    """``value`` as "<kind> <literal>" (``double 22.811``, ``string 'x'``), or the literal alone where it
    names its type (``DATE '2024-01-01'``, ``NULL``)."""
    if value is None or isinstance(value, (datetime.date, bytes)):
        return sql_literal(value)
    return f"{value_kind(value)} {sql_literal(value)}"
