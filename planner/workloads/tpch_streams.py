"""Change streams over TPC-H data: all inserts, a sliding window, or random inserts and deletes.

Insertion order follows Cquirrel's demo stream: each table is sorted by primary key and spread evenly
over one timeline, so the i-th of |T| tuples sits at (i + 0.5) / |T| and all tables are merged by
that position. An order then arrives near its lineitems and a customer near its orders, which keeps
the number of dangling foreign keys small, as in a real feed.

- ``insert``: that order, every tuple inserted once.
- ``window``: that order, and every tuple leaves a FIFO sliding window counted in lineitem
  insertions, so deletions come in insertion order (enclosureness λ = 1, AJU §5).
- ``random``: a seeded shuffle, with deletes of random present tuples (about one per three inserts)
  and some deleted tuples inserted again: dangling keys and tuples turning non-live, still valid
  set semantics (a present key is never inserted, an absent row never deleted).
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Mapping, Sequence
from operator import itemgetter

import numpy as np

from catalog.schema import Catalog, CatalogError
from operators.runtime.stream import DELETE, INSERT, CheckedTables, Update, UpdateBatch, gc_paused

STREAM_KINDS = ("insert", "window", "random")

# Ties on the timeline go to the referenced table first (region before nation before supplier ...).
TABLE_ORDER = ("region", "nation", "supplier", "part", "partsupp", "customer", "orders", "lineitem")
WINDOW_TABLE = "lineitem"

DELETE_RATE = 1 / 3  # chance of deleting a random present tuple after each insert
REMEMBER_RATE = 1 / 2  # chance that a deleted tuple is kept for a later re-insert
REINSERT_RATE = 1 / 6  # chance, after each insert, of re-inserting a remembered tuple

TableChange = tuple[str, int, tuple]  # (table, op, row), before it is numbered into an Update


@gc_paused()
def make_stream(
    tables: Mapping[str, Sequence[tuple]],
    catalog: Catalog,
    kind: str,
    window: int | None = None,
    seed: int = 0,
    *,
    first_seq: int = 1,
    seq_step: int = 1,
) -> UpdateBatch:
    """The ``kind`` stream over ``tables`` (rows in catalog column order), ``_seq`` from ``first_seq``.

    ``window`` (lineitem tuples kept) is required for ``window`` and refused for the other kinds;
    ``seed`` matters only for ``random``. ``seq_step`` > 1 leaves gaps in ``_seq``. The stream is
    ``checked`` when ``tables`` are (``load_tables``).
    """
    if kind not in STREAM_KINDS:
        raise ValueError(f"unknown stream kind {kind!r} (kinds: {', '.join(STREAM_KINDS)})")
    if (kind == "window") != (window is not None):
        raise ValueError(f"stream kind {kind!r} {'needs' if kind == 'window' else 'takes no'} window size")
    if kind == "window" and WINDOW_TABLE not in tables:
        raise ValueError(f"a window stream counts {WINDOW_TABLE} tuples, but no {WINDOW_TABLE} table was given")
    if seq_step < 1:
        raise ValueError(f"seq_step must be at least 1, got {seq_step}")
    ordered = {name: _sorted_by_key(catalog, name, rows) for name, rows in tables.items()}
    if kind == "insert":
        changes = [(table, INSERT, row) for table, row in _timeline(ordered)]
    elif kind == "window":
        changes = _window_changes(_timeline(ordered), window)
    else:
        changes = _random_changes(ordered, seed)
    updates = tuple(
        Update(first_seq + position * seq_step, table, op, row) for position, (table, op, row) in enumerate(changes)
    )
    return UpdateBatch(updates, checked=isinstance(tables, CheckedTables))


def _sorted_by_key(catalog: Catalog, name: str, rows: Sequence[tuple]) -> list[tuple]:
    """``rows`` in primary-key order; a repeated key is an error since streams have set semantics."""
    table = catalog.table(name)
    if not table.primary_key:
        raise CatalogError(f"table {table.name} has no primary key; TPC-H streams order and delete by key")
    key = itemgetter(*(table.column_names.index(column) for column in table.primary_key))
    ordered = sorted(rows, key=key)
    for before, after in zip(ordered, ordered[1:], strict=False):
        if key(before) == key(after):
            raise CatalogError(f"table {table.name}: primary key {key(after)!r} occurs twice")
    return ordered


def _table_rank(name: str) -> tuple[int, str]:
    return (TABLE_ORDER.index(name), "") if name in TABLE_ORDER else (len(TABLE_ORDER), name)


def _timeline(ordered: Mapping[str, list[tuple]]) -> list[tuple[str, tuple]]:
    """All tuples merged by position (i + 0.5) / |T|, ties broken by ``TABLE_ORDER``."""
    names = sorted((name for name in ordered if ordered[name]), key=_table_rank)
    if not names:
        return []
    sizes = [len(ordered[name]) for name in names]
    positions = np.concatenate([(np.arange(size) + 0.5) / size for size in sizes])
    ranks = np.repeat(np.arange(len(names)), sizes)
    indexes = np.concatenate([np.arange(size) for size in sizes])
    order = np.lexsort((ranks, positions))
    return [(names[rank], ordered[names[rank]][index]) for rank, index in zip(ranks[order].tolist(), indexes[order].tolist(), strict=True)]


def _window_changes(timeline: list[tuple[str, tuple]], window: int) -> list[TableChange]:
    """Insert in timeline order; a tuple inserted once c lineitems are in (itself included) is
    deleted right before the (c + window)-th lineitem insertion."""
    if window < 1:
        raise ValueError(f"window must be at least 1 lineitem tuple, got {window}")
    changes: list[TableChange] = []
    in_window: deque[tuple[int, str, tuple]] = deque()  # (lineitem number it leaves before, table, row)
    lineitems = 0
    for table, row in timeline:
        if table == WINDOW_TABLE:
            lineitems += 1
            while in_window and in_window[0][0] == lineitems:
                _, old_table, old_row = in_window.popleft()
                changes.append((old_table, DELETE, old_row))
        changes.append((table, INSERT, row))
        in_window.append((lineitems + window, table, row))
    return changes


def _random_changes(ordered: Mapping[str, list[tuple]], seed: int) -> list[TableChange]:
    """Inserts in a seeded shuffle with random deletes and re-inserts interleaved (module docstring)."""
    rng = random.Random(seed)
    pending = [(name, row) for name in sorted(ordered, key=_table_rank) for row in ordered[name]]
    rng.shuffle(pending)
    present: list[tuple[str, tuple]] = []
    remembered: list[tuple[str, tuple]] = []
    changes: list[TableChange] = []

    def insert(change: tuple[str, tuple]) -> None:
        present.append(change)
        changes.append((change[0], INSERT, change[1]))

    for change in pending:
        insert(change)
        if rng.random() < DELETE_RATE:
            victim = _pop_random(present, rng)
            changes.append((victim[0], DELETE, victim[1]))
            if rng.random() < REMEMBER_RATE:
                remembered.append(victim)
        if remembered and rng.random() < REINSERT_RATE:
            insert(_pop_random(remembered, rng))
    return changes


def _pop_random(items: list, rng: random.Random):
    """Remove and return a uniformly chosen element in O(1) (order of ``items`` is not kept)."""
    index = rng.randrange(len(items))
    items[index], items[-1] = items[-1], items[index]
    return items.pop()


def default_window(lineitems: int) -> int:
    """A tenth of lineitem, so the window slides ten times over the data."""
    return max(1, lineitems // 10)
