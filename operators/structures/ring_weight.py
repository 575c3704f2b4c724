"""Ring payloads behind Python's arithmetic operators, so code written for int weights runs over a ring.

The GJT stage and its sorted groups add, multiply, negate and zero-test weights with ``+ * - bool``
and start sums at the int ``0``. A ``RingWeight`` wraps one payload of a ``rings.Ring`` and answers
those operators through the ring (an int operand n stands for ``n · one``), so ρ_root of a GJT can
hold ``(count, sums)`` of ``SumRing`` — SUM/COUNT grouped by the root's variables — without a
second copy of the algorithms. The int path stays as it was: only lifted leaves carry wrappers.
"""

from __future__ import annotations

from typing import Any

from operators.structures.rings import Ring


class RingWeight:
    """One payload of ``ring``; immutable, picklable when the ring is."""

    __slots__ = ("ring", "value")

    def __init__(self, ring: Ring, value: Any) -> None:
        self.ring, self.value = ring, value

    def _payload(self, other) -> Any:
        return other.value if type(other) is RingWeight else self.ring.from_int(other)

    def __add__(self, other) -> RingWeight:
        return RingWeight(self.ring, self.ring.add(self.value, self._payload(other)))

    __radd__ = __add__

    def __mul__(self, other) -> RingWeight:
        return RingWeight(self.ring, self.ring.mul(self.value, self._payload(other)))

    __rmul__ = __mul__

    def __neg__(self) -> RingWeight:
        return RingWeight(self.ring, self.ring.neg(self.value))

    def __sub__(self, other) -> RingWeight:
        return self + -RingWeight(self.ring, self._payload(other))

    def __rsub__(self, other) -> RingWeight:
        return -self + other

    def __bool__(self) -> bool:
        return not self.ring.is_zero(self.value)

    def __eq__(self, other) -> bool:
        return self.value == self._payload(other) if isinstance(other, RingWeight | int) else NotImplemented

    __hash__ = None  # mutable-looking arithmetic value: never a dict key

    def __getstate__(self):
        return self.ring, self.value

    def __setstate__(self, state) -> None:
        self.ring, self.value = state

    def __repr__(self) -> str:
        return f"RingWeight({self.value!r})"


def payload(ring: Ring, weight) -> Any:
    """The ring payload of a weight that is a ``RingWeight`` or an int (``n · one``)."""
    return weight.value if type(weight) is RingWeight else ring.from_int(weight)
