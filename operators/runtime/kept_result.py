"""The local engine's current result, kept batch by batch inside the batch (the runner's ``keep``).

A view's reads must sort nothing, so the result is kept as an ordered multiset in the presentation
order, and each batch applies only the rows it touched, O(delta log result). The runner calls ``keep``
with the batch's result changes before the batch commits, so a failure here (which only an internal
error causes) undoes the batch like any stage's. Held errors (operators/held_errors.py) are kept
apart: while any is held, the view's value is that error. In pull mode (a result enumerated from a
stage's state) no rows are kept, only the held errors.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from operators.held_errors import split_errors
from operators.structures.ordered_multiset import NegativeCountError, OrderedMultiset
from operators.zset import Changelog, Row, consolidate


class KeptResult:
    """``ordered``: the result's rows (None in pull mode); ``errors``: the held errors by count;
    ``changes``: the last batch's changes of rows that ``keep`` took, its held errors taken out."""

    def __init__(self, initial: Iterable[Row], presentation_order, enumerated: bool):
        rows, errors = split_errors((row, 1) for row in initial)
        self.errors: Counter = Counter(dict(consolidate(errors)))
        self.ordered = None if enumerated else OrderedMultiset(presentation_order, (row for row, _ in rows))
        self.changes: Changelog = []

    def keep(self, delta: Changelog) -> None:
        """Apply a batch's result changes: only the rows the batch touched (none in pull mode) to
        ``ordered``, its held errors to ``errors``; all or, on an internal error, nothing."""
        rows, errors = split_errors(delta)
        if errors:
            changed = Counter(self.errors)
            for error, weight in errors:
                changed[error] += weight
            if any(count < 0 for count in changed.values()):
                raise RuntimeError(f"internal error: a held error retracted more often than emitted: {errors}")
        if rows and self.ordered is not None:
            try:
                self.ordered.apply(rows)
            except NegativeCountError as error:
                raise RuntimeError(f"internal error: {error}") from None
        if errors:
            self.errors = +changed
        self.changes = rows
