"""The GJT stage over a paged state (operators/stages/gjt/pages.py) against the same stage in memory.

Pages live in a dict backend and every batch builds a fresh ``PageStore`` and ``PagedGjtState`` per
key, as the Spark runner does, so each batch starts from the stored pages only. Random insert/delete
streams with NULLs, duplicates and deletes to zero must give the in-memory stage's changes, reducts
and enumeration after every batch (with tiny pages, so B-tree splits, merges and root changes all
happen); and on two constant-key stages the pages a batch of fixed size reads and writes must stay
flat while the state grows 10× and 100× (counted, not timed).
"""

from __future__ import annotations

import random
from collections import defaultdict

import pytest

from operators.stages.base import Change
from operators.stages.gjt import GjtStage, TEdge
from operators.stages.gjt.pages import PagedGjtState
from operators.structures.page_store import DictBackend, PageStore
from operators.structures.paged_sorted_groups import PagedSortedGroup
from operators.structures.rings import SumRing
from operators.structures.sorted_groups import UNBOUNDED
from tests.operators.test_gjt_stage import (
    BAND,
    NESTED,
    Q3,
    Q4,
    Q5,
    SPREAD,
    T2,
    T2_CONNEX,
    Bound,
    R,
    S,
    StageDescription,
    Stream,
    T,
    leaf,
    node,
    pulled,
    reducts,
    rows3,
    run_batch,
    small,
    stage_of,
)
from tests.operators.test_sorted_groups import inside


class PagedRun:
    """A stage driven over pages in a dict: per batch one store, one paged state per touched key."""

    def __init__(self, stage: GjtStage) -> None:
        self.stage, self.backend, self.keys = stage, DictBackend(), set()
        self.pages_touched = 0

    def batch(self, changes: list[Change], stage: GjtStage | None = None) -> dict:
        stage = stage or self.stage
        by_key: dict[tuple, list[Change]] = defaultdict(list)
        for change in changes:
            by_key[stage.key_of(change.port, change.row)].append(change)
        store = PageStore(self.backend)
        out: dict = defaultdict(int)
        for key, key_changes in by_key.items():
            state = PagedGjtState(stage, store, key)
            new_state, emitted = stage.process(key, state, key_changes)
            state.save()
            (self.keys.add if new_state is not None else self.keys.discard)(key)
            for row, weight in emitted:
                out[row] += weight
        store.flush()
        self.pages_touched = store.pages_read + store.pages_written
        return {row: w for row, w in out.items() if w}

    def states(self) -> dict:
        store = PageStore(self.backend)
        return {key: PagedGjtState(self.stage, store, key) for key in self.keys}


@pytest.fixture
def tiny_pages(monkeypatch):
    monkeypatch.setattr(PagedSortedGroup, "LEAF_CAPACITY", 6)
    monkeypatch.setattr(PagedSortedGroup, "FANOUT", 5)


def q5_rows(g: random.Random) -> tuple:
    return small(g), small(g, 0, 2), small(g, 0, 2)


