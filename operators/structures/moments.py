"""The second-moment ring of STDDEV/VARIANCE: a value's sum and sum of squares, kept exactly.

Spark computes ``var_samp``, ``var_pop``, ``stddev_samp`` and ``stddev_pop`` (``CentralMomentAgg``)
from the count ``n``, the mean and ``M2 = Σ(x - mean)²``, merged Welford-style in doubles. Welford's
update has no inverse that survives a delete: subtracting a value back out of a running mean and
M2 in floating point leaves residue, and a large value inserted and deleted again wipes out the
precision of every small one. So a maintained group keeps instead the ring payload ``(Σx, Σx²)``
(the count is the aggregate's non-NULL count, kept beside it) with F-IVM's sum-ring addition: a
delete adds ``-1`` times what its insert added, O(1) per change. The sums are *exact*: every value
is an integer numerator over a scale (1 for integers, ``10^s`` for a DECIMAL of scale s, the power
of two of a double's ``as_integer_ratio``), so Python's big integers add and subtract it back
exactly, and after any stream of inserts and deletes the payload is what the present values give.
At read time ``n·Σx² − (Σx)²`` is an exact integer, and one correctly rounded integer division
gives the variance: the result is the exact variance rounded once, at least as accurate as
Spark's Welford result (the two agree to a relative 1e-15 or so, not bit for bit; tests compare
with a relative tolerance). Spark's own rounding through doubles is not reproduced: a BIGINT
beyond 2^53 or a DECIMAL is used exactly where Spark first casts it to DOUBLE.

NaN and ±Infinity cannot be summed exactly; they are counted apart (as ``DoubleSum`` counts a SUM's)
and make the result NaN while present, which is what Spark's Welford update gives for any group
holding one (``inf - inf``). Spark's divisions by zero are NULL (``spark.sql.legacy.statisticalAggregate``
is false, its default): a sample variance of one value is NULL, a population variance of one value 0.
"""

from __future__ import annotations

import math
from decimal import Decimal

from operators.doubles import NAN

#: Spark's names: the sample variants divide by n - 1, the population ones by n.
SAMPLE_VARIANCE = frozenset({"stddev", "stddev_samp", "std", "variance", "var_samp"})
POPULATION_VARIANCE = frozenset({"stddev_pop", "var_pop"})
VARIANCE_FUNCTIONS = SAMPLE_VARIANCE | POPULATION_VARIANCE
_STANDARD_DEVIATIONS = frozenset({"stddev", "stddev_samp", "std", "stddev_pop"})


class Moments:
    """``(Σx·scale, Σ(x·scale)², scale, non-finite count)``: an element of the sum ring over (Σx, Σx²).

    Immutable; ``+`` and ``*`` by an integer weight are all a ring aggregate does to a running sum
    (``v + a * w``), so the aggregate stages and the compiled ring code keep a ``Moments`` where they
    keep a number. Two payloads of different scales add over their least common multiple (within
    one aggregate the scales are all powers of ten, or all of two: one divides the other).

    >>> running = moments(1) + moments(2) * 3 + moments(2.5)
    >>> variance("var_pop", running, 5), variance("var_samp", running + moments(2.5) * -1, 4)
    (0.24, 0.25)
    >>> variance("stddev", moments(7), 1) is None, variance("var_pop", moments(float("inf")), 1)
    (True, nan)
    """

    __slots__ = ("total", "squares", "scale", "non_finite")

    def __init__(self, total: int, squares: int, scale: int, non_finite: int):
        self.total, self.squares, self.scale, self.non_finite = total, squares, scale, non_finite

    def __add__(self, other: Moments) -> Moments:
        if other.scale == self.scale:
            return Moments(self.total + other.total, self.squares + other.squares, self.scale,
                           self.non_finite + other.non_finite)
        scale = math.lcm(self.scale, other.scale)
        mine, theirs = scale // self.scale, scale // other.scale
        return Moments(self.total * mine + other.total * theirs,
                       self.squares * mine * mine + other.squares * theirs * theirs, scale,
                       self.non_finite + other.non_finite)

    def __mul__(self, weight: int) -> Moments:
        return Moments(self.total * weight, self.squares * weight, self.scale, self.non_finite * weight)

    __rmul__ = __mul__

    def __repr__(self) -> str:
        return f"Moments(Σx={self.total}/{self.scale}, Σx²={self.squares}/{self.scale}², non-finite={self.non_finite})"


def moments(value: object) -> Moments:
    """One value's payload ``(x, x²)``: exact for an int, a Decimal or a finite float."""
    if isinstance(value, int):  # bool too: Spark refuses it at plan time
        return Moments(value, value * value, 1, 0)
    if isinstance(value, float):
        if value - value != 0.0:  # NaN or ±Infinity
            return Moments(0, 0, 1, 1)
        numerator, scale = value.as_integer_ratio()
        return Moments(numerator, numerator * numerator, scale, 0)
    if isinstance(value, Decimal):
        if not value.is_finite():
            return Moments(0, 0, 1, 1)
        numerator, denominator = value.as_integer_ratio()  # exact, whatever the Decimal context's precision
        exponent = value.as_tuple().exponent
        if exponent < 0:  # over 10^s, one scale for every value of a DECIMAL(p, s) column
            numerator, denominator = numerator * (10 ** -exponent // denominator), 10 ** -exponent
        return Moments(numerator, numerator * numerator, denominator, 0)
    raise TypeError(f"a variance of {type(value).__name__} values is not defined")


def variance(func: str, payload: Moments | None, count: int) -> float | None:
    """Spark's ``func`` (a name of ``VARIANCE_FUNCTIONS``) of ``count`` values whose payload is ``payload``."""
    if count == 0 or (count == 1 and func in SAMPLE_VARIANCE):
        return None  # Spark: NULL where it would divide by zero (legacy.statisticalAggregate=false)
    if payload.non_finite:
        return NAN
    scale = payload.scale
    # n·Σx² − (Σx)² = n²·var_pop ≥ 0, exact; one rounding in the integer division below
    spread = count * payload.squares - payload.total * payload.total
    divisor = count * (count - 1 if func in SAMPLE_VARIANCE else count) * scale * scale
    try:
        result = spread / divisor
    except OverflowError:  # beyond DOUBLE's range: Spark's M2 overflows to Infinity too
        result = math.inf
    return math.sqrt(result) if func in _STANDARD_DEVIATIONS else result
