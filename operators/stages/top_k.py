"""ORDER BY ... LIMIT k maintained under inserts and deletes, keyed by a constant.

The state is the multiset of input rows in order. After each batch the stage compares the first k
rows before and after and emits the difference (``TopKStage.step``, the stage's one statement of
its logic). Ties are broken by the whole row, so the top k is deterministic. Being keyed by a
constant, it does not scale out.

Where the rows live is the stage's state backend (``OrderedRows``): in memory, sortedcontainers'
SortedList (a well-kept library giving O(log n) insert/delete, which a plain list cannot); on Spark,
a MapState by chunk of rows plus a bounded buffer of the best ones (operators/runtime/spark_top_k.py),
so a batch touches O(changed + k) state instead of re-pickling every row.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from sortedcontainers import SortedList

from operators.stages.base import Change, KeyedStage, StageDescription
from operators.structures.ordered_multiset import Descending
from operators.zset import Changelog, Row, consolidate


def _nulls_first(value):
    return (value is not None, value)


class OrderedRowsStage(KeyedStage):
    """What the top-k stages share: the order of rows (ties broken by the whole row), a constant key
    and the description the lowering words. A base of its own, not ``TopKStage``, so a runner that
    gives ``TopKStage`` a state backend of its own (the Spark runner's ``TopKProcessor``) takes only it."""

    def __init__(self, name: str, sort_keys: tuple[tuple[Callable[[Row], object], bool], ...], count: int,
                 output_columns: tuple[str, ...], description: StageDescription):
        self.name = name
        self.sort_keys = sort_keys  # (value of row, ascending)
        self.count = count
        self.output_columns = output_columns
        self.description = description

    def order_key(self, row: Row) -> tuple:
        parts = []
        for value_of, ascending in self.sort_keys:
            value = _nulls_first(value_of(row))
            parts.append(value if ascending else Descending(value))
        return (tuple(parts), tuple(_nulls_first(v) for v in row))

    def key_of(self, port: int, row: Row) -> tuple:
        return ()

    def describe(self) -> StageDescription:
        return self.description


class OrderedRows(Protocol):
    """A top-k stage's state backend: the multiset of its input rows by order entry
    ``(order_key(row), row)``. In memory, ``SortedRows``; on Spark, the runner's MapState layout
    (operators/runtime/spark_top_k.py), which touches O(changed + k) state per batch."""

    def head(self, count: int) -> list[Row]:
        """The first ``count`` rows in order, each repeated by its multiplicity."""

    def add(self, entries: list[tuple[tuple, int]]) -> None:
        """Add each order entry's weight (negative: copies removed) to the multiset."""


class SortedRows:
    """The in-memory backend: every row in an ordered multiset (a ``SortedList`` of order entries, one
    per copy), which is also the stage's state as the local runners keep it."""

    def __init__(self, entries: SortedList):
        self.entries = entries

    def head(self, count: int) -> list[Row]:
        return [row for _, row in self.entries[:count]]

    def add(self, entries: list[tuple[tuple, int]]) -> None:
        state = self.entries
        for entry, weight in entries:
            for _ in range(abs(weight)):
                if weight > 0:
                    state.add(entry)
                else:
                    state.remove(entry)


class TopKStage(OrderedRowsStage):
    """The whole result in an ordered multiset; the first k rows are the answer. ``step`` is the
    stage's logic over any state backend (``OrderedRows``); ``process`` runs it in memory."""

    def step(self, rows: OrderedRows, changes: Changelog) -> Changelog:
        """Apply a batch's changes to ``rows``; the changes of the first k rows. Net weights first: a
        row deleted and re-inserted in one batch must not be removed twice. Every sort key is evaluated
        before the rows change, so an error leaves them as they were."""
        entries = [((self.order_key(row), row), weight) for row, weight in consolidate(changes)]
        before = rows.head(self.count)
        rows.add(entries)
        return consolidate([*((row, -1) for row in before), *((row, 1) for row in rows.head(self.count))])

    def process(self, key: tuple, state: SortedList | None, changes: list[Change]) -> tuple[SortedList | None, Changelog]:
        rows = SortedRows(state if state is not None else SortedList())
        out = self.step(rows, [(c.row, c.weight) for c in changes])
        return (rows.entries if rows.entries else None), out