CASES = {
    "T2 (§4)": (lambda: stage_of(T2, output=("y", "z", "w", "u"), connex=T2_CONNEX),
                {R: lambda g: (small(g), small(g, 0, 3)), S: lambda g: (small(g, 0, 3), small(g), small(g)),
                 T: lambda g: (small(g), small(g, 0, 2))}),
    "Q3": (lambda: stage_of(Q3, output=tuple("abcdefghi")), {R: rows3, S: rows3, T: rows3}),
    "Q4 projected": (lambda: stage_of(Q4, output=("b", "c", "e", "f", "h", "i")), {R: rows3, S: rows3, T: rows3}),
    "Q5 equality + inequality": (lambda: stage_of(Q5, output=("a", "b", "k", "d", "e", "g", "h", "i")),
                                 {R: q5_rows, S: q5_rows, T: rows3}),
    "keyed band": (lambda: stage_of(BAND, key=("k",), output=("k", "a", "c", "d", "f", "g")),
                   {R: lambda g: (small(g), small(g, 0, 1), small(g, 0, 5)),
                    S: lambda g: (small(g), small(g, 0, 1), small(g, 0, 1)), T: lambda g: (small(g), small(g, 0, 1))}),
    "nested": (lambda: stage_of(NESTED, output=("a", "b", "c", "d", "e")),
               {R: lambda g: (small(g, 0, 4), small(g)), T: lambda g: (small(g, 0, 4), small(g)),
                S: lambda g: (small(g), small(g, 0, 2))}),
    "self-join": (lambda: stage_of(SPREAD, key=("b",), output=("b", "t1", "p1", "t2", "p2")),
                  {R: lambda g: (g.randint(0, 1), small(g), small(g, 0, 3))}),
    "REDUCT mode": (lambda: stage_of(Q4), {R: rows3, S: rows3, T: rows3}),
    "ring payloads": (lambda: GjtStage("agg", T2, (), None, None, StageDescription("agg"), ring=SumRing(2),
                                       lift={T: ((0, 1),), R: ((1, 0),)}),
                      {R: lambda g: (small(g), small(g, 0, 3)), S: lambda g: (small(g, 0, 3), small(g), small(g)),
                       T: lambda g: (small(g), small(g, 0, 2))}),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_paged_state_gives_the_in_memory_stages_changes_reducts_and_enumeration(name, tiny_pages):
    make, makers = CASES[name]
    stage = make()
    rng = random.Random(len(name))
    stream, states, paged, nonempty = Stream(rng, makers), {}, PagedRun(stage), 0
    for number in range(40):
        changes = stream.batch(14)
        expected = run_batch(stage, states, changes)
        assert paged.batch(changes) == expected, f"batch {number}"
        paged_states = paged.states()
        assert reducts(stage, paged_states) == reducts(stage, states), f"batch {number}"
        if stage.output is not None or stage.ring is not None:
            assert pulled(stage, paged_states) == pulled(stage, states), f"batch {number}"
        nonempty += bool(expected)
    assert nonempty > 10, "the stream changed the result too rarely to test anything"
    # everything deleted: no page is left behind
    deletes = [Change(port, row, -count) for port, rows in stream.db.items() for row, count in rows.items()]
    run_batch(stage, states, deletes)
    paged.batch(deletes)
    assert not states and not paged.backend.pages


# ---- pages per batch as the state grows ---------------------------------------------------------

# A constant key over an equality (k) and an inequality (a < d): the groups S_n, P_n by k stay small
# while the state grows, so a batch's work is O(|Δ| log n). Push mode: the join's changes are emitted.
GROUPED = node(("k", "d"), TEdge(leaf(S, "k", "d", "e")), TEdge(leaf(R, "k", "a", "b"), (Bound("a", "<", "d"),)))
# A pure inequality join r.a < s.d (a constant key is all there is), pull mode, on a temporally ordered
# insert stream (IEDyn §6): a new r joins no older s, a new s sums R's prefix below it.
PURE = node(("d",), TEdge(leaf(S, "d", "e")), TEdge(leaf(R, "a", "b"), (Bound("a", "<", "d"),)))


def grouped_changes(rng: random.Random, size: int, present: dict[int, list]) -> list[Change]:
    """``size`` inserts of r and s rows over k in a domain growing with the state (~10 rows per k)."""
    groups = max(1, (sum(map(len, present.values())) + size) // 10)
    changes = []
    for _ in range(size):
        port = rng.choice((R, S))
        row = (rng.randrange(groups), rng.randrange(1000), rng.randrange(5))
        present[port].append(row)
        changes.append(Change(port, row, 1))
    return changes


def with_deletes(rng: random.Random, size: int, present: dict[int, list]) -> list[Change]:
    changes = grouped_changes(rng, size // 2, present)
    for _ in range(size - size // 2):
        port = rng.choice((R, S))
        changes.append(Change(port, present[port].pop(rng.randrange(len(present[port]))), -1))
    return changes


def temporal_changes(clock: list[int], size: int) -> list[Change]:
    changes = []
    for _ in range(size):
        clock[0] += 1
        changes.append(Change(R if clock[0] % 2 else S, (clock[0], clock[0] % 7), 1))
    return changes


def pages_per_batch(stage: GjtStage, state_size: int, seed: int, temporal: bool) -> float:
    """Mean pages read + written by 8 batches of 40 changes after loading ``state_size`` rows."""
    rng, present, clock, run = random.Random(seed), {R: [], S: []}, [0], PagedRun(stage)
    loader = stage.without_changes() if stage.output is not None else stage
    while sum(map(len, present.values())) + clock[0] < state_size:
        size = min(5000, state_size - sum(map(len, present.values())) - clock[0])
        run.batch(temporal_changes(clock, size) if temporal else grouped_changes(rng, size, present), loader)
    touched = []
    for _ in range(8):
        changes = temporal_changes(clock, 40) if temporal else with_deletes(rng, 40, present)
        emitted = run.batch(changes)
        assert emitted or stage.output is None or not stage.push
        touched.append(run.pages_touched)
    return sum(touched) / len(touched)


@pytest.mark.parametrize(("stage", "temporal"), [
    (GjtStage("grouped", GROUPED, (), ("k", "d", "e", "a", "b"), None, StageDescription("gjt")), False),
    (GjtStage("pure", PURE, (), ("d", "e", "a", "b"), None, StageDescription("gjt"), push=False), True),
], ids=["equality groups, push mode, inserts and deletes", "pure inequality, pull mode, temporal inserts"])
def test_pages_a_batch_touches_stay_flat_as_the_state_grows_100_times(stage, temporal):
    small_state, ten_times, hundred_times = (pages_per_batch(stage, n, seed=3, temporal=temporal)
                                             for n in (500, 5_000, 50_000))
    assert small_state > 40  # the count is real: a batch reads and writes pages
    assert ten_times <= 1.6 * small_state and hundred_times <= 2 * small_state, (small_state, ten_times, hundred_times)


def test_the_paged_b_tree_matches_a_plain_list_through_splits_merges_and_an_emptied_root(tiny_pages, monkeypatch):
    """Sums and walks of intervals against a plain list; the store is flushed and re-read every few
    steps (pages survive only as bytes); merges and root changes are counted so the test exercises them."""
    merges = []
    merge = PagedSortedGroup._merge
    monkeypatch.setattr(PagedSortedGroup, "_merge", lambda self, *a: merges.append(1) or merge(self, *a))
    rng, backend, rows, counter = random.Random(2), DictBackend(), {}, [0]

    def allocate() -> str:
        counter[0] += 1
        return f"p{counter[0]}"

    store = PageStore(backend)
    depths = set()
    for step in range(4000):
        if step % 7 == 0:
            store.flush()
            store = PageStore(backend)
        group = PagedSortedGroup(store, "root", allocate)
        growing = step < 2500
        present = [r for r, w in rows.items() if w]
        if present and rng.random() < (0.35 if growing else 0.8):
            row = rng.choice(present)
            weight = -rows[row] if rng.random() < 0.6 else -1
        else:
            key = rng.randint(0, 300)
            row = (key, rng.randint(0, 2))
            weight = rng.randint(1, 3)
        group.add(row[0], row, weight)
        rows[row] = rows.get(row, 0) + weight
        rows = {r: w for r, w in rows.items() if w}
        root = store.get("root")
        depths.add(0 if root is None else 1 if root[0] else 2)
        if step % 13:
            continue
        bounds = [UNBOUNDED, *range(-1, 302, 7)]
        low, high = rng.choice(bounds), rng.choice(bounds)
        low_inclusive, high_inclusive = rng.random() < 0.5, rng.random() < 0.5
        expected = sorted((r, w) for r, w in rows.items() if inside(r[0], low, low_inclusive, high, high_inclusive))
        walked = list(group.rows(low, low_inclusive, high, high_inclusive))
        assert [r[0] for r, _ in walked] == sorted(r[0] for r, _ in walked)
        assert sorted(walked) == expected
        assert group.between(low, low_inclusive, high, high_inclusive) == sum(w for _, w in expected)
        assert group.total() == sum(rows.values())
    for row, weight in list(rows.items()):
        PagedSortedGroup(store, "root", allocate).add(row[0], row, -weight)
    store.flush()
    assert merges and {0, 1, 2} <= depths and not backend.pages
