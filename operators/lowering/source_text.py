"""Small pieces of Python source the plan compiler (codegen.py, codegen_relations.py) writes."""

from __future__ import annotations


def tuple_source(row: str, positions: tuple[int, ...]) -> str:
    """Source of the tuple of ``row``'s ``positions``."""
    return "(" + "".join(f"{row}[{p}], " for p in positions).removesuffix(" ") + ")"


def key_source(row: str, positions: tuple[int, ...]) -> str:
    """Source of a compiled state's dict key: the value itself for one column (no 1-tuple to build and
    hash per change), else the tuple. Every writer of one state's keys goes through here."""
    return f"{row}[{positions[0]}]" if len(positions) == 1 else tuple_source(row, positions)


def indented(lines: list[str], levels: int = 1) -> list[str]:
    return ["    " * levels + line for line in lines]
