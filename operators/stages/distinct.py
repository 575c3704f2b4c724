"""SELECT DISTINCT as a keyed stage, keyed by the result row.

Upstream emits the query's rows with multiplicities (a bag); DISTINCT shows each row once while
its multiplicity is positive. So the state per row is that multiplicity, and a change is emitted
only when it crosses zero: 0 → positive inserts the row, positive → 0 retracts it. A batch is
summed per row before the comparison, so the order of its changes does not matter. O(1) per change.
"""

from __future__ import annotations

from operators.stages.base import Change, KeyedStage, StageDescription, UnchangedOldState
from operators.zset import Changelog, Row


class DistinctStage(UnchangedOldState, KeyedStage):
    """The state is an int: ``process`` never changes the old one (undo returns it)."""

    def __init__(self, output_columns: tuple[str, ...]):
        self.name = "distinct"
        self.output_columns = output_columns

    def key_of(self, port: int, row: Row) -> tuple:
        return row

    def process(self, key: tuple, state: int | None, changes: list[Change]) -> tuple[int | None, Changelog]:
        before = state or 0
        after = before + sum(change.weight for change in changes)
        if after < 0:
            raise RuntimeError(f"{self.name}: row {key} has multiplicity {after} (a delete without its insert)")
        out: Changelog = []
        if before == 0 < after:
            out.append((key, 1))
        elif after == 0 < before:
            out.append((key, -1))
        return (after or None), out

    def describe(self) -> StageDescription:
        return StageDescription(
            operator="Distinct (multiplicity count)", inputs="result changes",
            state="per result row: its multiplicity", key="the result row",
            update_cost="O(1) per result change",
            why="a row is in a DISTINCT result while its multiplicity is positive: only crossings of zero change it",
        )
