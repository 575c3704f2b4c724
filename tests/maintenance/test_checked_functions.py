"""The compiled runner's checked table functions (issue 13: ``CompiledRunner.run_one``, inside
``Validator.apply``) check a stream batch of one change against the validator's state as they run it,
and hand a change that is not plainly valid back to the general path, untouched; batches of several
changes take the validator's probe (``validate_probe``) and the table functions. Batch by batch they must give what the general path
gives: the result's changes, the rejected changes with their reasons, the error a batch raises (and
then every state as before), the validator's state and the stages' states.

The stream is made of hand-built ``ChangeBatch`` objects (the stream reader's form), so that, in the
middle of batches, it holds what the reader never hands out too: ``_op`` 0 and 2, a key value that
is not an int, and a reader's defect; besides duplicate keys, deletes of absent rows and of rows
that differ from the stored one, a packed key's second column past the packing's width (widened by
the general path), past ``MAX_WIDTH`` and negative (kept as tuples), and a selection that raises
(``CAST_INVALID_INPUT``).
"""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest

from catalog.ddl import catalog_from_ddl
from operators.runtime.packed_keys import MAX_WIDTH
from operators.runtime.row_fingerprints import row_fingerprints
from operators.runtime.stream import ChangeBatch, TableChanges
from planner.view import MaintainedView
from tests.maintenance.test_atomic_batches import InjectedFault, canonical, fail_on_call, heal, snapshot

CATALOG = catalog_from_ddl("""
CREATE TABLE head (h_order BIGINT NOT NULL, h_flag STRING, PRIMARY KEY (h_order));
CREATE TABLE item (i_order BIGINT NOT NULL, i_line INT NOT NULL, i_qty INT, i_code STRING,
  PRIMARY KEY (i_order, i_line), FOREIGN KEY (i_order) REFERENCES head (h_order));
CREATE TABLE tag (t_name STRING NOT NULL, t_line INT NOT NULL, t_weight INT, PRIMARY KEY (t_name, t_line));
""")
TABLES = ("head", "item", "tag")
QUERIES = {
    # a packed key (item), a one-column key (head), lookups, a selection that can raise, a ring aggregate
    "join": ("select h_flag, count(*) as n, sum(i_qty) as q from item, head "
             "where i_order = h_order and cast(i_code as int) > 0 group by h_flag", {"head", "item"}),
    # a key of two columns that does not pack (tag), straight into a ring aggregate
    "tag": ("select t_name, count(*) as n, sum(t_weight) as w from tag where t_weight > 0 group by t_name", {"tag"}),
}


def random_batches(rng: random.Random, tables: list[str], n: int, invalid: float, policy: str,
                   odd_keys: bool = True) -> list[ChangeBatch]:
    """About ``n`` inserts and deletes of ``tables`` in batches of 1 to 40 changes (a third of them of one),
    valid against the batches applied so far, with a fraction ``invalid`` of invalid changes mixed in,
    as the stream reader hands them out; one batch in 25 has a reader's defect (and then, as from the
    reader, no fingerprints). A batch that raises (an invalid change under ``policy`` 'error', a
    selection that raises under either) leaves the live rows as they were. ``odd_keys``: item's line numbers
    also past ``MAX_WIDTH`` bits, negative or not ints (else 1 to 300)."""
    live: dict[str, dict] = {table: {} for table in TABLES}

    def new_row(table: str) -> tuple:
        if table == "head":
            return (rng.randint(0, 30), rng.choice(["a", "b"]))
        if table == "item":
            line = rng.choice([1, 2, 3, 5, 7, 7, 40, 300, *((2**MAX_WIDTH + 5, -3, "x", 2.5) if odd_keys else ())])
            code = "x" if rng.random() < invalid / 5 else rng.choice(["1", "2", "0"])  # "x": the cast raises
            return (rng.randint(0, 30), line, rng.randint(-2, 9), code)
        return (rng.choice(["p", "q", "r"]), rng.randint(0, 6), rng.randint(-1, 5))

    def key(table: str, row: tuple) -> tuple:
        return row[:1] if table == "head" else row[:2]

    batches, seq = [], 1
    while seq <= n:
        size = 1 if rng.random() < 0.35 else rng.randint(2, 40)
        before = {table: dict(rows) for table, rows in live.items()}
        part, raises = [], False
        for _ in range(size):
            table = rng.choice(tables)
            rows = live[table]
            bad, choice = rng.random() < invalid, rng.random()
            if bad and rows and choice < 0.3:  # a duplicate key
                part.append((table, 1, rows[rng.choice(list(rows))]))
            elif bad and rows and choice < 0.6:  # a delete of a row that differs from the stored one
                row = rows[rng.choice(list(rows))]
                part.append((table, -1, row[:-1] + (None,)))
            elif bad and choice < 0.8:  # a delete of an absent row
                row = new_row(table)
                bad = key(table, row) not in rows
                if bad:
                    part.append((table, -1, row))
            elif bad:  # an _op that is not ±1
                part.append((table, rng.choice([0, 2]), new_row(table)))
            elif rows and choice < 0.4:  # a valid delete
                part.append((table, -1, rows.pop(rng.choice(list(rows)))))
            else:
                row = new_row(table)
                if key(table, row) not in rows:
                    rows[key(table, row)] = row
                    part.append((table, 1, row))
                    raises |= table == "item" and row[3] == "x"
            raises |= bad and policy == "error"
        defect = rng.random() < 0.04 and bool(part)
        if raises or (defect and policy == "error"):
            live = before
        batches.append(_change_batch(part, seq, defect))
        seq += len(part)
    return batches


