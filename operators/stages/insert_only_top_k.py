"""ORDER BY ... LIMIT k over input that only grows (Olteanu §4.6), keyed by a constant.

A row that falls out of the k best can never return when no row ever leaves, so the stage keeps the
k best rows only (a sorted list of at most k), where ``TopKStage`` keeps the whole result for the
delete that would need the next row. An insert no better than the k-th row costs one comparison;
one that enters costs O(log k) comparisons and an O(k) list shift. Order and ties as ``TopKStage``
(ties broken by the whole row), so both give the same rows. Not a ``TopKStage``: on Spark it runs
as any constant-keyed stage, its O(k) state pickled per batch, instead of ``TopKProcessor``'s layout
for a whole ordered result.
"""

from __future__ import annotations

from bisect import insort

from operators.stages.base import Change
from operators.stages.insert_only import net_inserts
from operators.stages.top_k import OrderedRowsStage
from operators.zset import Changelog, consolidate


class InsertOnlyTopKStage(OrderedRowsStage):
    """A top-k that keeps only the k best rows: its input must only grow.

    ``process`` fills a copy of the list (O(k) per batch, as reading the old and new top k costs
    anyway), so ``revert`` returns the old state as it was.
    """

    def __init__(self, *args, insert_only: tuple[str, ...], **kwargs):
        super().__init__(*args, **kwargs)
        self.insert_only = insert_only

    def process(self, key: tuple, state: list | None, changes: list[Change]) -> tuple[list | None, Changelog]:
        # every sort key is evaluated before the list changes, so an error leaves the state as it was
        entries = [((self.order_key(c.row), c.row), c.weight)
                   for c in net_inserts(self.name, key, changes, self.insert_only)]
        best = list(state) if state is not None else []
        before = [row for _, row in best]
        for entry, copies in entries:
            for _ in range(copies):
                if len(best) < self.count:
                    insort(best, entry)
                elif best and entry < best[-1]:
                    insort(best, entry)
                    best.pop()
                else:
                    break  # no better than the k-th row: neither are its other copies
        after = [row for _, row in best]
        out = [(row, -1) for row in before] + [(row, 1) for row in after]
        return (best or None), consolidate(out)

    def revert(self, key: tuple, old_state: list, new_state: list | None, changes: list[Change]) -> list:
        return old_state
