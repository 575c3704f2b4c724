"""The per-view stages of a view tree (operators/stages/view_stages.py) on their own: a stage keyed by
its inputs' shared variables emits the change of its partial sums, whose sum over keys is the view;
view ports read weight · payload; an input above the stage's top is refused; a global total keeps
its one row at zero."""

from __future__ import annotations

import random

import pytest

from operators.stages.base import Change, run_keyed
from operators.stages.view_stages import TotalStage, ViewStage
from operators.structures.rings import SumRing
from operators.structures.variable_order import Atom, OrderNode, VariableOrder

RING = SumRing(1)


def v_b() -> ViewStage:
    """V_B(A) = Σ_B lift(B)·R(A, B)·W(A, B), W a view port; the stage keyed by (A, B)."""
    order = VariableOrder(atoms=(Atom("R", ("A", "B")), Atom("W", ("A", "B"))),
                          roots=(OrderNode("A", (OrderNode("B", atoms=("R", "W")),)),), lifts=(("B", 0),))
    return ViewStage("V_B", order, RING, ("B",), ("A", "B"), frozenset({1}))


def test_partial_sums_over_all_keys_add_up_to_the_view():
    stage, states, view = v_b(), {}, {}
    g = random.Random(3)
    rows: dict[tuple, int] = {}
    weights: dict[tuple, tuple] = {}
    for _ in range(40):
        changes = []
        for _ in range(5):
            key = (g.randrange(3), g.randrange(4))
            if g.random() < 0.5:
                weight = -1 if rows.get(key, 0) and g.random() < 0.4 else 1
                rows[key] = rows.get(key, 0) + weight
                changes.append(Change(0, key, weight))
            else:  # a view port: (key..., payload), its weight multiplies the payload
                payload, weight = (g.randrange(1, 3), (g.randrange(-5, 6),)), g.choice((1, -1, 2))
                weights[key] = RING.add(weights.get(key, RING.zero), RING.mul(RING.from_int(weight), payload))
                changes.append(Change(1, (*key, payload), weight))
        for (a, *rest), weight in run_keyed(stage, states, changes):
            (payload,) = rest
            assert weight == 1
            view[a] = RING.add(view.get(a, RING.zero), payload)
    expected: dict[int, tuple] = {}
    for (a, b), count in rows.items():
        product = RING.mul_lift(RING.mul(RING.from_int(count), weights.get((a, b), RING.zero)), 0, b)
        expected[a] = RING.add(expected.get(a, RING.zero), product)
    nonzero = {a: p for a, p in expected.items() if not RING.is_zero(p)}
    assert {a: p for a, p in view.items() if not RING.is_zero(p)} == nonzero and nonzero
    live = {k for k, count in rows.items() if count} | {k for k, w in weights.items() if not RING.is_zero(w)}
    assert set(states) == live  # a key whose inputs all cancelled keeps no state


def test_an_input_above_the_top_is_refused():
    order = VariableOrder(atoms=(Atom("R", ("A", "B")), Atom("S", ("A",))),
                          roots=(OrderNode("A", (OrderNode("B", atoms=("R",)),), atoms=("S",)),))
    with pytest.raises(ValueError, match="input S lies above B"):
        ViewStage("V_B", order, RING, ("B",), ("A",))


def test_the_total_of_a_global_aggregate_keeps_its_row_at_zero():
    stage, states = TotalStage("total", RING), {}
    assert run_keyed(stage, states, [Change(0, ((2, (5,)),), 1)]) == [((RING.zero,), -1), (((2, (5,)),), 1)]
    assert run_keyed(stage, states, [Change(0, ((2, (5,)),), -1)]) == [(((2, (5,)),), -1), ((RING.zero,), 1)]
    assert states == {}
