"""Seeded change streams built from row lives: each row an ``Entity`` (its first version, later
versions, deletes and re-inserts in time), a schema's rows a ``Stream`` written in the stream format
(the table's columns, ``_seq``, ``_op``). The user-view suite's generators
(``user_view_streams``, ``fintech_stream``, ``logistics_stream``) describe a business's half year
(2024-01-01 to 2024-06-30) with them; a new version of a present row becomes a delete of the old
one and an insert of the new one, as a database's change log has it.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from operators.runtime.stream import OP_COLUMN, SEQ_COLUMN
from planner.workloads.user_views import TableShape

START = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
DAYS = 182
HORIZON = DAYS * 86_400.0  # seconds after START


def at(seconds: float) -> dt.datetime:
    """The instant ``seconds`` after START, to the microsecond (a stream's TIMESTAMP precision)."""
    return START + dt.timedelta(microseconds=round(seconds * 1e6))


def day(seconds: float) -> dt.date:
    return at(seconds).date()


def money(value: float) -> Decimal:
    return Decimal(f"{value:.2f}")


class Entity:
    """One row's life: its first version, later versions, deletes and re-inserts, each at a time.

    ``changes`` turns the life into stream changes in time order: a new version of a present row is
    a delete of the old one and an insert of the new one; a version set while the row is deleted is
    what a later re-insert brings back."""

    def __init__(self, stream: Stream, table: str, born: float, row: dict[str, Any]):
        self.stream, self.table = stream, table
        self.row = dict(row)  # the latest version set so far (by call order, which is time order per entity)
        self.events: list[tuple[float, int, str, dict | None]] = [(born, stream.tick(), "create", dict(row))]
        stream.entities.append(self)

    @property
    def last(self) -> float:
        return max(time for time, *_ in self.events)

    def set(self, time: float, **values: Any) -> Entity:
        self.row.update(values)
        self.events.append((max(time, self.last + 1e-3), self.stream.tick(), "set", dict(self.row)))
        return self

    def delete(self, time: float) -> Entity:
        self.events.append((max(time, self.last + 1e-3), self.stream.tick(), "delete", None))
        return self

    def restore(self, time: float) -> Entity:
        self.events.append((max(time, self.last + 1e-3), self.stream.tick(), "restore", None))
        return self

    def changes(self) -> Iterator[tuple[float, int, str, int, dict]]:
        present, current = False, None
        for time, tick, kind, row in sorted(self.events, key=lambda e: (e[0], e[1])):
            if kind == "create":
                present, current = True, row
                yield time, tick, self.table, +1, row
            elif kind == "set":
                if present:
                    yield time, tick, self.table, -1, current
                    yield time, tick, self.table, +1, row
                current = row
            elif kind == "delete" and present:
                present = False
                yield time, tick, self.table, -1, current
            elif kind == "restore" and not present:
                present = True
                yield time, tick, self.table, +1, current


class Stream:
    """The entities of one schema, written as its stream files."""

    def __init__(self, shapes: dict[str, TableShape]):
        self.shapes = shapes
        self.entities: list[Entity] = []
        self._ticks = 0

    def tick(self) -> int:
        self._ticks += 1
        return self._ticks

    def add(self, table: str, born: float, **row: Any) -> Entity:
        unknown = set(row) - set(self.shapes[table].column_names)
        assert not unknown, f"{table} has no column(s) {unknown}"
        return Entity(self, table, born, row)

    def write(self, out_dir: Path) -> dict[str, int]:
        """One ``<table>.parquet`` per table under ``out_dir``; returns the changes per table."""
        changes = sorted((c for e in self.entities for c in e.changes()), key=lambda c: (c[0], c[1]))
        by_table: dict[str, list[tuple[int, int, dict]]] = {name: [] for name in self.shapes}
        for number, (_, _, table, op, row) in enumerate(changes):
            by_table[table].append((10 + 3 * number, op, row))  # gaps in _seq, as a real log has
        out_dir.mkdir(parents=True, exist_ok=True)
        for name, shape in self.shapes.items():
            rows = by_table[name]
            schema = shape.arrow_schema()
            columns = [pa.array([row.get(field.name) for _, _, row in rows], field.type) for field in schema]
            columns += [pa.array([seq for seq, _, _ in rows], pa.int64()), pa.array([op for _, op, _ in rows], pa.int8())]
            fields = [*schema, pa.field(SEQ_COLUMN, pa.int64(), nullable=False), pa.field(OP_COLUMN, pa.int8(), nullable=False)]
            pq.write_table(pa.Table.from_arrays(columns, schema=pa.schema(fields)), out_dir / f"{name}.parquet")
        return {name: len(rows) for name, rows in by_table.items()}


def pick(rng: random.Random, weighted: dict[Any, float]) -> Any:
    return rng.choices(list(weighted), weights=list(weighted.values()))[0]


def zipf(rng: random.Random, items: list, skew: float = 1.1) -> Any:
    """A popular item more often: item i with weight 1/(i+1)^skew (best sellers, heavy users)."""
    return rng.choices(items, weights=[1 / (i + 1) ** skew for i in range(len(items))])[0]


def maybe(rng: random.Random, probability: float, value: Any) -> Any:
    """``value``, or NULL with ``probability``."""
    return None if rng.random() < probability else value


FIRST = ["Anna", "Ben", "Chloe", "David", "Emma", "Felix", "Grace", "Hugo", "Ida", "Jonas", "Kira", "Liam",
         "Mia", "Noah", "Olga", "Paul"]
LAST = ["Schmidt", "Meyer", "Smith", "Garcia", "Rossi", "Dubois", "Novak", "Jensen", "Silva", "Kowalski"]
