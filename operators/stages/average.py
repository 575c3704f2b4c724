"""AVG from a running sum and count, as Spark computes it: the one place every aggregating stage divides.

A DECIMAL(p,s) column averages to DECIMAL(p+4,s+4), rounded HALF_UP. The scale s is read from the
sum itself: every DECIMAL value is quantized to its type's scale when it is read or computed
(planner/ir/values.py), and sums of such values keep that exponent. Integers and doubles average
as double.
"""

from __future__ import annotations

import decimal

#: Exact for any sum of DECIMAL(38) values; the quotient is then rounded to its scale.
_CONTEXT = decimal.Context(prec=100, rounding=decimal.ROUND_HALF_UP)
AVG_EXTRA_SCALE = 4


def average(total: object, count: int) -> object:
    if isinstance(total, decimal.Decimal):
        scale = decimal.Decimal(1).scaleb(total.as_tuple().exponent - AVG_EXTRA_SCALE)
        return _CONTEXT.divide(total, count).quantize(scale, context=_CONTEXT)
    return total / count
