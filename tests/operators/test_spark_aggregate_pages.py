"""A global MIN/MAX aggregate on the Spark runner's paged layout (``PagedStateProcessor`` over
``stages/aggregate_pages.py``), driven by pyspark's TwsTester without a JVM: it emits what the stage
emits in memory after every batch, and a batch's pages are bounded by the batch, not the values kept."""

from __future__ import annotations

import pickle
import random
from collections import Counter

import pytest
from pyspark.sql.streaming.tws_tester import TwsTester

from operators.runtime.dataflow import StageNode
from operators.runtime.spark_stage_processors import PagedStateProcessor
from operators.runtime.stream import Update
from operators.stages.aggregate import GroupAggregateStage
from operators.stages.aggregate_pages import pages_ordered_values
from operators.stages.base import Change
from operators.structures.paged_sorted_groups import PagedSortedGroup
from planner.compiler import compile_query
from tests.maintenance.test_aggregate_functions import CATALOG, sale_stream
from tests.operators.tws_runs import run

GLOBAL = ("select min(score), max(score), min(amount), max(day), min(label), max_by(label, rank), count(*), "
          "sum(qty), avg(amount) from sale where status is distinct from 'void'")


def aggregate_node(sql: str) -> tuple[StageNode, list]:
    """The global aggregate stage of ``sql`` as the last stage, and the routes of ``sale`` into it."""
    dataflow = compile_query(sql, CATALOG).dataflow
    (node,) = [n for n in dataflow.stages if isinstance(n.stage, GroupAggregateStage)]
    return StageNode(node.id, node.stage, downstream=None), [r for r in dataflow.sources if r.stage == node.id]


def stage_changes(routes: list, updates: list[Update]) -> list[Change]:
    return [change for route in routes for change in route.route([(u.row, u.op) for u in updates if u.table == "sale"])]


def test_only_a_global_aggregate_with_min_max_takes_the_paged_layout():
    assert pages_ordered_values(aggregate_node(GLOBAL)[0].stage)
    grouped = compile_query("select g, min(score) from sale group by g", CATALOG).dataflow.stages[-1].stage
    ring = compile_query("select sum(qty), count(*) from sale", CATALOG).dataflow.stages[-1].stage
    distinct = compile_query("select min(score), count(distinct g) from sale", CATALOG).dataflow.stages[-1].stage
    assert not any(map(pages_ordered_values, (grouped, ring, distinct)))


@pytest.mark.parametrize("seed", [1, 2])
def test_the_paged_global_aggregate_emits_the_in_memory_stages_changes_after_every_batch(seed, monkeypatch):
    """``sale_stream``: NULLs, NaN and infinities, duplicate rows, the table emptied and refilled; pages of
    four values so the B-trees split and merge. The MapState ends empty when every row is deleted."""
    monkeypatch.setattr(PagedSortedGroup, "LEAF_CAPACITY", 4)
    monkeypatch.setattr(PagedSortedGroup, "FANOUT", 4)
    node, routes = aggregate_node(GLOBAL)
    tester = TwsTester(PagedStateProcessor(node, None))
    updates = sale_stream(seed)
    live: Counter = Counter()
    state, nonempty = None, 0
    for number, start in enumerate(range(0, len(updates) + 30, 30)):
        batch = updates[start:start + 30] or [Update(0, "sale", -1, row) for row, n in live.items() for _ in range(n)]
        for u in batch:
            live[u.row] += u.op if u.table == "sale" else 0
        changes = stage_changes(routes, batch)
        state, expected = node.stage.process((), state, list(changes))
        assert run(tester, node, changes) == +Counter(dict(expected)), f"batch {number}"
        nonempty += bool(expected)
    assert nonempty > 10 and not +live and not -live and state is None
    assert not tester.peekMapState(f"stage_{node.id}_pages", 0), "pages left after every row was deleted"


def batch_cost(rows: int) -> tuple[int, int, int]:
    """(pages, bytes) moved by one batch of 20 changes after ``rows`` rows of distinct values, and the
    bytes of the in-memory state (what one chunk unpickled and pickled every batch)."""
    node, routes = aggregate_node("select min(score), max(score), count(*) from sale")
    processor = PagedStateProcessor(node, None)
    tester = TwsTester(processor)
    rng = random.Random(rows)
    loaded = [Update(i, "sale", 1, (1, 1, "paid", None, None, rng.random(), None, 1, i, None, None))
              for i in range(rows + 10)]
    state = None
    for start in range(0, rows, 4000):
        changes = stage_changes(routes, loaded[start:min(start + 4000, rows)])
        run(tester, node, changes)
        state, _ = node.stage.process((), state, changes)
    batch = loaded[rows:] + [Update(0, "sale", -1, u.row) for u in rng.sample(loaded[:rows], 10)]
    run(tester, node, stage_changes(routes, batch))
    store = processor.last_batch
    return store.pages_read + store.pages_written, store.bytes_read + store.bytes_written, len(pickle.dumps(state))


def test_a_batch_moves_pages_bounded_by_the_batch_not_the_values_kept():
    """Eight times the values, same batch: pages grow by a B-tree level at most and bytes by the leaves
    filling up, where one chunk moved the whole state (8×); already below the state it moved."""
    small, large = batch_cost(1_000), batch_cost(8_000)
    assert large[0] < 1.5 * small[0] and large[1] < 2.5 * small[1], (small, large)
    assert large[2] > 7 * small[2] and large[1] < large[2] / 2, (small, large)

