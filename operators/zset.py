"""Z-sets: rows with integer weights (+1 insert, −1 delete). Batches of changes commute.

A changelog is a list of ``(row, weight)``; ``consolidate`` sums the weights of equal rows and drops
zeros, which is how a stage turns "delete old, insert new" of an unchanged row into no change.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable

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
