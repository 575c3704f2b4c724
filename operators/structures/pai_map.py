"""PAI maps: a nested aggregate correlated by equality, maintained in O(1) per change (RPAI §2.1.3).

In Example 2.1 the inner aggregate ``SUM(r2.B) WHERE r2.A = r.A`` has one value per group ``A``,
and the outer predicate compares it with a value that is the same for every outer tuple (the
uncorrelated ``0.5 * SUM(r1.B)``). So the whole result is one lookup in a *partial aggregate index*
that maps each inner-aggregate value to the sum of the outer aggregates of the groups having it.
A change to one tuple touches one group: its outer aggregate moves from the index entry of the
group's old inner value to the entry of the new one (Figure 1c, lines 9-18), with no iteration.

The index is a hash map by default, which answers the paper's ``=`` predicate in O(1). For ``<``,
``<=``, ``>``, ``>=`` pass an ``RPAITree`` as the index: updates stay point updates (O(log n)) and
the result is a prefix sum, ``index.get_sum(value)``.

Example 2.1, ``SELECT SUM(r.A * r.B) FROM R r WHERE 0.5 * (SELECT SUM(r1.B) FROM R r1)
= (SELECT SUM(r2.B) FROM R r2 WHERE r2.A = r.A)``, over rows ``(A, B)``; SQL's NULL for an empty SUM
is read as 0, as in the paper:

>>> pai, sum_b = PAIMap(), 0
>>> for a, b, weight in [(1, 2, +1), (1, 2, +1), (2, 4, +1)]:
...     pai.update(a, inner_delta=weight * b, outer_delta=weight * a * b)
...     sum_b += weight * b
>>> pai.outer_total_at(0.5 * sum_b)   # both groups have SUM(B) = 4 = 0.5 * 8
12
>>> pai.update(1, inner_delta=-2, outer_delta=-2)   # delete one (1, 2)
>>> sum_b -= 2
>>> pai.inner(1), pai.outer_total_at(0.5 * sum_b)
(2, 0)
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Protocol

from operators.structures.rpai_tree import Number


class AggregateIndex(Protocol):
    """What a PAI map needs from its index: read a key (0 when absent) and add to it."""

    def get(self, key: Number) -> Number: ...

    def add(self, key: Number, delta: Number) -> None: ...


class HashAggregateIndex:
    """The paper's PAI map proper: a hash map from aggregate values to partial aggregates.

    Entries whose value reaches 0 are dropped, so absent and 0 are the same.
    """

    def __init__(self) -> None:
        self._entries: dict[Number, Number] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: Number) -> Number:
        return self._entries.get(key, 0)

    def add(self, key: Number, delta: Number) -> None:
        value = self._entries.get(key, 0) + delta
        if value == 0:
            self._entries.pop(key, None)
        else:
            self._entries[key] = value

    def items(self) -> list[tuple[Number, Number]]:
        return sorted(self._entries.items())


class PAIMap:
    """Per-group inner and outer aggregates plus the index from inner value to outer total.

    ``inner`` is the correlated nested aggregate of a group (``map3`` in Figure 1c), ``outer`` the
    aggregate the query returns (``map1``), and ``index`` sums ``outer`` by ``inner`` (``aggrMap``).
    A group whose inner and outer aggregates are both 0 adds nothing to any result and is dropped.
    Aggregates must be streamable (SUM, COUNT; AVG as a SUM and a COUNT map), as §4.3.2 requires.
    """

    def __init__(self, index: AggregateIndex | None = None) -> None:
        self._inner: dict[Hashable, Number] = {}
        self._outer: dict[Hashable, Number] = {}
        self._index = HashAggregateIndex() if index is None else index

    def __len__(self) -> int:
        return len(self._inner)

    @property
    def index(self) -> AggregateIndex:
        return self._index

    def inner(self, group: Hashable) -> Number:
        """The correlated nested aggregate of ``group`` (0 for a group never seen)."""
        return self._inner.get(group, 0)

    def outer(self, group: Hashable) -> Number:
        """The outer aggregate of ``group`` (0 for a group never seen)."""
        return self._outer.get(group, 0)

    def outer_total_at(self, inner_value: Number) -> Number:
        """The sum of the outer aggregates of the groups whose inner aggregate equals ``inner_value``."""
        return self._index.get(inner_value)

    def update(self, group: Hashable, inner_delta: Number, outer_delta: Number) -> None:
        """Apply one weighted change of ``group``: its inner and outer aggregates grow by the deltas.

        A tuple on the inner side only (``r2``) has ``outer_delta = 0``; one on the outer side only
        (``r``) has ``inner_delta = 0``; in Example 2.1 the same relation plays both roles.
        """
        old_inner, old_outer = self.inner(group), self.outer(group)
        new_inner, new_outer = old_inner + inner_delta, old_outer + outer_delta
        self._index.add(old_inner, -old_outer)
        self._index.add(new_inner, new_outer)
        if new_inner == 0 and new_outer == 0:
            self._inner.pop(group, None)
            self._outer.pop(group, None)
        else:
            self._inner[group] = new_inner
            self._outer[group] = new_outer
