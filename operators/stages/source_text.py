"""Small pieces of Python source the compiled program is written of: by the stages' own templates
(``KeyedStage.source``) and by the program's assembly (operators/lowering/codegen.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from operators.stages.base import KeyedStage


def tuple_source(row: str, positions: tuple[int, ...]) -> str:
    """Source of the tuple of ``row``'s ``positions``."""
    return "(" + "".join(f"{row}[{p}], " for p in positions).removesuffix(" ") + ")"


def key_source(row: str, positions: tuple[int, ...]) -> str:
    """Source of a compiled state's dict key: the value itself for one column (no 1-tuple to build and
    hash per change), else the tuple. Every writer of one state's keys goes through here."""
    return f"{row}[{positions[0]}]" if len(positions) == 1 else tuple_source(row, positions)


def slot_change(slot: str, old: str, value: str, w: str, stage: str) -> list[str]:
    """Lines applying a ±1 change of ``value`` to a slot that holds one row of a primary key (a child's
    live row, R's tuple): ``old`` is the name the slot's value is read into first. Any other change
    does not fit the slot and raises (``_invariant``: never after validation)."""
    return [f"{old} = {slot}",
            f"if {w} == 1 and {old} is None:", f"    {slot} = {value}",
            f"elif {w} == -1 and {old} == {value}:", f"    {slot} = None",
            "else:", f"    _invariant({stage!r}, {value}, {w})"]


def indented(lines: list[str], levels: int = 1) -> list[str]:
    return ["    " * levels + line for line in lines]


class SourceUnit(Protocol):
    """A stage's place in the compiled program: its id names its state (``_S<id>``) and its locals."""

    id: int
    stage: KeyedStage


class ProgramText(Protocol):
    """What a stage's template (``KeyedStage.source``) asks of the program being written
    (operators/lowering/codegen.py's ``ProgramWriter``, which assembles the templates)."""

    def emit(self, unit: SourceUnit, row: str, weight: str, hot: bool) -> list[str]:
        """Lines sending (row, weight) downstream of ``unit``: inline when ``hot``, else by a call."""

    def bind(self, name: str, value: object) -> None:
        """Make ``value`` a name the program's functions read."""

    def constant(self, value: object, hint: str) -> str:
        """A program name holding ``value``."""

    def value_of(self, function: Callable, row: str) -> str:
        """Inline source of a compiled expression's value over ``row`` (operators/lowering/expr_source.py)."""

    def keeps(self, function: Callable, row: str) -> str:
        """Inline source of whether a compiled predicate keeps ``row``."""

    def relation_of(self, unit: SourceUnit) -> Any:
        """The ``FusedRelation`` (operators/stages/live_relation.py) a lookup unit is an index of, or None."""