def _change_batch(part: list[tuple[str, int, tuple]], seq: int, defect: bool) -> ChangeBatch:
    """``part``'s changes, numbered from ``seq``, as the reader's batch (a defect in the middle of one table's)."""
    tables = []
    for table in TABLES:
        positions = [p for p, change in enumerate(part) if change[0] == table]
        rows = [part[p][2] for p in positions]
        defects = {len(rows) // 2: "unreadable value in column x"} if defect and rows else {}
        fingerprints = None if defects else row_fingerprints(rows, CATALOG.table(table))
        tables.append(TableChanges(table, [seq + p for p in positions], [part[p][1] for p in positions], rows,
                                   defects, fingerprints))
    return ChangeBatch(tuple(tables), np.array([TABLES.index(table) for table, _, _ in part]))


class GeneralPath(ChangeBatch):
    """A stream batch ``Validator.apply`` sends the general way (``Validator.validate``, then
    ``CompiledRunner.apply``): it takes the one-call path for a ``ChangeBatch`` exactly."""


def outcome(view: MaintainedView, batch: ChangeBatch):
    try:
        return "applied", Counter(dict(view.apply(batch)))
    except Exception as error:  # noqa: BLE001 (compared between the paths)
        return "raised", type(error).__name__, str(error)


@pytest.mark.parametrize("policy", ["quarantine", "error"])
@pytest.mark.parametrize("name", sorted(QUERIES))
def test_checked_functions_give_what_the_general_path_gives(name, policy):
    sql, checked_tables = QUERIES[name]
    rng = random.Random(f"{name}-{policy}")
    # under 'error' a batch with an invalid change raises: fewer of them, so that most batches apply
    batches = random_batches(rng, sorted(checked_tables), 4000, 0.1 if policy == "quarantine" else 0.01, policy)
    checked = MaintainedView(sql, CATALOG, on_invalid=policy)
    plain = MaintainedView(sql, CATALOG, on_invalid=policy)  # the same program, batches the general way
    generic = MaintainedView(sql, CATALOG, on_invalid=policy, compiled=False)
    assert set(checked.runner.program.checked) == checked_tables
    taken = Counter()
    run_one = checked.runner.run_one

    def counted(changes, state, row_key, keep):
        delta = run_one(changes, state, row_key, keep)
        taken[delta is not None] += 1
        return delta

    checked.runner.run_one = counted
    raised = informative = 0
    with checked, plain, generic:
        for number, batch in enumerate(batches):
            before = snapshot(checked)
            expected = outcome(generic, batch)
            assert outcome(plain, GeneralPath(batch.tables, batch.order)) == expected, f"batch {number}"
            assert outcome(checked, batch) == expected, f"batch {number}"
            if expected[0] == "raised":
                raised += 1
                assert snapshot(checked) == before, f"batch {number} raised and changed some state"
            informative += bool(expected[0] == "applied" and expected[1])
            assert checked.validator.state() == plain.validator.state() == generic.validator.state(), f"batch {number}"
            assert canonical(checked.runner.states) == canonical(plain.runner.states), f"batch {number}"
            assert [(r.update.seq, r.reason) for r in checked.rejected] == \
                [(r.update.seq, r.reason) for r in generic.rejected], f"batch {number}"
        assert checked.result() == generic.result() and checked.result()
    assert informative > len(batches) // 4
    # both ways out of the one-call path (invalid one-change batches are rare under 'error'), and errors
    # when the policy raises
    assert taken[True] >= 3 and (policy == "error" or taken[False] >= 3), taken
    if policy == "error":
        assert raised > 10
    else:
        assert len(checked.rejected) > 20


def failing_keep(view: MaintainedView):
    """Make the view's ordered result fail on the batch's result changes; returns the disarm."""

    def keep(delta):
        raise InjectedFault("fault injected in the result")

    view.kept.keep = keep
    return lambda: vars(view.kept).pop("keep")


def failing_stage(view: MaintainedView):
    """Make the MIN/MAX aggregate (a generic unit of the program, after the checks) fail on its first key."""
    (stage,) = [unit.stage for unit in view.runner.program.units if unit.kind == "generic"]
    fail_on_call(stage, 1)
    return lambda: heal(stage)


@pytest.mark.parametrize("fault", [failing_stage, failing_keep])
def test_a_failure_after_the_checks_leaves_every_state_as_before(fault):
    """A batch the checks passed whose later step fails (a generic stage, the result) puts back the
    validator's state and the stages; sent again, it gives what a view that never failed gives."""
    sql = ("select h_flag, max(i_qty) as top, count(*) as n from item, head where i_order = h_order "
           "and cast(i_code as int) > 0 group by h_flag")
    rng = random.Random(7)
    # line numbers the key packs once widened: past the first batches, every batch takes the checked path
    batches = random_batches(rng, ["head", "item"], 3000, 0.0, "error", odd_keys=False)
    failed = 0
    with MaintainedView(sql, CATALOG) as view, MaintainedView(sql, CATALOG) as reference:
        for number, batch in enumerate(batches):
            expected = outcome(reference, GeneralPath(batch.tables, batch.order))
            if expected[0] == "applied" and expected[1] and number % 3 == 0 and number > 10:
                before = snapshot(view)
                disarm = fault(view)
                with pytest.raises(InjectedFault):
                    view.apply(batch)
                disarm()
                assert snapshot(view) == before, f"a failed batch changed some state (batch {number})"
                failed += 1
            assert outcome(view, batch) == expected, f"batch {number}"
            assert snapshot(view) == snapshot(reference), f"batch {number}"
        assert view.result()
    assert failed > 10


@pytest.mark.parametrize("policy", ["quarantine", "error"])
def test_a_selection_raising_in_a_one_change_batch_leaves_every_state_as_before(policy):
    """A batch of one change whose selection raises inside the generated checked function (after its
    probe wrote the validator's state): the probe is taken back and the general path raises what the
    generic runner raises; the next one-change batch takes the checked path again."""
    sql = QUERIES["join"][0]
    with MaintainedView(sql, CATALOG, on_invalid=policy) as view, \
            MaintainedView(sql, CATALOG, on_invalid=policy, compiled=False) as generic:
        taken = []
        run_one = view.runner.run_one
        view.runner.run_one = lambda *arguments: taken.append(run_one(*arguments)) or taken[-1]
        # (the first item widens the packed key to line numbers of one bit, through the general path)
        for seq, change in enumerate([("head", 1, (1, "a")), ("head", 1, (2, "b")), ("item", 1, (2, 1, 5, "1"))], 1):
            batch = _change_batch([change], seq, False)
            assert outcome(view, batch) == outcome(generic, batch)
        raising = _change_batch([("item", 1, (1, 1, 5, "x"))], 4, False)
        before = snapshot(view)
        expected = outcome(generic, raising)
        assert expected[0] == "raised" and "x" in expected[2]
        taken.clear()
        assert outcome(view, raising) == expected
        assert taken == [None], "the batch did not go through the checked function and back"
        assert snapshot(view) == before
        valid = _change_batch([("item", 1, (1, 1, 5, "2"))], 5, False)
        assert outcome(view, valid) == outcome(generic, valid)
        assert taken[-1] is not None
        assert view.validator.state() == generic.validator.state() and view.result() == generic.result() != []
