"""Z-sets: rows with integer weights (+1 insert, −1 delete). Batches of changes commute.

A changelog is a list of ``(row, weight)``; ``consolidate`` sums the weights of equal rows and drops
zeros, which is how a stage turns "delete old, insert new" of an unchanged row into no change.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from decimal import Decimal
from typing import Any

Row = tuple
Changelog = list[tuple[Row, int]]
#: An expression compiled at lowering time into a function of a row (selections, keys, aggregate arguments).
Compiled = Callable[[Row], object]


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
