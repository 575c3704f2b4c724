"""Validation of base-table changes before any stage sees them (ARCHITECTURE.md, "Errors and bad input").

Base tables with a primary key have set semantics, so the validator keeps, per key of each table, a
fingerprint of its row (``row_fingerprint``) and checks every change in ``_seq`` order: a duplicate
key, a delete of an absent row (or of a row that differs from the stored one), a wrong number of
columns, a wrong type or a NULL key is invalid, and so is an inserted row that breaks a requirement of
the plan's stages (``RowRequirement``). Tables without a primary key have bag semantics (as in
Spark): an insert adds one copy of a row, a delete removes one copy, and deleting a row with no copy
left is invalid; their state is the number of copies per row fingerprint.
``apply`` is a local batch's one door (``MaintainedView.apply`` calls it): the batch is checked
(``validate``), run by the runner and then committed (``commit``), or forgotten (``abort``) when the
runner failed on it: a rejected batch, or one a stage failed on, leaves the stored state as it was. A
table's changes that are all valid (nearly always) are written straight into the state
(``validate_probe``) and undone on ``abort``; the others go through a scratch overlay that ``commit``
writes. With the ``quarantine`` policy invalid changes are set aside with their reason and the rest of
the batch goes on. A stream batch of one change on the compiled runner is probed and run in one call of
its table's generated function (``CompiledRunner.run_one``, issue 13); a change it does not find plainly
valid comes back here untouched and takes ``validate``, so the reasons and the policy are this
module's alone.
Declared functional dependencies, ``ivm.static`` and ``ivm.insert_only`` are checked too
(``dependencies.py``): a static table takes rows only in the first batch that commits any change
(the view's initial load), an insert-only table no deletes.

Why a fingerprint and not the row: the stages keep what they need of each row, so a copy of every
row here was a second copy of the database (a TPC-H lineitem row is about 1 KB as Python objects, its
fingerprint a 49-byte ``bytes``). ``row_fingerprints`` says why two different rows never pass for equal.
A primary key of two integer columns (lineitem's) is stored packed into one int, which keeps a window
stream's locality in the dict (``packed_keys.py``); ``state()`` shows every key as the key's values.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Protocol

import attrs

from catalog.literals import sql_literal
from catalog.schema import Catalog, Table
from catalog.types import DOUBLE, INTEGRAL, DecimalType, integral_range
from operators.doubles import canonical
from operators.runtime.column_types import checked_by_type, conformed_value
from operators.runtime.dataflow import RowRequirement
from operators.runtime.dependencies import DependencyState, table_defect
from operators.runtime.packed_keys import RowKey, key_for
from operators.runtime.row_fingerprints import row_fingerprints
from operators.runtime.stream import ChangeBatch, TableChanges, Update, UpdateBatch
from operators.runtime.validate_probe import store_all, unstore
from operators.zset import ChangeColumns, Changelog, Row

POLICIES = ("error", "quarantine")


class InvalidChangeError(ValueError):
    """A change violates the table's schema or set semantics; the message names table, row and reason."""

    def __init__(self, update: Update, reason: str):
        place = "without a _seq" if update.seq is None else f"at _seq {update.seq}"
        op = "NULL" if update.op is None else f"{update.op:+d}"
        super().__init__(f"invalid change to table {update.table} {place} (op {op}, row {sql_literal(update.row)}): {reason}")
        self.update = update
        self.reason = reason


@attrs.frozen
class Rejected:
    update: Update
    reason: str


@attrs.define  # not frozen, no defaults: a frozen class's __init__ costs a microsecond, a factory 0.3 µs, per batch
class ValidatedBatch:
    """A checked batch: ``accepted`` changes by table, ``rejected`` updates; per table the state
    ``Validator.commit`` still has to write (``overlays``: by key a row fingerprint, None for a delete;
    in a keyless table, a count of copies by fingerprint), and the tables whose state ``validate``
    already wrote (``stored``), which ``Validator.abort`` puts back."""

    accepted: dict[str, Changelog | ChangeColumns]
    rejected: list[Rejected]
    overlays: dict[str, dict]
    #: (state, RowKey, ops, rows, fingerprints) of each table ``validate_probe.store_all`` wrote
    stored: list[tuple]
    #: (DependencyState, its writes) of each checked functional dependency, for ``commit``
    dependency_writes: list[tuple]


