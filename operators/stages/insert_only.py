"""What the insert-only stages share (Olteanu §4.6): the check that their input only grows, and
the reason EXPLAIN gives for them.

The planner chooses an insert-only stage only over input that changes by inserts alone
(rules/insert_only.py), and validation rejects the deletes of the tables it relies on. Within one
batch a monotone upstream may still send a row and then its retraction (a static table's first batch
may insert and delete a row; the compiled runner pushes changes one at a time), so a stage judges a
batch by its net change per row, which can only be non-negative. A negative one means the plan's
premise broke: the stage raises before touching its state, so the batch is undone.
"""

from __future__ import annotations

from operators.stages.base import Change


class RetractionError(RuntimeError):
    """An insert-only stage received a row's net retraction: its input was not insert-only after all."""


def net_inserts(stage: str, key: tuple, changes: list[Change], tables: tuple[str, ...]) -> list[Change]:
    """``changes`` as inserts: themselves when every weight is positive, else netted per row (zero nets
    dropped); raises ``RetractionError`` naming the row if a net weight is negative."""
    if all(change.weight > 0 for change in changes):
        return changes
    net: dict[tuple, int] = {}
    for port, row, weight in changes:
        net[port, row] = net.get((port, row), 0) + weight
    for (_, row), weight in net.items():
        if weight < 0:
            raise RetractionError(
                f"{stage}: key {key!r} lost row {row!r} (net weight {weight:+d}); the plan keeps no more than "
                f"insert-only input needs, and relies on {', '.join(tables)} never losing a row")
    return [Change(port, row, weight) for (port, row), weight in net.items() if weight]


def insert_only_reason(tables: tuple[str, ...], what: str) -> str:
    """EXPLAIN's why for a stage relying on ``tables`` being insert-only; ``what`` says what it gains."""
    return (f"insert-only: {', '.join(tables)} only gain rows (declared; validation rejects their deletes) and "
            f"nothing between them and this stage retracts a row, so {what} (Olteanu §4.6)")
