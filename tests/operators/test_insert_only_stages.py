"""The insert-only stages (Olteanu §4.6): the same output as the general MIN/MAX and top-k stages on
insert-only batches, in any order within a batch; a batch whose net change to a row is a retraction is
refused with the state untouched; one whose changes cancel is accepted."""

from __future__ import annotations

import copy
import random
from collections import Counter
from operator import itemgetter

import pytest

from operators.stages.aggregate import AggregateSpec, GroupAggregateStage
from operators.stages.base import Change, StageDescription
from operators.stages.insert_only import RetractionError
from operators.stages.insert_only_aggregate import InsertOnlyAggregateStage
from operators.stages.insert_only_top_k import InsertOnlyTopKStage
from operators.stages.top_k import TopKStage
from tests.operators.test_aggregate_stage import changes, run

VALUE = itemgetter(1)
# rows are (group, value); result rows (group, min, max, min(distinct), count, sum, avg)
SPECS = (AggregateSpec("min", VALUE), AggregateSpec("max", VALUE), AggregateSpec("min", VALUE, distinct=True),
         AggregateSpec("count", None), AggregateSpec("sum", VALUE), AggregateSpec("avg", VALUE))
COLUMNS = ("g", "lo", "hi", "lo_distinct", "n", "total", "mean")
TABLES = ("t",)


def aggregate(stage_class, group_by=(itemgetter(0),)):
    names = ("g",) if group_by else ()
    options = {"insert_only": TABLES} if stage_class is InsertOnlyAggregateStage else {}
    return stage_class(names, group_by, SPECS, lambda row: row, COLUMNS if group_by else COLUMNS[1:], **options)


def top_k(stage_class, count: int):
    options = {"insert_only": TABLES} if stage_class is InsertOnlyTopKStage else {}
    return stage_class("top", ((VALUE, False), (itemgetter(0), True)), count, ("g", "v"), StageDescription("TopK"),
                       **options)


def insert_batches(seed: int, batches: int = 25) -> list[list[Change]]:
    """Inserts of (group, value) from small domains: duplicates, ties, NULL values, new groups late."""
    rng = random.Random(seed)
    out = []
    for number in range(batches):
        groups = 2 + number // 5
        out.append(changes(*(((rng.randrange(groups), None if rng.random() < 0.2 else rng.randrange(30)), 1)
                             for _ in range(rng.randrange(1, 9)))))
    return out


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("grouped", [True, False], ids=["grouped", "global"])
def test_insert_only_aggregate_gives_the_general_aggregates_output(seed, grouped):
    group_by = (itemgetter(0),) if grouped else ()
    batches = insert_batches(seed)
    shuffled = [random.Random(seed).sample(batch, len(batch)) for batch in batches]
    expected = run(aggregate(GroupAggregateStage, group_by), batches)
    assert run(aggregate(InsertOnlyAggregateStage, group_by), shuffled) == expected
    assert any(row[1] is not None for row in expected), "the compared results must hold values"


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("count", [0, 1, 3, 10])
def test_insert_only_top_k_gives_the_general_top_ks_output(seed, count):
    batches = insert_batches(seed)
    general, insert_only = top_k(TopKStage, count), top_k(InsertOnlyTopKStage, count)
    general_state = insert_only_state = None
    for batch in batches:
        general_state, expected = general.process((), general_state, batch)
        insert_only_state, got = insert_only.process((), insert_only_state, random.Random(seed).sample(batch, len(batch)))
        assert Counter(dict(got)) == Counter(dict(expected))
        assert len(insert_only_state or ()) <= count
    assert count == 0 or general_state[:count] == insert_only_state


def test_changes_that_cancel_within_a_batch_are_accepted():
    stage = aggregate(InsertOnlyAggregateStage)
    state, out = stage.process((1,), None, changes(((1, 5), 1)))
    state, out = stage.process((1,), state, changes(((1, 2), 1), ((1, 2), -1), ((1, 7), 1)))
    assert Counter(dict(out)) == Counter({(1, 5, 5, 5, 1, 5, 5.0): -1, (1, 5, 7, 5, 2, 12, 6.0): 1})


def test_a_net_retraction_is_refused_and_leaves_the_state_as_it_was():
    stage = aggregate(InsertOnlyAggregateStage)
    state, _ = stage.process((1,), None, changes(((1, 5), 1), ((1, 3), 1)))
    kept = copy.deepcopy(state)
    with pytest.raises(RetractionError, match=r"lost row \(1, 3\).*relies on t never losing a row"):
        stage.process((1,), state, changes(((1, 3), -1), ((1, 9), 1)))
    assert state == kept
    top = top_k(InsertOnlyTopKStage, 2)
    best, _ = top.process((), None, changes(((1, 5), 1), ((2, 3), 1)))
    kept = list(best)
    with pytest.raises(RetractionError, match=r"lost row \(1, 5\)"):
        top.process((), best, changes(((1, 5), -1)))
    assert best == kept


def test_revert_returns_the_old_state_untouched():
    stage = aggregate(InsertOnlyAggregateStage)
    old, _ = stage.process((1,), None, changes(((1, 5), 1)))
    kept = copy.deepcopy(old)
    batch = changes(((1, 1), 1), ((1, 9), 1))
    new, _ = stage.process((1,), old, batch)
    assert (new.values[:2], old) == ([1, 9], kept)
    assert stage.revert((1,), old, new, batch) is old
    top = top_k(InsertOnlyTopKStage, 2)
    old, _ = top.process((), None, changes(((1, 5), 1)))
    new, _ = top.process((), old, changes(((2, 8), 1), ((3, 9), 1)))
    assert [row for _, row in new] == [(3, 9), (2, 8)] and [row for _, row in old] == [(1, 5)]
    assert top.revert((), old, new, []) is old


def test_a_distinct_count_is_not_an_insert_only_aggregate():
    with pytest.raises(ValueError, match="COUNT DISTINCT needs each value's copies"):
        InsertOnlyAggregateStage(("g",), (itemgetter(0),), (AggregateSpec("count", VALUE, distinct=True),),
                                 lambda row: row, ("g", "n"), TABLES)
