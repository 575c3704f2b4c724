"""A stateless selection and projection of changelog rows."""

from __future__ import annotations

from collections.abc import Callable

from operators.stages.base import Change, KeyedStage, StageDescription
from operators.zset import Changelog, Row, consolidate


class MapStage(KeyedStage):
    """A stateless selection + projection of rows (keyed by the row itself; keeps no state)."""

    codegen_kind = "map"

    def __init__(self, name: str, mapping: Callable[[Row], Row | None], output_columns: tuple[str, ...],
                 description: StageDescription):
        self.name = name
        self.mapping = mapping
        self.output_columns = output_columns
        self.description = description

    def key_of(self, port: int, row: Row) -> tuple:
        return row

    def process(self, key: tuple, state: None, changes: list[Change]) -> tuple[None, Changelog]:
        out = []
        for change in changes:
            mapped = self.mapping(change.row)
            if mapped is not None:
                out.append((mapped, change.weight))
        return None, consolidate(out)

    def describe(self) -> StageDescription:
        return self.description
