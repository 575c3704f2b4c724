"""Z-sets: rows with integer weights (+1 insert, −1 delete). Batches of changes commute.

A changelog is a list of ``(row, weight)``; ``consolidate`` sums the weights of equal rows and drops
zeros, which is how a stage turns "delete old, insert new" of an unchanged row into no change.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from decimal import Decimal
from typing import Any

Row = tuple
Changelog = list[tuple[Row, int]]
#: An expression compiled at lowering time into a function of a row (selections, keys, aggregate arguments).
Compiled = Callable[[Row], object]


class ChangeColumns(Sequence):
    """A changelog kept as its two columns, rows and weights: what the validator hands a runner for a
    table whose changes all passed, without a ``(row, weight)`` tuple made per change (a tenth of the
    compiled runner's time at SF 0.1). It reads as the changelog it stands for: iterating yields the
    pairs (at C speed, through ``zip``), indexing and slicing give pairs and lists of pairs, and it
    equals a list of the same pairs."""

    __slots__ = ("rows", "weights")

    def __init__(self, rows: list[Row], weights: list[int]):
        self.rows, self.weights = rows, weights

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[tuple[Row, int]]:
        return zip(self.rows, self.weights)  # noqa: B905 (one length, and the keyword costs per batch)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return list(zip(self.rows[index], self.weights[index]))  # noqa: B905
        return self.rows[index], self.weights[index]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]  (a list of pairs is not hashable either)

    def __repr__(self) -> str:
        return repr(list(self))


def consolidate(changes: Iterable[tuple[Row, int]]) -> Changelog:
    """Sum weights of equal rows, drop zero weights; deletes come before inserts."""
    if type(changes) is list and len(changes) <= 1:  # the common cases of keyed stages, without a dict
        return [changes[0]] if changes and changes[0][1] != 0 else []
    totals: dict[Row, int] = {}
    get = totals.get  # a plain dict: Counter's ``+=`` calls ``__missing__`` in Python for every new row
    for row, weight in changes:
        totals[row] = get(row, 0) + weight
    out = [(row, w) for row, w in totals.items() if w < 0]  # deletes first, each side in arrival order
    out += [(row, w) for row, w in totals.items() if w > 0]
    return out


def apply_changes(current: Counter, changes: Iterable[tuple[Row, int]]) -> None:
    """Add ``changes`` into the multiset ``current`` in place, removing rows whose count reaches zero."""
    for row, weight in changes:
        count = current[row] + weight
        if count:
            current[row] = count
        else:
            del current[row]


def key_text(key: tuple) -> str:
    """The canonical text of a key or row: ``repr`` of the tuple after normalising equal values.

    The Spark runner computes buckets and chunks from the text and groups a bucket's changes by it,
    and a paged GJT state names its pages by it, so equal keys must give equal text. ``repr`` is deterministic for the plain values rows hold
    (int, str, bool, None, date, Decimal, and float, whose repr is the shortest round-trip form). Two
    kinds of equal values print differently and are normalised: Decimals with different exponents
    (``1.0`` vs ``1.00``) and signed zeros. Values of different types that compare equal (``1`` vs
    ``1.0``) are not merged: a key column holds one type, the column's catalog type. (Pickle is no
    alternative: its bytes depend on object identity through the memo.)

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
