"""AVG from a running sum and count, as Spark computes it: the one place every aggregating stage divides.

A DECIMAL(p,s) column averages to DECIMAL(p+4,s+4), rounded HALF_UP. The scale s is read from the
sum itself: every DECIMAL value is quantized to its type's scale when it is read or computed
(planner/ir/values.py), and sums of such values keep that exponent. Integers and doubles average
as double.
"""

from __future__ import annotations

import decimal

from catalog.types import DECIMAL_CONTEXT

AVG_EXTRA_SCALE = 4


def average(total: object, count: int) -> object:
    if isinstance(total, decimal.Decimal):
        scale = decimal.Decimal(1).scaleb(total.as_tuple().exponent - AVG_EXTRA_SCALE)
        return DECIMAL_CONTEXT.divide(total, count).quantize(scale, context=DECIMAL_CONTEXT)
    return total / count
