"""Held errors: a result row whose value is Spark's run-time error, kept as a row of the result.

Spark has no value for a query whose evaluation raises (``[DIVIDE_BY_ZERO]`` in ANSI mode): the
query fails. A maintained view over a database where that is so must still exist, take the next
batch and be right once a batch makes the query defined again: ``SELECT COUNT(*) / COUNT(DISTINCT s)
FROM events`` is 0/0 over the empty database, so without this the view could not even be created.

So where a stage computes an output row from its state (a group's aggregates through HAVING and the
select list: the lowering's ``hold_errors``), an evaluation that raises Spark's error gives an
``ErrorRow`` instead of a row. It is emitted and retracted as any row is: the stage's old output,
retracted by the next batch that touches the key, is recomputed from the old state as every batch
does, and evaluation is deterministic (non-deterministic functions are refused), so it gives the
same ``ErrorRow``, which cancels; nothing raises on the way. The runners send an ``ErrorRow`` to the
result, never to the stages downstream (``split_errors``): while any is held the view's value is
that error (``MaintainedView.result()`` raises it), and the stages downstream keep maintaining the
rows without it, so the view is right again as soon as the last error is retracted.

The Spark engine holds none yet: a stage emitting one fails the micro-batch with the error
(``raise_emitted_errors``), as before, and a view whose value over the empty database is an error
is refused when it starts (operators/runtime/spark_runner.py).

An error evaluating one input row (an aggregate's argument, a selection, a join's projection) is
not held: the batch is rejected with Spark's error and every state stays as it was (issue 9), since
a held error there would have to be counted into every aggregate above it.
"""

from __future__ import annotations

from collections.abc import Iterable

from operators.zset import Changelog, Row


class ErrorRow(tuple):
    """(error class, message) of Spark's error standing in for a result row; equal only to another
    ``ErrorRow`` with the same error, never to a row of values."""

    __slots__ = ()

    def __new__(cls, error_class: str, message: str) -> ErrorRow:
        return tuple.__new__(cls, (error_class, message))

    def __getnewargs__(self) -> tuple[str, str]:  # pickled as its two fields (Spark state, compiled state)
        return tuple(self)

    def __eq__(self, other: object) -> bool:
        return type(other) is ErrorRow and tuple.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash((ErrorRow, tuple(self)))

    @property
    def error_class(self) -> str:
        return self[0]

    @property
    def detail(self) -> str:
        """The message without its error class."""
        return self[1]

    @property
    def message(self) -> str:
        """Spark's one line: ``[ERROR_CLASS] what happened``."""
        return f"[{self[0]}] {self[1]}"

    def __repr__(self) -> str:
        return f"ErrorRow({self.message!r})"


def is_error(row: Row) -> bool:
    return row.__class__ is ErrorRow


def split_errors(changes: Iterable[tuple[Row, int]]) -> tuple[Changelog, Changelog]:
    """``changes`` as (its changes of rows, its changes of ``ErrorRow``s)."""
    rows: Changelog = []
    errors: Changelog = []
    for change in changes:
        (errors if change[0].__class__ is ErrorRow else rows).append(change)
    return rows, errors


class HeldErrorRaised(RuntimeError):
    """Spark's run-time error of a held ``ErrorRow``, raised where the error cannot be held (the Spark
    engine's stages: the micro-batch fails, as the batch query would)."""

    def __init__(self, row: ErrorRow):
        super().__init__(row.message)
        self.error_class = row.error_class


def raise_emitted_errors(changes: Iterable[tuple[Row, int]]) -> None:
    """Raise the first ``ErrorRow`` that ``changes`` insert (the Spark engine holds none)."""
    for row, weight in changes:
        if weight > 0 and row.__class__ is ErrorRow:
            raise HeldErrorRaised(row)
