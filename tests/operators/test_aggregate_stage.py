"""The group-aggregate and distinct stages: right under deletes, and blind to the order within a batch."""

from __future__ import annotations

import copy
import itertools
import random
from collections import Counter
from operator import itemgetter

import pytest

from operators.stages.aggregate import AggregateSpec, GroupAggregateStage, RingAggregateStage, ordered_by
from operators.stages.base import Change
from operators.stages.distinct import DistinctStage
from operators.zset import apply_changes

VALUE = itemgetter(1)
# rows are (group, value); the result row is (group, min, max, count distinct, sum distinct, avg distinct, count)
SPECS = (
    AggregateSpec("min", VALUE), AggregateSpec("max", VALUE), AggregateSpec("count", VALUE, distinct=True),
    AggregateSpec("sum", VALUE, distinct=True), AggregateSpec("avg", VALUE, distinct=True),
    AggregateSpec("count", None),
)


def grouped(specs=SPECS, stage_class=GroupAggregateStage) -> GroupAggregateStage:
    return stage_class(("g",), (itemgetter(0),), specs, lambda row: row, ("g",) + tuple(f"a{i}" for i in range(len(specs))))


def global_aggregate(specs=SPECS) -> GroupAggregateStage:
    return GroupAggregateStage((), (), specs, lambda row: row, tuple(f"a{i}" for i in range(len(specs))))


def changes(*pairs) -> list[Change]:
    return [Change(0, row, weight) for row, weight in pairs]


def run(stage, batches, initial=()):
    """Feed batches through one stage, keeping per-key state; return the accumulated output multiset."""
    states, result = {}, Counter(initial)
    for batch in batches:
        by_key: dict[tuple, list[Change]] = {}
        for change in batch:
            by_key.setdefault(stage.key_of(change.port, change.row), []).append(change)
        for key, key_changes in by_key.items():
            new_state, out = stage.process(key, states.get(key), key_changes)
            states[key] = new_state
            apply_changes(result, out)
    return result


def expected_row(group, values: Counter):
    """The result row recomputed from the group's current argument values (None for NULL)."""
    present = [v for v, m in values.items() if m > 0 and v is not None]
    rows = sum(values.values())
    if not rows:
        return None
    if not present:
        return (group, None, None, 0, None, None, rows)
    return (group, min(present), max(present), len(present), sum(present), sum(present) / len(present), rows)


def test_deleting_the_current_minimum_and_maximum_exposes_the_next_values():
    stage = grouped()
    inserted = changes((("a", 5), 1), (("a", 1), 1), (("a", 9), 1), (("a", 3), 1))
    assert run(stage, [inserted]) == Counter({("a", 1, 9, 4, 18, 4.5, 4): 1})
    assert run(stage, [inserted, changes((("a", 1), -1), (("a", 9), -1))]) == Counter({("a", 3, 5, 2, 8, 4.0, 2): 1})


def test_a_duplicate_keeps_its_value_until_its_last_copy_is_deleted():
    stage = grouped()
    twice = changes((("a", 1), 1), (("a", 1), 1), (("a", 4), 1))
    assert run(stage, [twice]) == Counter({("a", 1, 4, 2, 5, 2.5, 3): 1})
    once_deleted = [twice, changes((("a", 1), -1))]
    assert run(stage, once_deleted) == Counter({("a", 1, 4, 2, 5, 2.5, 2): 1})
    assert run(stage, [*once_deleted, changes((("a", 1), -1))]) == Counter({("a", 4, 4, 1, 4, 4.0, 1): 1})


def test_null_arguments_are_ignored_and_a_group_of_nulls_shows_null_and_zero():
    stage = grouped()
    assert run(stage, [changes((("a", None), 1), (("a", 2), 1))]) == Counter({("a", 2, 2, 1, 2, 2.0, 2): 1})
    emptied = [changes((("a", None), 1), (("a", 2), 1)), changes((("a", 2), -1))]
    assert run(stage, emptied) == Counter({("a", None, None, 0, None, None, 1): 1})


def test_a_group_whose_last_row_is_deleted_disappears_and_a_global_aggregate_shows_nulls():
    assert run(grouped(), [changes((("a", 2), 1)), changes((("a", 2), -1))]) == Counter()
    stage = global_aggregate()
    empty = stage.empty_result()
    assert empty == (None, None, 0, None, None, 0)
    assert run(stage, [changes((("a", 2), 1)), changes((("a", 2), -1))], initial=[empty]) == Counter({empty: 1})


def test_an_insert_and_delete_of_a_new_value_in_one_batch_leave_no_trace_in_either_order():
    stage = grouped()
    before = changes((("a", 5), 1))
    for batch in (changes((("a", 1), 1), (("a", 1), -1)), changes((("a", 1), -1), (("a", 1), 1))):
        assert run(stage, [before, batch]) == Counter({("a", 5, 5, 1, 5, 5.0, 1): 1})


