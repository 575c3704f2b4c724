"""UNION [ALL], EXCEPT and INTERSECT of two maintained queries (AJU Theorem 14's ∪ and −).

Keyed by the whole row: per row the multiplicities on the left and on the right. The result's
multiplicity is a function of the two (sum for UNION ALL, 0/1 for the set forms), so each change
costs O(1) and the stage emits the difference of that function before and after.
"""

from __future__ import annotations

from operators.stages.base import Change, KeyedStage, StageDescription, UnchangedOldState
from operators.zset import Changelog, Row

MULTIPLICITY = {
    "union_all": lambda left, right: left + right,
    "union": lambda left, right: int(left + right > 0),
    "except": lambda left, right: int(left > 0 and right == 0),
    "intersect": lambda left, right: int(left > 0 and right > 0),
}


class SetOperationStage(UnchangedOldState, KeyedStage):
    LEFT, RIGHT = 0, 1

    def __init__(self, kind: str, output_columns: tuple[str, ...]):
        if kind not in MULTIPLICITY:
            raise ValueError(f"unsupported set operation {kind!r}")
        self.name, self.kind, self.output_columns = kind.replace("_", " ").upper(), kind, output_columns
        self.multiplicity = MULTIPLICITY[kind]

    def key_of(self, port: int, row: Row) -> tuple:
        return row

    def process(self, key: tuple, state: list | None, changes: list[Change]) -> tuple[list | None, Changelog]:
        counts = list(state) if state else [0, 0]  # a new list: undo returns the old one
        before = self.multiplicity(*counts)
        for change in changes:
            counts[change.port] += change.weight
        after = self.multiplicity(*counts)
        out = [(key, after - before)] if after != before else []
        return (counts if any(counts) else None), out

    def describe(self) -> StageDescription:
        return StageDescription(operator=f"SetOperation ({self.name})", inputs="two maintained queries",
                                state="per distinct row: its multiplicity on each side", key="the whole row",
                                update_cost="O(1) per change", why="∪ and − need only each row's two counts (AJU Thm 14)")
