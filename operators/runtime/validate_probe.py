"""The validator's set-semantics probe of a keyed table's changes, written into its state as they pass
(operators/runtime/validate.py's ``Validator`` runs it on a stream batch's storable tables; the compiled
program's one-change checked functions make the same probe inline, ``codegen.validator_key``, ``_probe``).

The common case of checking a table's changes is a keyed table, rows read fine and no requirement on
them: then each change's fingerprint goes straight into the state (no overlay to build, look through
and copy over at commit), and a change that is not plainly valid stops the probe, which puts back
what it wrote so that the general check words the reason and applies the policy.
"""

from __future__ import annotations

from operators.runtime.packed_keys import MAX_WIDTH, PackedRowKey, RowKey


def store_all(state: dict, row_key: RowKey, ops: list, rows: list, fingerprints: list) -> bool:
    """The common case of checking a table's changes: a keyed table, rows that were read fine, no
    requirement on them. Writes each change's fingerprint straight into the table's ``state`` (no
    overlay to build, look through and copy over at commit: one or two dict operations per change
    instead of five) if all are plainly valid (``store_changes``); else puts back what it wrote and
    returns False, and the caller checks the table's changes again the general way, which words the
    reason and applies the policy. A packed key is widened to the batch (``fit``) and the batch
    probed again when it stopped at a ``b`` out of the packing's range (a stream's first batch)."""
    done = store_changes(state, row_key, ops, rows, fingerprints)
    if done == len(ops):
        return True
    unstore(state, row_key, ops, rows, fingerprints, done)
    width = row_key.width
    row_key.fit(rows, state)
    if row_key.width == width:
        return False
    return store_all(state, row_key, ops, rows, fingerprints)


def store_changes(state: dict, row_key: RowKey, ops: list, rows: list, fingerprints: list) -> int:
    """The validator's set-semantics probe of a table's changes in one tight loop, each written into
    ``state`` as it passes: how many passed, from the first. It stops at the first change that is not
    plainly valid, having written nothing for it: a duplicate insert, a delete of an absent row or of
    another row, an ``_op`` other than ±1, a key value that is not an int where the key packs, or a
    packed key's ``b`` that packs only once the key is widened (``PackedRowKey.fit``, which the
    general path runs). A ``b`` no widening packs (negative, past ``MAX_WIDTH`` bits) is keyed by the
    tuple, as ``PackedRowKey.of`` keys it. The one probe of ``state`` in Python; the compiled runner's
    batches of one change make it inline in generated code (``codegen.validator_key``, ``_probe``).

    One probe of the dict per change (a probe of a large dict is a cache miss or two): an insert's
    ``setdefault`` wrote its fingerprint exactly when the dict grew; a delete's ``pop`` is put back if
    it was wrong. A packed key is computed inline: a call per change was a fifth of the loop."""
    packed = type(row_key) is PackedRowKey
    first, second = row_key.positions if packed else (0, 0)
    width, of = row_key.width, row_key.of
    limit = 1 << width
    setdefault, pop = state.setdefault, state.pop
    size = len(state)
    done = 0
    try:
        for op, row, fingerprint in zip(ops, rows, fingerprints):  # noqa: B905 (see _stored_all)
            if packed:
                b = row[second]
                if 0 <= b < limit:
                    key = (row[first] << width) | b
                elif 0 <= b < _PACKABLE:
                    break
                else:
                    key = (row[first], b)
            else:
                key = of(row)
            if op == 1:
                setdefault(key, fingerprint)
                size += 1
                if len(state) != size:
                    break
            elif op == -1:
                stored = pop(key, None)
                if stored != fingerprint:
                    if stored is not None:
                        state[key] = stored
                    break
                size -= 1
            else:
                break
            done += 1
    except TypeError:  # a key value that is not an int (raised before the change touched the state)
        pass
    return done


#: a packed key's ``b`` below this packs once the key is widened (``PackedRowKey.fit``)
_PACKABLE = 1 << MAX_WIDTH


def unstore(state: dict, row_key: RowKey, ops: list, rows: list, fingerprints: list, done: int) -> None:
    """Put back the ``state`` the first ``done`` changes wrote (``store_changes``, or a compiled runner's
    checked function, which computes the same keys): replayed newest first and
    inverted, they restore every key exactly (an insert found its key absent, a delete found its own
    row's fingerprint)."""
    for position in reversed(range(done)):
        if ops[position] == 1:
            del state[row_key.of(rows[position])]
        else:
            state[row_key.of(rows[position])] = fingerprints[position]