@pytest.mark.parametrize(("stage", "expected"), [
    (grouped(), {("a", 2, 7, 3, 13, 13 / 3, 4): -1, ("a", 4, 9, 3, 20, 20 / 3, 4): 1}),
    (DistinctStage(("g", "v")), {("a", 2): -1, ("a", 9): 1}),
], ids=["group_aggregate", "distinct"])
def test_every_order_of_a_batch_gives_the_same_output(stage, expected):
    earlier = changes((("a", 2), 1), (("a", 7), 1), (("a", 7), 1), (("a", 4), 1))
    batch = changes((("a", 2), -1), (("a", 7), -1), (("a", 1), 1), (("a", 1), -1), (("a", 9), 2), (("a", 9), -1),
                    (("a", 4), 1))
    states: dict = {}
    for change in earlier:
        key = stage.key_of(0, change.row)
        states[key], _ = stage.process(key, states.get(key), [change])
    outputs = set()
    for order in itertools.permutations(batch):
        by_key: dict[tuple, list[Change]] = {}
        for change in order:
            by_key.setdefault(stage.key_of(0, change.row), []).append(change)
        emitted = Counter()
        for key, key_changes in by_key.items():
            apply_changes(emitted, stage.process(key, copy.deepcopy(states.get(key)), key_changes)[1])
        outputs.add(frozenset(emitted.items()))
    assert outputs == {frozenset(expected.items())}


def test_random_batches_match_recomputation_from_the_group_values():
    rng = random.Random(3)
    stage = grouped()
    current: dict[str, Counter] = {"a": Counter(), "b": Counter()}
    states, result = {}, Counter()
    for _ in range(200):
        batch = []
        for _ in range(rng.randint(1, 6)):
            group = rng.choice("ab")
            value = rng.choice([None, 1, 2, 2.5, 3, 8])
            weight = -1 if current[group][value] > 0 and rng.random() < 0.45 else 1
            current[group][value] += weight
            batch.append(Change(0, (group, value), weight))
        rng.shuffle(batch)
        by_key: dict[tuple, list[Change]] = {}
        for change in batch:
            by_key.setdefault(stage.key_of(0, change.row), []).append(change)
        for key, key_changes in by_key.items():
            states[key], out = stage.process(key, states.get(key), key_changes)
            apply_changes(result, out)
        expected = Counter(row for g in "ab" if (row := expected_row(g, current[g])) is not None)
        assert _rounded(result) == _rounded(expected)


def _rounded(rows: Counter) -> Counter:
    """Float sums of a different order differ in the last bits; compare them to 9 places."""
    return Counter({tuple(round(v, 9) if isinstance(v, float) else v for v in row): m for row, m in rows.items()})


def test_ring_stage_refuses_an_aggregate_that_is_not_a_ring():
    with pytest.raises(ValueError, match="MIN is not a ring aggregate"):
        grouped((AggregateSpec("min", VALUE),), RingAggregateStage)


def test_explain_states_the_update_cost_of_each_kind_of_aggregate():
    assert grouped().describe().update_cost.startswith("O(log n) per join change")
    distinct_only = grouped((AggregateSpec("count", VALUE, distinct=True),)).describe()
    assert distinct_only.update_cost == "O(1) per join change"
    assert distinct_only.operator == "GroupAggregate (COUNT DISTINCT)"
    ring = grouped((AggregateSpec("sum", VALUE),), RingAggregateStage).describe()
    assert ring.operator == "RingAggregate (SUM)" and "ring" in ring.why
    assert global_aggregate().describe().key == "constant (does not scale out)"


def test_distinct_emits_a_row_when_its_count_leaves_zero_and_retracts_it_when_it_returns():
    stage = DistinctStage(("g", "v"))
    row = ("a", 1)
    assert run(stage, [changes((row, 1))]) == Counter({row: 1})
    assert run(stage, [changes((row, 1)), changes((row, 1))]) == Counter({row: 1})
    assert run(stage, [changes((row, 1)), changes((row, 1)), changes((row, -1))]) == Counter({row: 1})
    assert run(stage, [changes((row, 1), (row, 1)), changes((row, -1)), changes((row, -1))]) == Counter()
    state, out = stage.process(row, 2, changes((row, -2)))
    assert state is None and out == [(row, -1)]


def test_distinct_rejects_a_delete_without_its_insert():
    with pytest.raises(RuntimeError, match=r"row \('a', 1\) has multiplicity -1"):
        DistinctStage(("g", "v")).process(("a", 1), None, changes((("a", 1), -1)))


def test_max_by_and_min_by_break_ties_by_the_value_and_fall_back_on_delete():
    """Spark leaves a tie in the ordering to whichever row it meets last; the stage takes the greatest
    value for max_by and the least (NULL first) for min_by, a function of the rows present.
    Rows are (group, value, ordering); a NULL ordering is skipped, a NULL value is an answer."""
    by = ordered_by(itemgetter(1), itemgetter(2))
    stage = grouped((AggregateSpec("max_by", by), AggregateSpec("min_by", by)))
    state, out = stage.process(("g",), None, changes(
        (("g", "b", 5), 1), (("g", "c", 5), 1), (("g", None, 1), 1), (("g", "a", 1), 1), (("g", "z", None), 1)))
    assert out == [(("g", "c", None), 1)]
    state, out = stage.process(("g",), state, changes((("g", "c", 5), -1), (("g", None, 1), -1)))
    assert sorted(out, key=str) == sorted([(("g", "c", None), -1), (("g", "b", "a"), 1)], key=str)
    state, out = stage.process(("g",), state, changes((("g", "b", 5), -1), (("g", "a", 1), -1)))
    assert sorted(out, key=str) == sorted([(("g", "b", "a"), -1), (("g", None, None), 1)], key=str)