class BatchRunner(Protocol):
    """What ``Validator.apply`` runs a batch's accepted changes with: the local runners."""

    #: whether a stream batch of one change is probed and run in one call (``run_one``)
    checks_stream: bool

    def apply(self, changes_by_table: Mapping[str, Changelog | ChangeColumns],
              keep: Callable[[Changelog], None] | None) -> Changelog:
        """Run validated changes; ``keep`` takes the result's changes inside the batch; atomic."""

    def run_one(self, changes: TableChanges, state: dict, row_key: RowKey,
                keep: Callable[[Changelog], None]) -> Changelog | None:
        """Probe ``state`` with one change and run it; None (nothing written) for the general path."""


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
    """Keeps, per validated table, each primary key's row fingerprint (in a keyless table, the number
    of copies of each row fingerprint) in ``fingerprints``."""

    def __init__(self, catalog: Catalog, tables: Iterable[str], policy: str = "error",
                 requirements: Iterable[RowRequirement] = ()):
        if policy not in POLICIES:
            raise ValueError(f"unknown invalid-input policy {policy!r}; choose one of {', '.join(POLICIES)}")
        self.policy = policy
        self.tables = {name: catalog.table(name) for name in tables}
        self.requirements: dict[str, list[RowRequirement]] = {}
        for requirement in requirements:
            self.requirements.setdefault(requirement.table, []).append(requirement)
        # each keyed table's key as stored (two integer columns packed into one int: packed_keys.py)
        self._key_of: dict[str, RowKey] = {name: key_for(t) for name, t in self.tables.items() if t.primary_key}
        # Rows of one table nearly always have the same column types: a type signature seen valid
        # once is valid again, so the per-column check runs only for new signatures.
        self._valid_signatures: dict[str, set[tuple[type, ...]]] = {name: set() for name in self.tables}
        self.fingerprints: dict[str, dict] = {name: {} for name in self.tables}
        #: per table, the state of each declared functional dependency (``dependencies.py``)
        self.dependencies = {name: [DependencyState(t, fd) for fd in t.functional_dependencies]
                             for name, t in self.tables.items() if t.functional_dependencies}
        #: whether a batch was committed: a static table's rows come with the first (its initial load)
        self.loaded = False
        #: every change ``apply`` set aside under the ``quarantine`` policy, with its reason, in batch order
        self.rejected: list[Rejected] = []
        # the tables whose all-valid changes ``validate_probe.store_all`` can write at once: keyed, no requirement, no
        # declared dependency or flag to check
        self._storable = {name: (self.fingerprints[name], key_of) for name, key_of in self._key_of.items()
                          if name not in self.requirements and name not in self.dependencies
                          and not self.tables[name].static and not self.tables[name].insert_only}

    def storable(self) -> dict[str, tuple[dict, RowKey]]:
        """The tables whose all-valid changes are written straight into their state (keyed, no
        requirement, no declared dependency, not static or insert-only), each with its state and key:
        the ones a compiled runner probes itself in a one-change batch (``CompiledRunner.run_one``)."""
        return dict(self._storable)

    def storable_keys(self) -> dict[str, RowKey]:
        """``storable``'s tables and their keys: what the code generator writes one-change checked functions for."""
        return {table: key for table, (_, key) in self._storable.items()}

    def state(self) -> dict[str, dict]:
        """Each table's state keyed by its primary key's values (a scalar for one column, else a tuple),
        whatever representation ``fingerprints`` stores the keys in (packed_keys.py): for comparing two
        validators, or one before and after a batch."""
        return {table: {self._key_of[table].unpacked(key): value for key, value in stored.items()}
                if table in self._key_of else dict(stored) for table, stored in self.fingerprints.items()}

    def apply(self, updates: ChangeBatch | UpdateBatch | Iterable[Update], runner: BatchRunner,
              keep: Callable[[Changelog], None] | None) -> Changelog:
        """A local batch's one door: checked once, run by ``runner`` (``keep``, if any, takes the result's
        changes inside it), committed; the result's changes returned, rejected changes added to ``rejected``.
        On any error every state is as it was: the runner puts back its stages, and this validator
        forgets the batch, so the same batch can be sent again after fixing the cause. A stream batch
        of one change goes first to the runner's one-call path (``run_one``), which hands back a change
        it does not find plainly valid, untouched. (Each step is skipped when it has nothing to do: at
        batches of one change, the calls are most of the batch's cost.)"""
        if type(updates) is ChangeBatch and runner.checks_stream and len(updates.order) == 1:
            changes = updates.tables[updates.order[0]]
            if changes is None:  # a table the reader skipped: nothing this view reads
                return []
            stored = self._storable.get(changes.table)
            if stored is not None and not changes.defects and changes.fingerprints is not None:
                try:
                    delta = runner.run_one(changes, *stored, keep)
                except BaseException:  # raised after its probe wrote: taken back here
                    unstore(*stored, changes.ops, changes.rows, changes.fingerprints, 1)
                    raise
                if delta is not None:
                    self.loaded = True
                    return delta
        validated = self.validate(updates)
        delta: Changelog = []
        if validated.accepted:
            try:
                delta = runner.apply(validated.accepted, keep)
            except BaseException:
                self.abort(validated)
                raise
        self.commit(validated)
        if validated.rejected:
            self.rejected.extend(validated.rejected)
        return delta

    def check(self, updates: ChangeBatch | UpdateBatch | Iterable[Update]) -> tuple[dict[str, Changelog], list[Rejected]]:
        """``validate`` then ``commit``: (accepted changes by table, rejected changes)."""
        validated = self.validate(updates)
        self.commit(validated)
        return validated.accepted, validated.rejected

    def commit(self, validated: ValidatedBatch) -> None:
        """Store the state of a validated batch (once its changes were applied everywhere else)."""
        if validated.overlays:  # tests first: at batches of one change, empty loops cost a tenth of validation
            for table, overlay in validated.overlays.items():
                stored = self.fingerprints[table]
                for key, value in overlay.items():
                    if value:  # a fingerprint, or a count of copies above 0
                        stored[key] = value
                    else:
                        stored.pop(key, None)
        if validated.dependency_writes:
            for dependency, writes in validated.dependency_writes:
                dependency.commit(writes)
        if not self.loaded and validated.accepted:
            self.loaded = True

    def abort(self, validated: ValidatedBatch) -> None:
        """Forget a validated batch that will not be committed (a stage failed on it): the state is
        again what it was before ``validate``."""
        for state, key, ops, rows, fingerprints in reversed(validated.stored):
            unstore(state, key, ops, rows, fingerprints, len(ops))
        validated.stored.clear()

    def validate(self, updates: ChangeBatch | UpdateBatch | Iterable[Update]) -> ValidatedBatch:
        """Check one batch against the stored state; ``commit`` or ``abort`` it next. Raises under
        policy 'error', the state then as it was.

        A ``ChangeBatch`` (the stream reader's) or a ``checked`` ``UpdateBatch`` had its rows' column
        types checked as it was read, so the per-row type check is skipped; any other iterable of
        updates is put in ``_seq`` order and checked in full. Keys belong to one table, so each table's
        changes are checked on their own; this is the hot path of every runner, hence one tight loop
        per table over the batch's columns.
        """
        validated = ValidatedBatch({}, [], {}, [], [])
        try:
            if isinstance(updates, ChangeBatch):
                # readable rows the reader fingerprinted go straight to store_all (inlined: at a batch of one
                # change, each call here is a tenth of the batch's validation)
                storable, tables, accepted = self._storable, self.tables, validated.accepted
                order = updates.order  # a batch of one change has one table to look at, not one per stream table
                for changes in (updates.tables[order[0]],) if len(order) == 1 else updates.tables:
                    if changes is None or not changes.rows:
                        continue
                    table = changes.table
                    written = storable.get(table)
                    if written is None or changes.defects or changes.fingerprints is None:
                        if table in tables:
                            self._check_table(changes, validated, True)
                        continue
                    rows, ops = changes.rows, changes.ops
                    written += (ops, rows, changes.fingerprints)
                    if store_all(*written):
                        validated.stored.append(written)
                        accepted[table] = ChangeColumns(rows, ops)
                    else:
                        self._check_each(changes, rows, {}, changes.fingerprints, validated)
            else:
                batch = UpdateBatch.in_seq_order(updates)
                for changes in _by_table(batch, self.tables):
                    self._check_table(changes, validated, batch.checked)
        except BaseException:
            self.abort(validated)
            raise
        if len(validated.rejected) > 1:  # checked table by table; reported in _seq order
            validated.rejected.sort(key=lambda r: r.update.seq)
        return validated

    def _check_table(self, changes: TableChanges, validated: ValidatedBatch, checked: bool) -> None:
        """Check one table's changes into ``validated``: straight into the stored state when every
        change is valid (the common case, ``validate_probe.store_all``), else through an overlay that ``commit`` writes."""
        table = self.tables[changes.table]
        if changes.fingerprints is not None:  # the stream reader's: rows readable and fingerprinted
            rows, reasons, fingerprints = changes.rows, changes.defects, changes.fingerprints
        else:
            rows, reasons = self._conformed(changes, checked)
            valid = [position for position in range(len(rows)) if position not in reasons]
            fingerprints = [None] * len(rows)
            for position, fingerprint in zip(valid, row_fingerprints([rows[p] for p in valid], table), strict=True):
                fingerprints[position] = fingerprint
        if reasons or table.name not in self._storable or not self._stored_all(changes, rows, fingerprints, validated):
            self._check_each(changes, rows, reasons, fingerprints, validated)

    def _stored_all(self, changes: TableChanges, rows: list[Row], fingerprints: list, validated: ValidatedBatch) -> bool:
        """Whether ``validate_probe.store_all`` found every change valid and wrote them all (then they are accepted, and
        ``abort`` can take them back), or wrote nothing."""
        written = self._storable[changes.table] + (changes.ops, rows, fingerprints)
        if not store_all(*written):
            return False
        validated.stored.append(written)
        # no strict=True in this module's per-batch zips: the columns are one TableChanges', and the
        # keyword costs 0.2 µs a call, a tenth of a one-change batch's validation
        validated.accepted[changes.table] = ChangeColumns(rows, changes.ops)
        return True

    def _check_each(self, changes: TableChanges, rows: list[Row], reasons: dict[int, str], fingerprints: list,
                    validated: ValidatedBatch) -> None:
        """Check a table's changes one by one against the stored state through an overlay, wording each
        invalid change's reason and applying the policy to it; then the table's declared functional
        dependencies over the whole batch (``dependencies.py``). Under quarantine an insert that breaks
        one is set aside and the table's changes are checked again without it (a later delete of that
        row, say, then fails too), until no dependency is broken."""
        table = self.tables[changes.table]
        dependencies = self.dependencies.get(table.name, ())
        row_key = self._key_of.get(table.name)
        if row_key is not None:  # before any key of the batch is computed (it may re-key the state)
            row_key.fit([row for position, row in enumerate(rows) if position not in reasons], self.fingerprints[table.name])
        while True:
            overlay, accepted, rejected = self._check_changes(changes, rows, reasons, fingerprints)
            broken: dict[int, str] = {}
            writes = []
            for dependency in dependencies:
                defects, dependency_writes = dependency.violations(accepted)
                broken.update(defects)
                writes.append((dependency, dependency_writes))
            if not broken:
                break
            if self.policy == "error":
                position = min(broken)
                raise InvalidChangeError(changes.update(position), broken[position])
            reasons = {**reasons, **broken}
        validated.rejected.extend(rejected)
        validated.overlays[table.name] = overlay
        validated.dependency_writes.extend(writes)
        if accepted:
            validated.accepted[table.name] = [(row, op) for _, row, op in accepted]

    def _check_changes(self, changes: TableChanges, rows: list[Row], reasons: dict[int, str],
                       fingerprints: list) -> tuple[dict, list[tuple[int, Row, int]], list[Rejected]]:
        """One pass of ``_check_each`` over a table's changes: the overlay, the accepted changes as
        (position, row, op) and the rejected ones; raises at the first invalid change under 'error'."""
        table = self.tables[changes.table]
        row_key, stored = self._key_of.get(table.name), self.fingerprints[table.name]
        requirements = self.requirements.get(table.name, ())
        flagged = table.static or table.insert_only
        rejected: list[Rejected] = []
        overlay: dict = {}
        accepted: list[tuple[int, Row, int]] = []
        for position, (op, row, fingerprint) in enumerate(zip(changes.ops, rows, fingerprints, strict=True)):
            reason = reasons.get(position) if reasons else None
            if reason is None and flagged:
                reason = table_defect(table, op, self.loaded)
            if reason is None:
                if row_key is None:
                    key = fingerprint
                    reason, value = _bag_change(overlay[key] if key in overlay else stored.get(key, 0), op)
                else:
                    key, value = row_key.of(row), fingerprint if op == 1 else None
                    current = overlay[key] if key in overlay else stored.get(key)
                    reason = set_semantics_defect(op, row_key.shown(key), current is not None,
                                                  current == fingerprint, "the stored row with this key")
            if reason is None and op == 1:
                for requirement in requirements:
                    reason = reason or requirement.violation(row)
            if reason is not None:
                if self.policy == "error":
                    raise InvalidChangeError(changes.update(position), reason)
                rejected.append(Rejected(changes.update(position), reason))
                continue
            overlay[key] = value
            accepted.append((position, row, op))
        return overlay, accepted, rejected

    def _conformed(self, changes: TableChanges, checked: bool) -> tuple[list[Row], dict[int, str]]:
        """``changes.rows`` conformed to their columns' types (``conformed_row``), and why each row
        that cannot be is invalid, by position; the reader's defects come first."""
        table = self.tables[changes.table]
        valid = self._valid_signatures[table.name]
        width = len(table.columns)
        # a DECIMAL value's digits matter, not only its type: such rows are conformed one by one
        one_by_one = any(isinstance(c.type, DecimalType) for c in table.columns)
        # a row whose signature was seen valid is still checked against its integer columns' ranges
        ranges = tuple((i, *integral_range(c.type)) for i, c in enumerate(table.columns) if c.type in INTEGRAL)
        # a DOUBLE NaN is made the one NaN (operators/doubles.py; conformed rows get it from conformed_row,
        # rows read from Parquet from the reader)
        doubles = () if checked else tuple(i for i, c in enumerate(table.columns) if c.type == DOUBLE)
        rows, reasons = list(changes.rows), dict(changes.defects)
        for position, row in enumerate(changes.rows):
            if position in reasons:
                continue
            if type(row) is not tuple:
                reason = "row is not a tuple of column values"
            elif checked:
                reason = None
                if len(row) != width:
                    rows[position], reason = conformed_row(table, row)
            elif one_by_one or tuple(map(type, row)) not in valid:
                rows[position], reason = conformed_row(table, row)
                if reason is None and not one_by_one and _checked_by_type(table, row):
                    valid.add(tuple(map(type, row)))
            else:
                reason = None
                for i, low, high in ranges:  # (inline: a call per row was a third of the loop)
                    value = row[i]
                    if value is not None and not low <= value <= high:
                        rows[position], reason = conformed_row(table, row)
                        break
                if doubles and any(row[i] != row[i] for i in doubles):
                    rows[position] = tuple(canonical(value) if i in doubles else value for i, value in enumerate(row))
            if reason is not None:
                reasons[position] = reason
        return rows, reasons


