"""The keyed join-select stage (AJU Theorem 15) against a plain recomputation of σ_{x3 θ x2}(Q ⋈ Q')."""

from __future__ import annotations

import operator
import pickle
import random
from collections import Counter

import pytest

from operators.stages.base import Change, StageDescription, run_keyed
from operators.stages.join_select import JoinSelectStage
from operators.zset import apply_changes

OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "=": operator.eq}


def keyed_stage(op: str) -> JoinSelectStage:
    """Q'(x1, x3, tag) on port 0, Q(x1, x2) on port 1; rows leave as (x1, x3, tag, x1)."""
    return JoinSelectStage("js", operator.itemgetter(1), op, ("k", "x3", "tag", "k"), StageDescription("js"),
                           row_key=(0,), threshold_key=(0,), threshold_value=1)


def recomputed(op: str, rows: Counter, pointers: dict) -> Counter:
    """σ_{x3 θ x2}(Q ⋈ Q') with SQL's NULLs: a comparison with NULL keeps nothing."""
    compare = OPS[op]
    return Counter({
        row + (row[0],): count for row, count in rows.items()
        if count > 0 and pointers.get(row[0]) is not None and row[1] is not None and compare(row[1], pointers[row[0]])
    })


def random_batch(rng: random.Random, rows: Counter, pointers: dict, keys: int) -> list[Change]:
    """Inserts and deletes of Q' rows (duplicates and NULL x3 included) and moves of Q's x2 per key:
    up, down, to NULL, a new key row, a deleted key row."""
    batch = []
    for _ in range(rng.randint(0, 6)):
        present = [r for r, c in rows.items() if c > 0]
        if present and rng.random() < 0.45:
            row = rng.choice(present)
            rows[row] -= 1
            batch.append(Change(0, row, -1))
        else:
            row = (rng.randrange(keys), rng.choice([None, *range(10)]), rng.randrange(2))
            rows[row] += 1
            batch.append(Change(0, row, 1))
    for key in rng.sample(range(keys), rng.randint(0, keys)):
        old = pointers.get(key, "absent")
        new = rng.choice(["absent", None, *range(10)])
        if old == new:
            continue
        if old != "absent":
            batch.append(Change(1, (key, old), -1))
        if new != "absent":
            batch.append(Change(1, (key, new), 1))
        if new == "absent":
            pointers.pop(key)
        else:
            pointers[key] = new
    rng.shuffle(batch)
    return batch


@pytest.mark.parametrize("op", list(OPS))
def test_keyed_join_select_equals_recomputation_after_every_batch(op):
    rng = random.Random(list(OPS).index(op))
    stage, states, result = keyed_stage(op), {}, Counter()
    rows, pointers = Counter(), {}
    for _ in range(300):
        apply_changes(result, run_keyed(stage, states, random_batch(rng, rows, pointers, keys=4)))
        assert result == recomputed(op, rows, pointers)
        # Keys with neither Q' rows (counted with a NULL value too: a held error of Q needs them) nor a
        # Q row keep no state.
        assert all(state.has_rows or state.threshold for state in states.values())


def test_states_survive_pickling_between_batches():
    rng = random.Random(7)
    stage, states, result = keyed_stage("<="), {}, Counter()
    rows, pointers = Counter(), {}
    for _ in range(100):
        states = {key: pickle.loads(pickle.dumps(state, pickle.HIGHEST_PROTOCOL)) for key, state in states.items()}
        apply_changes(result, run_keyed(stage, states, random_batch(rng, rows, pointers, keys=3)))
        assert result == recomputed("<=", rows, pointers)


def test_moving_x2_emits_only_the_rows_between_the_old_and_new_pointer():
    stage, states = keyed_stage("<="), {}
    run_keyed(stage, states, [Change(0, (1, x3, 0), 1) for x3 in range(100)] + [Change(1, (1, 10), 1)])
    up = run_keyed(stage, states, [Change(1, (1, 10), -1), Change(1, (1, 20), 1)])
    assert sorted(up) == [((1, x3, 0, 1), 1) for x3 in range(11, 21)]
    down = run_keyed(stage, states, [Change(1, (1, 20), -1), Change(1, (1, 5), 1)])
    assert sorted(down) == [((1, x3, 0, 1), -1) for x3 in range(6, 21)]


def test_an_equality_pointer_swaps_one_run_for_another():
    stage, states = keyed_stage("="), {}
    run_keyed(stage, states, [Change(0, (1, x3, t), 1) for x3 in range(100) for t in (0, 1)] + [Change(1, (1, 10), 1)])
    moved = run_keyed(stage, states, [Change(1, (1, 10), -1), Change(1, (1, 50), 1)])
    assert sorted(moved) == [((1, 10, 0, 1), -1), ((1, 10, 1, 1), -1), ((1, 50, 0, 1), 1), ((1, 50, 1, 1), 1)]


def test_a_change_of_q_prime_emits_at_most_that_row():
    stage, states = keyed_stage(">"), {}
    run_keyed(stage, states, [Change(0, (1, x3, 0), 1) for x3 in range(10)] + [Change(1, (1, 4), 1)])
    assert run_keyed(stage, states, [Change(0, (1, 7, 1), 1), Change(0, (1, 2, 1), 1)]) == [((1, 7, 1, 1), 1)]
    assert run_keyed(stage, states, [Change(0, (2, 7, 1), 1)]) == []  # no Q row for key 2 yet


def test_two_q_rows_for_one_key_are_reported():
    stage, states = keyed_stage("<"), {}
    with pytest.raises(RuntimeError, match="2 rows for one key"):
        run_keyed(stage, states, [Change(1, (1, 4), 1), Change(1, (1, 5), 1)])
