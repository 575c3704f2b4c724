"""The outer join stage against the definition: after every batch, the changes it emitted so far add
up to L ⟕/⟖/⟗/⋈ R recomputed from the two multisets, for batches whose changes arrive in any order
(Spark does not order a key's rows), with NULL keys, duplicates and a condition beyond the key; and a
condition that raises half way through a key's batch leaves the key's state as it was."""

from __future__ import annotations

import copy
import random
from collections import Counter

import pytest

from operators.stages.base import Change, StageDescription, run_keyed
from operators.stages.outer_join import KINDS, OuterJoinStage


def _theta(row: tuple) -> bool:
    return row[1] < row[3]  # l.x < r.y, beside the key equality l.k = r.k


def _stage(kind: str, theta) -> OuterJoinStage:
    return OuterJoinStage("join", kind, ((0,), (0,)), (2, 2), ("l.k", "l.x", "r.k", "r.y"), StageDescription("join"),
                          condition=theta)


def _recomputed(kind: str, theta, left: Counter, right: Counter) -> Counter:
    """L ⟕ R and friends by their definition: every pair whose keys are equal (and not NULL) and that
    passes θ, then each preserved row with no such pair once per copy, padded."""
    out: Counter = Counter()
    matched_left, matched_right = Counter(), Counter()
    for lrow, lc in left.items():
        for r, rc in right.items():
            if lrow[0] is not None and lrow[0] == r[0] and (theta is None or theta(lrow + r)):
                out[lrow + r] += lc * rc
                matched_left[lrow] += 1
                matched_right[r] += 1
    if kind in ("left", "full"):
        out.update({lrow + (None, None): c for lrow, c in left.items() if not matched_left[lrow]})
    if kind in ("right", "full"):
        out.update({(None, None) + r: c for r, c in right.items() if not matched_right[r]})
    return +out


@pytest.mark.parametrize("theta", [None, _theta], ids=["key only", "key and condition"])
@pytest.mark.parametrize("kind", KINDS)
def test_outer_join_stage_equals_its_definition_after_every_batch(kind, theta):
    rng = random.Random(7)
    stage, states = _stage(kind, theta), {}
    left, right, result = Counter(), Counter(), Counter()
    turned = 0
    for _ in range(60):
        changes = []
        for _ in range(rng.randint(1, 6)):
            port = rng.randint(0, 1)
            side = (left, right)[port]
            if side and rng.random() < 0.45:
                row = rng.choice(list(side))  # a delete of a present copy (duplicates stay possible)
                weight = -1
            else:
                row, weight = (rng.choice([1, 2, 3, None]), rng.randint(0, 4)), 1
            side[row] += weight
            side[row] or side.pop(row)
            changes.append(Change(port, row, weight))
        rng.shuffle(changes)
        before = Counter(result)
        for row, weight in run_keyed(stage, states, changes):
            result[row] += weight
        result = +result
        assert result == _recomputed(kind, theta, left, right)
        turned += any(None in row for row in set(result) ^ set(before))
    assert turned > 10 or kind == "inner", "padded rows must appear and disappear in the stream"


def test_a_condition_raising_half_way_leaves_the_key_as_it_was():
    def theta(row: tuple) -> bool:
        if row[3] == 99:
            raise ZeroDivisionError("planted")
        return row[1] < row[3]

    stage, states = _stage("full", theta), {}
    run_keyed(stage, states, [Change(0, (1, 1), 1), Change(1, (1, 5), 1), Change(0, (1, 7), 1)])
    saved = copy.deepcopy(states)
    with pytest.raises(ZeroDivisionError):
        run_keyed(stage, states, [Change(0, (1, 2), 1), Change(1, (1, 6), 1), Change(1, (1, 99), 1)])
    assert states == saved