def _checked_by_type(table: Table, row: Row) -> bool:
    """Whether ``row``'s value types alone say every row of them is valid (``checked_by_type``), so
    that the validator may cache its type signature."""
    return all(checked_by_type(c.type, type(v)) for c, v in zip(table.columns, row, strict=True))


def _by_table(batch: UpdateBatch, tables: dict[str, Table]) -> list[TableChanges]:
    """The updates of ``tables`` in ``batch``, each table's column by column."""
    by_table: dict[str, list[Update]] = {}
    for update in batch:
        if update.table in tables:
            by_table.setdefault(update.table, []).append(update)
    return [TableChanges.of_updates(table, updates) for table, updates in by_table.items()]


def keyed_change_defect(current: Row | None, row: Row, op: int | None, key: tuple) -> str | None:
    """Why changing a keyed table whose row under ``key`` is ``current`` (None: absent) by ``op`` of
    ``row`` breaks set semantics, or None: for the Spark runner's validation stage, which keeps rows."""
    return set_semantics_defect(op, key, current is not None, current == row, f"the stored row {sql_literal(current)}")


def set_semantics_defect(op: int | None, key: tuple, present: bool, same_row: bool, stored: str) -> str | None:
    """Why ``op`` on ``key`` breaks set semantics, given whether a row is ``present`` under the key and
    whether it is the ``same_row`` as the change's (``stored`` names the stored row), or None. The one
    statement of the rule, for the local validator and the Spark runner's validation stage alike."""
    if op == 1:
        if present:
            return f"duplicate primary key {_show(key)}: a row with this key is already present"
        return None
    if op == -1:
        if not present:
            return f"delete of an absent row (no row with key {_show(key)})"
        return None if same_row else f"delete does not match {stored}"
    return f"_op must be +1 or -1, got {op}"


#: Why a delete from a keyless table fails: no copy of the row is left.
ABSENT_COPY = "delete of an absent row (the table has no primary key and no copy of this row)"


def _bag_change(copies: int, op: int | None) -> tuple[str | None, int]:
    """Why ``op`` on a row a keyless table holds ``copies`` of is invalid (or None), and the new count."""
    if op not in (1, -1):
        return f"_op must be +1 or -1, got {op}", copies
    if op == -1 and copies == 0:
        return ABSENT_COPY, copies
    return None, copies + op


def _show(key) -> str:
    return sql_literal(key if isinstance(key, tuple) else (key,))
