"""The RPAI-tree stage (VWAP) and PSP's per-key index on the Spark runner's paged layout (``PagedStateProcessor`` over
``stages/nested/pages.py``), driven by pyspark's TwsTester without a JVM: it emits what the stage emits
in memory after every batch, and a batch reads and writes pages bounded by the batch, not the state."""

from __future__ import annotations

import pickle
import random
from collections import Counter
from pathlib import Path

import pytest
from pyspark.sql.streaming.tws_tester import TwsTester

from catalog.orderbook import orderbook_catalog
from operators.runtime.dataflow import StageNode
from operators.runtime.spark_stage_processors import PagedStateProcessor, paged_state
from operators.runtime.stream import Update
from operators.stages.base import Change
from operators.stages.nested.per_key_index import PerKeyIndexStage
from operators.stages.nested.rpai_tree import RpaiTreeStage
from operators.structures.paged_rpai_tree import PagedRPAITree
from planner.compiler import compile_query
from planner.workloads.orderbook_streams import make_orderbook_stream
from tests.maintenance.test_nested_local import VWAP_VARIANTS
from tests.operators.tws_runs import run


def rpai_node(sql: str, kind: type = RpaiTreeStage) -> tuple[StageNode, list]:
    """The first stage of ``kind`` in ``sql``'s dataflow as the last stage, and the routes into it."""
    dataflow = compile_query(sql, orderbook_catalog()).dataflow
    node = next(n for n in dataflow.stages if isinstance(n.stage, kind))
    return StageNode(node.id, node.stage, downstream=None), [r for r in dataflow.sources if r.stage == node.id]


def stage_changes(routes: list, updates) -> list[Change]:
    return [change for route in routes for change in route.route([(u.row, u.op) for u in updates])]


PSP = (Path(__file__).parents[2] / "examples" / "orderbook" / "psp.sql").read_text()
CASES = {**{variant: (VWAP_VARIANTS[variant], RpaiTreeStage) for variant in ("<=", "<", ">", "grouped by broker")},
         "PSP's per-key index under a global threshold": (PSP, PerKeyIndexStage)}


@pytest.mark.parametrize("case", list(CASES))
def test_the_paged_rpai_stage_emits_the_in_memory_stages_changes_after_every_batch(case, monkeypatch):
    """Random inserts and deletes of bids (duplicate prices, deletes of the cheapest and dearest) in
    batches of 25, pages of 5 keys so trees grow several levels and merge; then every row is deleted:
    the MapState ends empty."""
    monkeypatch.setattr(PagedRPAITree, "LEAF_CAPACITY", 5)
    monkeypatch.setattr(PagedRPAITree, "FANOUT", 5)
    node, routes = rpai_node(*CASES[case])
    assert paged_state(node.stage) is not None
    tester = TwsTester(PagedStateProcessor(node, None))
    updates = list(make_orderbook_stream(500, seed=21))
    live: Counter = Counter()
    state, nonempty = None, 0
    for number, start in enumerate(range(0, len(updates) + 25, 25)):
        batch = updates[start:start + 25]
        if not batch:  # the end: delete every row left
            batch = [Update(0, "bids", -1, row) for row, n in live.items() for _ in range(n)]
        for u in batch:
            live[u.row] += u.op if u.table == "bids" else 0
        changes = stage_changes(routes, [u for u in batch if u.table == "bids"])
        state, expected = node.stage.process((), state, list(changes))
        assert run(tester, node, changes) == +Counter(dict(expected)), f"batch {number}"
        nonempty += bool(expected)
    assert nonempty > 10 and not +live and not -live
    assert not tester.peekMapState(f"stage_{node.id}_pages", 0), "pages left after every row was deleted"


def bids(count: int, seed: int) -> list[Update]:
    """``count`` bid inserts at distinct-ish prices (a million of them), so the trees hold ~``count`` keys."""
    rng = random.Random(seed)
    return [Update(i, "bids", 1, (i, i, rng.randrange(10), rng.randrange(1, 100), rng.randrange(10**6)))
            for i in range(count)]


def batch_cost(rows: int) -> tuple[int, int]:
    """(pages, bytes) read + written by one batch of 20 bid changes (10 inserts, 10 deletes) after
    ``rows`` bids were loaded."""
    node, routes = rpai_node(VWAP_VARIANTS["<="])
    processor = PagedStateProcessor(node, None)
    tester = TwsTester(processor)
    loaded = bids(rows + 10, seed=rows)
    for start in range(0, rows, 4000):
        run(tester, node, stage_changes(routes, loaded[start:min(start + 4000, rows)]))
    deletes = [Update(0, "bids", -1, u.row) for u in random.Random(1).sample(loaded[:rows], 10)]
    run(tester, node, stage_changes(routes, loaded[rows:] + deletes))
    store = processor.last_batch
    return store.pages_read + store.pages_written, store.bytes_read + store.bytes_written


def test_a_batch_reads_and_writes_pages_bounded_by_the_batch_not_the_state():
    """Eight times the bids, same batch: the pages and bytes a batch moves grow by the trees' depth
    (log_B n), far less than 8×, where one chunk of state moved all of it (8×). Against the whole
    state: the batch moves a small share of its bytes."""
    small, large = batch_cost(1_000), batch_cost(8_000)
    assert large[0] < 2 * small[0] and large[1] < 2.5 * small[1], (small, large)
    node, routes = rpai_node(VWAP_VARIANTS["<="])
    state, _ = node.stage.process((), None, stage_changes(routes, bids(8_000, seed=8_000)))
    assert len(state.index.bound) > 7_000
    whole = len(pickle.dumps(state))  # what one chunk of state unpickled and pickled again every batch
    assert large[1] < whole / 4, (large, whole)


def test_a_per_key_index_keyed_by_its_correlation_key_keeps_its_chunks():
    """TPC-H Q17's per-key index has a key per part: its keys spread over buckets, where chunks cost
    three state calls per bucket and pages would cost several per key; only a global threshold pages."""
    from catalog.tpch import tpch_catalog

    q17 = (Path(__file__).parents[2] / "examples" / "tpch" / "q17.sql").read_text()
    (node,) = [n for n in compile_query(q17, tpch_catalog()).dataflow.stages if isinstance(n.stage, PerKeyIndexStage)]
    assert not node.stage.constant_key and paged_state(node.stage) is None
    assert rpai_node(PSP, PerKeyIndexStage)[0].stage.constant_key
