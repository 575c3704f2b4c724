"""Random insert/delete streams over any catalog, and streams that empty their tables again.

The workload generators beside this module model one benchmark each; these serve the checks that
must run over every query of every schema (the empty-database class: a stream over any tables that
ends with all of them empty again). Values come from small domains so that keys meet (a foreign key
draws from the domain of the primary key it references, as every integer column does), dates from
a few months so that date arithmetic in joins matters, and a primary-keyed table keeps its set
semantics (an insert takes a key not present, a delete removes a present row).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import date, timedelta
from decimal import Decimal

from catalog.schema import Catalog, Column, Table
from catalog.types import BIGINT, BOOLEAN, DATE, DOUBLE, INT, STRING, DecimalType
from operators.runtime.stream import Update

FIRST_DAY = date(2024, 1, 1)
WORDS = ("a", "b", "c", "d")


def _value(column: Column, rng: random.Random, domain: int, nulls: float) -> object:
    """A random value of ``column``'s type (NULL with probability ``nulls`` where it may be NULL)."""
    if column.nullable and rng.random() < nulls:
        return None
    kind = column.type
    if kind in (INT, BIGINT):
        return rng.randrange(domain)
    if kind == DOUBLE:
        return float(rng.randrange(domain))
    if isinstance(kind, DecimalType):
        return Decimal(rng.randrange(domain * 100)).scaleb(-min(kind.scale, 2)).quantize(Decimal(1).scaleb(-kind.scale))
    if kind == DATE:
        return FIRST_DAY + timedelta(days=rng.randrange(domain * 12))
    if kind == STRING:
        return rng.choice(WORDS[: max(2, min(len(WORDS), domain))])
    if kind == BOOLEAN:
        return rng.random() < 0.5
    raise ValueError(f"no random values for column {column.name} of type {kind}")


def random_changes(catalog: Catalog, tables: Sequence[str], seed: int, size: int, *, domain: int = 6,
                   deletes: float = 0.3, nulls: float = 0.1, first_seq: int = 1) -> list[Update]:
    """``size`` changes of ``tables``: inserts of random rows, and with probability ``deletes`` (when the
    table has rows) a delete of a present row."""
    rng = random.Random(seed)
    present: dict[str, list[tuple]] = {name: [] for name in tables}
    keys: dict[str, set[tuple]] = {name: set() for name in tables}
    updates = []
    for seq in range(first_seq, first_seq + size):
        table = catalog.table(rng.choice(tables))
        rows = present[table.name]
        if rows and rng.random() < deletes:
            row = rows.pop(rng.randrange(len(rows)))
            keys[table.name].discard(_key(table, row))
            updates.append(Update(seq, table.name, -1, row))
            continue
        row = _new_row(table, rng, domain, nulls, keys[table.name])
        if row is None:  # every key of the domain is taken: delete instead, next time
            continue
        rows.append(row)
        updates.append(Update(seq, table.name, 1, row))
    return updates


def _key(table: Table, row: tuple) -> tuple:
    names = table.column_names
    return tuple(row[names.index(c)] for c in table.primary_key)


def _new_row(table: Table, rng: random.Random, domain: int, nulls: float, taken: set[tuple]) -> tuple | None:
    """A random row whose primary key is not in ``taken`` (added to it); None after a few misses."""
    key_columns = set(table.primary_key)
    for _ in range(20):
        row = tuple(_value(c, rng, domain if c.name not in key_columns else domain * 4,
                           0.0 if c.name in key_columns else nulls) for c in table.columns)
        if not table.primary_key:
            return row
        key = _key(table, row)
        if key not in taken:
            taken.add(key)
            return row
    return None


def emptied(updates: Iterable[Update]) -> list[Update]:
    """``updates`` followed by a delete of every row they leave, so the stream ends with every table
    empty (a table's rows deleted in reverse order of their insert)."""
    updates = list(updates)
    live: dict[str, Counter] = {}
    for update in updates:
        live.setdefault(update.table, Counter())[update.row] += update.op
    seq = max((u.seq for u in updates), default=0)
    tail = []
    for table, rows in live.items():
        for row, count in reversed(list(rows.items())):
            for _ in range(count):
                seq += 1
                tail.append(Update(seq, table, -1, row))
    return updates + tail
