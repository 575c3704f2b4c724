"""Checking declared functional dependencies (``ivm.fd.<cols>``) and the ``ivm.static`` /
``ivm.insert_only`` flags of base tables, for ``Validator``.

Why: the F-IVM view-tree strategy maintains a Σ-reduct (Olteanu Def. 4.9) that equals the query only
while the declared dependencies hold in the data, so a batch that breaks one must be rejected, not
silently give a wrong result. Every declared dependency of every table a view reads is checked,
whether or not its plan relies on it: simpler, and a declared constraint the data breaks is bad input
anyway.

State per dependency ``X → Y``: for each determinant value, the dependent value its rows hold and how
many rows hold it, O(distinct determinants). A batch is judged as a whole (order-insensitive): its
deletes and inserts are netted per determinant first, so replacing ``(x, y1)`` by ``(x, y2)`` in one
batch keeps the dependency, whatever order the two changes come in.

NULLs (Spark has no FD semantics; the safe reading): a row with a NULL in any determinant column is
not constrained and not tracked; a NULL in a dependent column is a value like any other, so rows with
equal determinants must agree on it too.
"""

from __future__ import annotations

from collections.abc import Sequence

from catalog.literals import sql_literal
from catalog.schema import FunctionalDependency, Table
from operators.zset import Row


class DependencyState:
    """One declared dependency's state: determinant value → [dependent value, rows holding it]."""

    __slots__ = ("fd", "determinant", "dependent", "values")

    def __init__(self, table: Table, fd: FunctionalDependency):
        self.fd = fd
        self.determinant = tuple(table.column_names.index(c) for c in fd.determinant)
        self.dependent = tuple(table.column_names.index(c) for c in fd.dependent)
        self.values: dict[tuple, list] = {}

    def net(self, changes: Sequence[tuple[int, Row, int]]) -> dict[tuple, dict[tuple, int]]:
        """The batch's net count change per determinant and dependent value; ``changes`` are
        (position, row, op) of the accepted changes, NULL determinants skipped."""
        net: dict[tuple, dict[tuple, int]] = {}
        for _, row, op in changes:
            x = tuple(row[i] for i in self.determinant)
            if None in x:
                continue
            y = tuple(row[i] for i in self.dependent)
            counts = net.setdefault(x, {})
            counts[y] = counts.get(y, 0) + op
        return net

    def violations(self, changes: Sequence[tuple[int, Row, int]]) -> tuple[dict[int, str], list[tuple]]:
        """Why each inserted row that would break the dependency after the whole batch does, by
        position, and the state writes (determinant, [dependent, count] or None) that ``commit``
        makes when there is none. The value that stays is the stored one if some stored row keeps it,
        else the first inserted one (in ``_seq`` order); the inserts with another value are the offenders."""
        reasons: dict[int, str] = {}
        writes: list[tuple] = []
        for x, counts in self.net(changes).items():
            stored = self.values.get(x)
            if stored is not None:
                counts[stored[0]] = counts.get(stored[0], 0) + stored[1]
            surviving = {y: c for y, c in counts.items() if c > 0}
            if len(surviving) <= 1:
                writes.append((x, [*surviving.items()][0] if surviving else None))
                continue
            kept = stored[0] if stored is not None and stored[0] in surviving else None
            for position, row, op in changes:
                y = tuple(row[i] for i in self.dependent)
                if op != 1 or tuple(row[i] for i in self.determinant) != x or y not in surviving:
                    continue
                if kept is None:
                    kept = y
                elif y != kept:
                    reasons[position] = (f"breaks functional dependency {self.fd}: determinant {_show(x)} would "
                                         f"have dependent values {_show(kept)} and {_show(y)}")
        return reasons, writes

    def commit(self, writes: list[tuple]) -> None:
        values = self.values
        for x, held in writes:
            if held is None:
                values.pop(x, None)
            else:
                values[x] = list(held)


def table_defect(table: Table, op: int, loaded: bool) -> str | None:
    """Why ``op`` on ``table`` is refused by its flags: a delete from an insert-only table, any change
    to a static table once the view's first batch (its initial load) was committed."""
    if table.static and loaded:
        return (f"table {table.name} is static (ivm.static): it is loaded by the view's first batch and "
                "takes no changes after that")
    if table.insert_only and op == -1:
        return f"table {table.name} is insert-only (ivm.insert_only): deletes are not allowed"
    return None


def _show(values: tuple) -> str:
    return sql_literal(tuple(values))
