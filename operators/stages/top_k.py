"""ORDER BY ... LIMIT k maintained under inserts and deletes, keyed by a constant.

The state is the whole result as an ordered multiset (sortedcontainers' SortedList: a well-kept
library giving O(log n) insert/delete, which a plain list cannot). After each batch the stage
compares the first k rows before and after and emits the difference. Ties are broken by the whole
row, so the top k is deterministic. Being keyed by a constant, it does not scale out.
"""

from __future__ import annotations

from collections.abc import Callable

from sortedcontainers import SortedList

from operators.stages.base import Change, KeyedStage, StageDescription
from operators.structures.ordered_multiset import Descending
from operators.zset import Changelog, Row, consolidate


def _nulls_first(value):
    return (value is not None, value)


class OrderedRowsStage(KeyedStage):
    """What the top-k stages share: the order of rows (ties broken by the whole row), a constant key
    and the description the lowering words. A base of its own, not ``TopKStage``, so a runner that
    gives ``TopKStage`` a layout of its own (the Spark runner's ``TopKProcessor``) takes only it."""

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


class TopKStage(OrderedRowsStage):
    """The whole result in an ordered multiset; the first k rows are the answer."""

    def process(self, key: tuple, state: SortedList | None, changes: list[Change]) -> tuple[SortedList | None, Changelog]:
        state = state if state is not None else SortedList()
        before = [row for _, row in state[: self.count]]
        # Net weights first: a row deleted and re-inserted in one batch must not be removed twice.
        # Every sort key is evaluated before the list changes, so an error leaves it as it was.
        entries = [((self.order_key(row), row), weight) for row, weight in consolidate((c.row, c.weight) for c in changes)]
        for entry, weight in entries:
            for _ in range(abs(weight)):
                if weight > 0:
                    state.add(entry)
                else:
                    state.remove(entry)
        after = [row for _, row in state[: self.count]]
        out = [(row, -1) for row in before] + [(row, 1) for row in after]
        return (state if state else None), consolidate(out)

