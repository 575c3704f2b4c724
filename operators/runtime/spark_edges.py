"""What flows between the stateful operators of the Spark runner's query: one uniform row schema.

Every edge of the query carries ``ROW_SCHEMA``: the destination stage, its key as canonical text
(``key_text``), the port, the row pickled, and the weight. One schema means one generic processor
class, unions that always line up, and no Spark type mapping of row values between stages: the rows
stay Python values end to end, exactly as the local runner sees them. Rows addressed to ``RESULT``
are the result's changes; rows addressed to ``REJECTED`` are quarantined input changes, whose
``key`` holds the reason and whose ``row`` holds ``(table, _seq, _op, row)``.
"""

from __future__ import annotations

import pickle
from decimal import Decimal
from typing import Any

from pyspark.sql.types import Row as SparkRow

ROW_SCHEMA = "stage int, key string, port int, row binary, w long"
#: ``stage`` of the rows a last stage emits: they go to the result, not to a stage.
RESULT = -1
#: ``stage`` of a quarantined input change (validation's rejects output).
REJECTED = -2
PICKLE_PROTOCOL = pickle.HIGHEST_PROTOCOL


def key_text(key: tuple) -> str:
    """The grouping column value of a stage key: ``repr`` of the tuple after normalising equal values.

    Spark groups by the text, the local runner by tuple equality, so equal keys must give equal text.
    ``repr`` is deterministic for the plain values rows hold (int, str, bool, None, date, Decimal,
    and float, whose repr is the shortest round-trip form). Two kinds of equal values print
    differently and are normalised: Decimals with different exponents (``1.0`` vs ``1.00``) and
    signed zeros. Values of different types that compare equal (``1`` vs ``1.0``) are not merged: a
    key column holds one type, the column's catalog type. (Pickle is no alternative: its bytes
    depend on object identity through the memo.)

    >>> key_text((1, "a", Decimal("2.50"), -0.0))
    "(1, 'a', Decimal('2.5'), 0.0)"
    """
    return repr(tuple(_canonical(value) for value in key))


def _canonical(value: Any) -> Any:
    if isinstance(value, Decimal):
        return (value + 0).normalize()
    if isinstance(value, float) and value == 0.0:
        return 0.0
    return value


def edge_row(stage: int, key: str, port: int, row: tuple, weight: int) -> SparkRow:
    """One row of ``ROW_SCHEMA``."""
    return SparkRow(stage=stage, key=key, port=port, row=pickle.dumps(row, PICKLE_PROTOCOL), w=weight)


def rejected_row(table: str, seq: int | None, op: int | None, row: tuple, reason: str) -> SparkRow:
    """A quarantined change, addressed to ``REJECTED``."""
    return edge_row(REJECTED, reason, 0, (table, seq, op, row), 0)
