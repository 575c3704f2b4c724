"""Validation of base-table changes before any stage sees them (ARCHITECTURE.md, "Errors and bad input").

Base tables with a primary key have set semantics, so the validator keeps each table's rows by key
and checks every change in ``_seq`` order: a duplicate key, a delete of an absent row (or of a row
that differs from the stored one), a wrong number of columns, a wrong type or a NULL key is invalid.
A batch is checked against a scratch overlay and committed only when it is accepted, so a rejected
batch leaves every state as it was. With the ``quarantine`` policy invalid changes are set aside with
their reason and the rest of the batch goes on.
"""

from __future__ import annotations

import datetime
from collections import defaultdict
from collections.abc import Iterable

import attrs

from catalog.schema import Catalog, Table
from operators.stream_format import Update
from operators.zset import Row

POLICIES = ("error", "quarantine")

_PYTHON_TYPES = {
    "int": (int,),
    "float": (int, float),
    "string": (str,),
    "date": (datetime.date,),
    "bool": (bool,),
}


class InvalidChangeError(ValueError):
    """A change violates the table's schema or set semantics; the message names table, row and reason."""

    def __init__(self, update: Update, reason: str):
        super().__init__(f"invalid change to table {update.table} at _seq {update.seq} (op {update.op:+d}, row {update.row!r}): {reason}")
        self.update = update
        self.reason = reason


@attrs.frozen
class Rejected:
    update: Update
    reason: str


def _type_error(table: Table, row: Row) -> str | None:
    if len(row) != len(table.columns):
        return f"has {len(row)} columns, table {table.name} has {len(table.columns)} ({', '.join(table.column_names)})"
    for value, column in zip(row, table.columns, strict=True):
        if value is None:
            if column.name in table.primary_key:
                return f"NULL in key column {column.name}"
            continue
        allowed = _PYTHON_TYPES[column.type]
        wrong_bool = isinstance(value, bool) and column.type != "bool"
        wrong_datetime = isinstance(value, datetime.datetime)
        if not isinstance(value, allowed) or wrong_bool or wrong_datetime:
            return f"column {column.name} expects {column.type}, got {type(value).__name__} {value!r}"
    return None


class Validator:
    """Keeps each validated table's rows by primary key (or as a multiset when it has no key)."""

    def __init__(self, catalog: Catalog, tables: Iterable[str], policy: str = "error"):
        if policy not in POLICIES:
            raise ValueError(f"unknown invalid-input policy {policy!r}; choose one of {', '.join(POLICIES)}")
        self.policy = policy
        self.tables = {name: catalog.table(name) for name in tables}
        self._key_positions = {
            name: tuple(t.column_names.index(k) for k in t.primary_key) or tuple(range(len(t.columns)))
            for name, t in self.tables.items()
        }
        self.rows: dict[str, dict[tuple, Row]] = {name: {} for name in self.tables}

    def check(self, updates: Iterable[Update]) -> tuple[dict[str, list[tuple[Row, int]]], list[Rejected]]:
        """Validate one batch: (accepted changes by table, rejected changes). Raises under policy 'error'."""
        overlay: dict[str, dict[tuple, Row | None]] = defaultdict(dict)
        accepted: dict[str, list[tuple[Row, int]]] = defaultdict(list)
        rejected: list[Rejected] = []
        for update in sorted(updates, key=lambda u: u.seq):
            if update.table not in self.tables:
                continue
            reason = self._violation(update, overlay[update.table])
            if reason is not None:
                if self.policy == "error":
                    raise InvalidChangeError(update, reason)
                rejected.append(Rejected(update, reason))
                continue
            key = self._key(update.table, update.row)
            overlay[update.table][key] = update.row if update.op > 0 else None
            accepted[update.table].append((update.row, update.op))
        for table, changes in overlay.items():
            stored = self.rows[table]
            for key, row in changes.items():
                if row is None:
                    stored.pop(key, None)
                else:
                    stored[key] = row
        return dict(accepted), rejected

    def _key(self, table: str, row: Row) -> tuple:
        return tuple(row[i] for i in self._key_positions[table])

    def _violation(self, update: Update, overlay: dict[tuple, Row | None]) -> str | None:
        if update.op not in (1, -1):
            return f"_op must be +1 or -1, got {update.op}"
        table = self.tables[update.table]
        if not isinstance(update.row, tuple):
            return "row is not a tuple of column values"
        problem = _type_error(table, update.row)
        if problem:
            return problem
        key = self._key(update.table, update.row)
        current = overlay[key] if key in overlay else self.rows[update.table].get(key)
        if update.op > 0 and current is not None:
            return f"duplicate primary key {key}: a row with this key is already present"
        if update.op < 0:
            if current is None:
                return f"delete of an absent row (no row with key {key})"
            if current != update.row:
                return f"delete does not match the stored row {current!r}"
        return None
