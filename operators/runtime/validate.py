"""Validation of base-table changes before any stage sees them (ARCHITECTURE.md, "Errors and bad input").

Base tables with a primary key have set semantics, so the validator keeps each table's rows by key
and checks every change in ``_seq`` order: a duplicate key, a delete of an absent row (or of a row
that differs from the stored one), a wrong number of columns, a wrong type or a NULL key is invalid,
and so is an inserted row that breaks a requirement of the plan's stages (``RowRequirement``).
Tables without a primary key have bag semantics (as in Spark): an insert adds one copy of a row, a
delete removes one copy, and deleting a row with no copy left is invalid. Their copies are stored
under ``(row, i)`` for ``i`` in ``0 .. copies-1`` so ``rows[table].values()`` lists every copy.
A batch is checked against a scratch overlay (``validate``) and committed separately (``commit``),
which ``MaintainedView`` does only after every stage ran the batch: a rejected batch, or one a stage
failed on, leaves the stored rows as they were. With the ``quarantine`` policy invalid changes are set aside with
their reason and the rest of the batch goes on.
"""

from __future__ import annotations

from collections.abc import Iterable
from operator import itemgetter

import attrs

from catalog.schema import Catalog, Table
from catalog.types import DecimalType
from operators.runtime.column_types import conformed_value
from operators.runtime.dataflow import RowRequirement
from operators.runtime.stream_format import Update, UpdateBatch
from operators.zset import Changelog, Row

POLICIES = ("error", "quarantine")


class InvalidChangeError(ValueError):
    """A change violates the table's schema or set semantics; the message names table, row and reason."""

    def __init__(self, update: Update, reason: str):
        place = "without a _seq" if update.seq is None else f"at _seq {update.seq}"
        op = "NULL" if update.op is None else f"{update.op:+d}"
        super().__init__(f"invalid change to table {update.table} {place} (op {op}, row {update.row!r}): {reason}")
        self.update = update
        self.reason = reason


@attrs.frozen
class Rejected:
    update: Update
    reason: str


@attrs.frozen
class ValidatedBatch:
    """A checked batch not yet stored: ``accepted`` changes by table, ``rejected`` updates, and per table
    the rows it sets (None: deletes) by key, which ``Validator.commit`` writes."""

    accepted: dict[str, Changelog]
    rejected: list[Rejected]
    overlays: dict[str, dict[tuple, Row | None]]


def conformed_row(table: Table, row: Row) -> tuple[Row, str | None]:
    """``row`` with every DECIMAL value at exactly its column's scale (an int or a shorter Decimal
    converts exactly), or the reason a value cannot be its column's (``value_defect``)."""
    if len(row) != len(table.columns):
        return row, f"has {len(row)} columns, table {table.name} has {len(table.columns)} ({', '.join(table.column_names)})"
    conformed = list(row)
    for i, (value, column) in enumerate(zip(row, table.columns, strict=True)):
        conformed[i], reason = conformed_value(column, value, column.name in table.primary_key)
        if reason is not None:
            return row, reason
    return tuple(conformed), None


