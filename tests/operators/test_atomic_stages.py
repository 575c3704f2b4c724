"""A stage's step is atomic on its own, as on Spark where each key's ``process`` runs alone: a
``run_keyed`` without a runner journal that fails on one key puts back the keys it already ran."""

from __future__ import annotations

import copy
import random

import pytest

from operators.stages.base import Change, Journal, run_keyed
from tests.operators.test_aggregate_stage import grouped


def state_values(stage, states: dict) -> dict:
    """Each group's result row and row count: what the state means, whatever the objects."""
    return {key: (state.rows, stage._values(state), list(state.counts)) for key, state in states.items()}


def random_changes(rng: random.Random, present: list, groups: int) -> list[Change]:
    changes = []
    for _ in range(40):
        if present and rng.random() < 0.4:
            changes.append(Change(0, present.pop(rng.randrange(len(present))), -1))
        else:
            row = (rng.randrange(groups), rng.choice([1, 2, 2, 3, 5, 8, None]), rng.random())
            present.append(row)
            changes.append(Change(0, row, 1))
    return changes


@pytest.mark.parametrize("journal", [False, True], ids=["alone", "journaled"])
def test_a_failing_key_leaves_every_group_of_the_call_as_before(journal):
    rng = random.Random(4)
    stage, states, present = grouped(), {}, []
    for _ in range(5):
        run_keyed(stage, states, random_changes(rng, present, groups=6))
    finish, failing_group = stage.finish, 3

    def failing_finish(row):  # the select list fails for one group, after its state took the batch
        if row[0] == failing_group:
            raise ValueError("boom")
        return finish(row)

    stage.finish = failing_finish
    for _ in range(5):
        before_present = list(present)
        changes = random_changes(rng, present, groups=6)
        if not any(c.row[0] == failing_group for c in changes):
            continue
        before = copy.deepcopy(state_values(stage, states))
        log = Journal() if journal else None
        with pytest.raises(ValueError, match="boom"):
            try:
                run_keyed(stage, states, changes, log)
            except ValueError:
                if log is not None:
                    log.undo()
                raise
        assert state_values(stage, states) == before
        present[:] = before_present
    stage.finish = finish
