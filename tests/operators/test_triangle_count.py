"""IVM^ε triangle count (Olteanu §3.3) against brute force after every batch of random, skewed
insert/delete streams; the partition invariants and the views checked against their definitions,
through major rebalancing (M doubling and halving) and minor rebalancing (keys changing part)."""

from __future__ import annotations

import pickle
import random
from collections import Counter

import pytest

from operators.stages.base import Change, Journal, run_keyed
from operators.stages.triangle_count import TriangleCountStage, TriangleState


def brute_force(live: list[Counter]) -> int:
    """Σ R(a,b)·S(b,c)·T(c,a) by nested loops over R and S, a lookup in T."""
    r, s, t = live
    return sum(rc * sc * t.get((c, a), 0) for (a, b), rc in r.items() for (b2, c), sc in s.items() if b2 == b)


def expected_views(state: TriangleState) -> list[Counter]:
    """views[i] = Σ_y relation_i,H(x, y)·relation_{i+1},L(y, z), by nested loops."""
    views = []
    for port in range(3):
        relation, nxt = state.relations[port], state.relations[(port + 1) % 3]
        view: Counter = Counter()
        for (x, y), count in relation.rows.items():
            if x in relation.heavy:
                for (y2, z), other in nxt.rows.items():
                    if y2 == y and y not in nxt.heavy:
                        view[x, z] += count * other
        views.append(+view)
    return views


def check_invariants(stage: TriangleCountStage, state: TriangleState) -> None:
    theta = stage.threshold(state)
    assert state.capacity // 4 <= state.size < state.capacity or state.capacity == 1
    assert state.size == sum(len(relation.rows) for relation in state.relations)
    for relation in state.relations:
        for first, group in relation.by_first.items():
            if first in relation.heavy:
                assert len(group) >= theta / 2
            else:
                assert len(group) < 1.5 * theta
    assert [Counter(view) for view in state.views] == expected_views(state)


def skewed(rng: random.Random, domain: int) -> int:
    """Small values far more often than large ones, so some keys get heavy."""
    return min(int(rng.expovariate(0.5)), domain - 1)


def random_stream(rng: random.Random, batches: int, domain: int, grow: int, shrink_after: int):
    """Batches growing the relations (inserts, some deletes of live rows) for ``shrink_after``
    batches, then mostly deletes; set semantics (a row is present at most once)."""
    live = [Counter(), Counter(), Counter()]
    for number in range(batches):
        changes, pending = [], [Counter(rows) for rows in live]
        deleting = 0.2 if number < shrink_after else 0.85
        for _ in range(rng.randint(1, grow)):
            port = rng.randrange(3)
            if pending[port] and rng.random() < deleting:
                row = rng.choice(sorted(pending[port]))
                changes.append(Change(port, row, -1))
            else:
                row = (skewed(rng, domain), rng.randrange(domain))  # partitioned on the first
                if pending[port][row]:
                    continue
                changes.append(Change(port, row, 1))
            pending[port][row] += changes[-1].weight
            pending[port] = +pending[port]
        yield changes, pending
        live = pending


@pytest.mark.parametrize("epsilon", [0.0, 0.3, 0.5, 0.7, 1.0])
def test_count_equals_brute_force_after_every_batch_through_rebalancing(epsilon):
    rng = random.Random(int(epsilon * 10))
    stage = TriangleCountStage("triangles", epsilon)
    states: dict = {}
    emitted = 0
    non_zero, capacities, heavy_seen, moved = 0, [], 0, 0
    previous_heavy = None
    for number, (changes, live) in enumerate(random_stream(rng, 140, 30, 14, shrink_after=90)):
        if number == 70:  # a Spark state store pickles stage and state
            stage, states = pickle.loads(pickle.dumps((stage, states)))
        for row, weight in run_keyed(stage, states, changes):
            emitted += row[0] * weight
        state = states[()]
        expected = brute_force(live)
        assert state.count == expected == emitted
        non_zero += expected > 0
        check_invariants(stage, state)
        capacities.append(state.capacity)
        heavy = [frozenset(relation.heavy) for relation in state.relations]
        heavy_seen += any(heavy)
        if previous_heavy is not None and capacities[-1] == capacities[-2]:
            moved += heavy != previous_heavy  # same M, other partition: a minor rebalancing
        previous_heavy = heavy
    assert non_zero > 50
    peak = capacities.index(max(capacities))
    assert capacities[0] < max(capacities) > capacities[-1] and peak < len(capacities) - 1  # doubled, then halved
    if 0 < epsilon < 0.6:  # at ε = 0.7, θ = M^ε exceeds the domain of 30 values: nothing is heavy
        assert heavy_seen > 50 and moved > 0
    if epsilon == 1.0:
        assert heavy_seen == 0  # θ = M > N: plain delta queries


def test_a_heavy_key_is_served_by_the_view_and_updates_stay_exact():
    """A hub B = 0 in S with many C-values: R(a, 0) updates read V_ST(0, a) and T_H, not S(0, ·)."""
    stage = TriangleCountStage("triangles", 0.5)
    states: dict = {}
    hub = [Change(1, (0, c), 1) for c in range(40)] + [Change(2, (c, c % 3), 1) for c in range(40)]
    run_keyed(stage, states, hub)
    state = states[()]
    assert 0 in state.relations[1].heavy and state.count == 0
    out = run_keyed(stage, states, [Change(0, (1, 0), 1)])
    assert out == [((0,), -1), ((13,), 1)] and state.count == 13  # the c < 40 with c ≡ 1 (mod 3)
    check_invariants(stage, state)


def test_a_failing_batch_and_a_journal_undo_leave_the_count_as_it_was():
    stage = TriangleCountStage("triangles", 0.5)
    states: dict = {}
    run_keyed(stage, states, [Change(0, (1, 2), 1), Change(1, (2, 3), 1), Change(2, (3, 1), 1)])
    assert states[()].count == 1
    with pytest.raises(ValueError, match="two-column row"):
        run_keyed(stage, states, [Change(0, (1, 5), 1), Change(1, (2, 3, 4), 1)])
    assert states[()].count == 1 and (1, 5) not in states[()].relations[0].rows
    journal = Journal()
    run_keyed(stage, states, [Change(0, (1, 2), -1), Change(2, (3, 7), 1)], journal)
    assert states[()].count == 0
    journal.undo()
    assert states[()].count == 1 and brute_force([Counter(r.rows) for r in states[()].relations]) == 1