class Validator:
    """Keeps each validated table's rows by primary key (by ``(row, copy)`` when it has no key)."""

    def __init__(self, catalog: Catalog, tables: Iterable[str], policy: str = "error",
                 requirements: Iterable[RowRequirement] = ()):
        if policy not in POLICIES:
            raise ValueError(f"unknown invalid-input policy {policy!r}; choose one of {', '.join(POLICIES)}")
        self.policy = policy
        self.tables = {name: catalog.table(name) for name in tables}
        self.requirements: dict[str, list[RowRequirement]] = {}
        for requirement in requirements:
            self.requirements.setdefault(requirement.table, []).append(requirement)
        self._key_of = {
            name: itemgetter(*(t.column_names.index(k) for k in t.primary_key))
            for name, t in self.tables.items()
            if t.primary_key
        }
        # Rows of one table nearly always have the same column types: a type signature seen valid
        # once is valid again, so the per-column check runs only for new signatures.
        self._valid_signatures: dict[str, set[tuple[type, ...]]] = {name: set() for name in self.tables}
        self.rows: dict[str, dict[tuple, Row]] = {name: {} for name in self.tables}

    def check(self, updates: UpdateBatch | Iterable[Update]) -> tuple[dict[str, Changelog], list[Rejected]]:
        """``validate`` then ``commit``: (accepted changes by table, rejected changes)."""
        validated = self.validate(updates)
        self.commit(validated)
        return validated.accepted, validated.rejected

    def commit(self, validated: ValidatedBatch) -> None:
        """Store the rows of a validated batch (once its changes were applied everywhere else)."""
        for table, overlay in validated.overlays.items():
            stored = self.rows[table]
            for key, row in overlay.items():
                if row is None:
                    stored.pop(key, None)
                else:
                    stored[key] = row

    def validate(self, updates: UpdateBatch | Iterable[Update]) -> ValidatedBatch:
        """Check one batch against the stored rows without storing it. Raises under policy 'error'.

        A ``checked`` batch had its rows' column types checked as it was read (see ``UpdateBatch``), so
        the per-row type check is skipped; any other iterable of updates is put in ``_seq`` order and
        checked in full. Keys belong to one table, so each table's changes are checked on their own;
        this is the hot path of every runner, hence one tight loop per table.
        """
        batch = UpdateBatch.in_seq_order(updates)
        by_table: dict[str, list[Update]] = {}
        for update in batch:
            if update.table in self.tables:
                by_table.setdefault(update.table, []).append(update)
        overlays: dict[str, dict] = {}
        accepted: dict[str, Changelog] = {}
        rejected: list[Rejected] = []
        for table, table_updates in by_table.items():
            overlays[table], accepted[table] = self._check_table(table, table_updates, rejected, batch.checked)
        return ValidatedBatch({table: changes for table, changes in accepted.items() if changes}, rejected, overlays)

    def _check_table(
        self, table: str, updates: list[Update], rejected: list[Rejected], checked: bool
    ) -> tuple[dict[tuple, Row | None], Changelog]:
        key_of, stored, valid = self._key_of.get(table), self.rows[table], self._valid_signatures[table]
        width = len(self.tables[table].columns)
        # a DECIMAL value's digits matter, not only its type: such rows are conformed one by one
        has_decimals = any(isinstance(c.type, DecimalType) for c in self.tables[table].columns)
        overlay: dict[tuple, Row | None] = {}
        accepted: Changelog = []
        for update in updates:
            row, op = update.row, update.op
            reason = None
            if update.defect is not None:  # the stream reader could not read it; its values are as written
                reason = update.defect
            elif type(row) is not tuple:
                reason = "row is not a tuple of column values"
            elif checked:
                if len(row) != width:
                    row, reason = conformed_row(self.tables[table], row)
            elif has_decimals or tuple(map(type, row)) not in valid:
                row, reason = conformed_row(self.tables[table], row)
                if reason is None and not has_decimals:
                    valid.add(tuple(map(type, row)))
            if reason is None and key_of is None:
                key, reason = _bag_key(row, op, overlay, stored)
            elif reason is None:
                key = key_of(row)
                reason = keyed_change_defect(overlay[key] if key in overlay else stored.get(key), row, op, key)
            if reason is None and op == 1:
                for requirement in self.requirements.get(table, ()):
                    reason = reason or requirement.violation(row)
            if reason is not None:
                if self.policy == "error":
                    raise InvalidChangeError(update, reason)
                rejected.append(Rejected(update, reason))
                continue
            overlay[key] = row if op == 1 else None
            accepted.append((row, op))
        return overlay, accepted


def keyed_change_defect(current: Row | None, row: Row, op: int | None, key: tuple) -> str | None:
    """Why changing a keyed table whose row under ``key`` is ``current`` (None: absent) by ``op`` of
    ``row`` breaks set semantics, or None. The one statement of the rule, for the local validator and
    the Spark runner's validation stage alike."""
    if op == 1:
        if current is not None:
            return f"duplicate primary key {_show(key)}: a row with this key is already present"
        return None
    if op == -1:
        if current is None:
            return f"delete of an absent row (no row with key {_show(key)})"
        return None if current == row else f"delete does not match the stored row {current!r}"
    return f"_op must be +1 or -1, got {op}"


#: Why a delete from a keyless table fails: no copy of the row is left.
ABSENT_COPY = "delete of an absent row (the table has no primary key and no copy of this row)"


def _bag_key(row: Row, op: int, overlay: dict, stored: dict) -> tuple[tuple, str | None]:
    """The slot ``(row, i)`` an insert fills or a delete empties in a keyless table, or why it cannot.

    Copies fill slots 0, 1, ... without gaps, so the number of copies is the first empty slot; an
    insert fills it and a delete empties the last full one. Rows rarely repeat, so the probe is short.
    """
    if op not in (1, -1):
        return (row, 0), f"_op must be +1 or -1, got {op}"
    copies = 0
    while (overlay[(row, copies)] if (row, copies) in overlay else stored.get((row, copies))) is not None:
        copies += 1
    if op == 1:
        return (row, copies), None
    if copies == 0:
        return (row, 0), ABSENT_COPY
    return (row, copies - 1), None


def _show(key) -> str:
    return str(key if isinstance(key, tuple) else (key,))
