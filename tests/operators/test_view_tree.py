"""View trees (Olteanu §4.1) against brute-force recomputation after every batch of a random stream.

Queries: Ex. 4.4 ``Q(Y, X, Z) = R(Y, X)·S(Y, Z)``; a q-hierarchical three-atom join; the
non-hierarchical ``R(A,B)·S(A,C,E)·T(C,D)`` (probes, stated as not O(1)); and a Retailer-like star
Inventory(locn, date, ksn, units) ⋈ Location(locn, zip) ⋈ Census(zip, pop) ⋈ Item(ksn, price) ⋈
Weather(locn, date, temp) with COUNT, SUM and cofactor payloads and an incremental regression.
"""

from __future__ import annotations

import pickle
import random
from collections import Counter

import numpy
import pytest

from operators.stages.base import Change, Journal, run_keyed
from operators.stages.view_tree import StaticRelationUpdate, ViewTreeStage
from operators.structures.rings import (
    CofactorRing,
    CountRing,
    SingularNormalEquations,
    SumRing,
    linear_regression,
)
from operators.structures.variable_order import Atom, OrderNode, VariableOrder
from operators.zset import apply_changes

EX_4_4 = VariableOrder(
    atoms=(Atom("R", ("Y", "X")), Atom("S", ("Y", "Z"))),
    roots=(OrderNode("Y", (OrderNode("X", atoms=("R",)), OrderNode("Z", atoms=("S",)))),),
    free=("Y", "X", "Z"))


def three_atoms(free: tuple[str, ...], lifts=()) -> VariableOrder:
    """R(A, B)·S(A, C, E)·T(A, C, D): q-hierarchical, order A → {B, C → {E, D}}."""
    return VariableOrder(
        atoms=(Atom("R", ("A", "B")), Atom("S", ("A", "C", "E")), Atom("T", ("A", "C", "D"))),
        roots=(OrderNode("A", (OrderNode("B", atoms=("R",)),
                               OrderNode("C", (OrderNode("E", atoms=("S",)), OrderNode("D", atoms=("T",)))))),),
        free=free, lifts=lifts)


#: R(A, B)·S(A, C, E)·T(C, D) is not hierarchical (atoms(A) and atoms(C) overlap); the same order
#: still maintains it, with T's delta probing S's side by C.
PATH = VariableOrder(
    atoms=(Atom("R", ("A", "B")), Atom("S", ("A", "C", "E")), Atom("T", ("C", "D"))),
    roots=(OrderNode("A", (OrderNode("B", atoms=("R",)),
                           OrderNode("C", (OrderNode("E", atoms=("S",)), OrderNode("D", atoms=("T",)))))),),
    lifts=(("B", 0), ("E", 1), ("D", 2)))


def retailer(free=(), lifts=(("units", 0), ("pop", 1), ("price", 2), ("temp", 3)),
             static=()) -> VariableOrder:
    """The Retailer-like star; order locn → {zip → pop, date → {ksn → {units, price}, temp}}."""
    atoms = (Atom("Inventory", ("locn", "date", "ksn", "units")), Atom("Location", ("locn", "zip")),
             Atom("Census", ("zip", "pop")), Atom("Item", ("ksn", "price")),
             Atom("Weather", ("locn", "date", "temp")))
    atoms = tuple(Atom(a.name, a.variables, a.name in static) for a in atoms)
    ksn = OrderNode("ksn", (OrderNode("units", atoms=("Inventory",)), OrderNode("price", atoms=("Item",))))
    date = OrderNode("date", (ksn, OrderNode("temp", atoms=("Weather",))))
    zip_ = OrderNode("zip", (OrderNode("pop", atoms=("Census",)),), atoms=("Location",))
    return VariableOrder(atoms, (OrderNode("locn", (zip_, date)),), free, lifts)


DOMAINS = {"locn": 3, "date": 3, "ksn": 3, "zip": 2, "A": 3, "C": 3, "Y": 3}


def random_value(rng: random.Random, variable: str) -> int:
    return rng.randrange(DOMAINS[variable]) if variable in DOMAINS else rng.randrange(-4, 9)


def brute_force(order: VariableOrder, ring, live: dict[str, Counter]) -> dict[tuple, object]:
    """Σ over the join of Π multiplicities · Π lifts, grouped by the free variables, by nested loops."""
    lifts = dict(order.lifts)
    result: dict[tuple, object] = {}

    def extend(i: int, assignment: dict, payload) -> None:
        if i == len(order.atoms):
            for variable, slot in lifts.items():
                payload = ring.mul(payload, ring.lift(slot, assignment[variable]))
            key = tuple(assignment[v] for v in order.free)
            result[key] = ring.add(result.get(key, ring.zero), payload)
            return
        atom = order.atoms[i]
        for row, count in live[atom.name].items():
            if all(assignment.get(v, value) == value for v, value in zip(atom.variables, row, strict=True)):
                extend(i + 1, assignment | dict(zip(atom.variables, row, strict=True)),
                       ring.mul(payload, ring.from_int(count)))

    extend(0, {}, ring.one)
    return {key: value for key, value in result.items() if not ring.is_zero(value)}


def random_batch(rng: random.Random, order: VariableOrder, live: dict[str, Counter],
                 size: int = 6, wipe: float = 0.08) -> list[Change]:
    """Inserts (some duplicates of live rows), deletes of live rows (some to zero), an insert and
    delete of one row in the same batch, and now and then a batch deleting a whole relation."""
    dynamic = [(port, atom) for port, atom in enumerate(order.atoms) if not atom.static]
    if rng.random() < wipe:
        port, atom = rng.choice(dynamic)
        return [Change(port, row, -count) for row, count in live[atom.name].items()]
    changes = []
    pending = {atom.name: Counter(live[atom.name]) for _, atom in dynamic}
    for _ in range(rng.randint(1, size)):
        port, atom = rng.choice(dynamic)
        rows = pending[atom.name]
        kind = rng.random()
        if kind < 0.3 and +rows:
            row = rng.choice(sorted(+rows))
            changes.append(Change(port, row, -1))
        elif kind < 0.4 and +rows:
            changes.append(Change(port, rng.choice(sorted(+rows)), 1))  # a duplicate
        else:
            row = tuple(random_value(rng, v) for v in atom.variables)
            changes.append(Change(port, row, 1))
            if kind > 0.93:
                changes.append(Change(port, row, -1))
        rows[changes[-1].row] += changes[-1].weight
    rng.shuffle(changes)
    return changes


def run_stream(order: VariableOrder, ring, seed: int, batches: int = 60, initial=None, check=None,
               size: int = 6, wipe: float = 0.08, lazy: bool = False):
    """Maintain ``order`` over a random stream; after every batch compare the total, the emitted
    changelog and the enumeration with brute force (lazy: nothing is emitted, and the views are read
    every third batch only, so changes wait and cancel in between). Returns how many compared
    batches had a non-empty result."""
    rng = random.Random(seed)
    stage = ViewTreeStage("q", order, ring, initial, lazy)
    live = {atom.name: Counter(map(tuple, (initial or {}).get(atom.name, ()))) for atom in order.atoms}
    states: dict = {}
    emitted: Counter = Counter()
    non_empty = 0
    for number in range(batches):
        if number == batches // 2:  # a Spark state store pickles stage and state
            stage, states = pickle.loads(pickle.dumps((stage, states)))
        changes = random_batch(rng, order, live, size, wipe)
        apply_changes(emitted, run_keyed(stage, states, changes))
        for change in changes:
            apply_changes(live[order.atoms[change.port].name], [(change.row, change.weight)])
        if lazy and number % 3:
            continue
        expected = brute_force(order, ring, live)
        listed = list(stage.enumerate(states.get(())))
        assert len(listed) == len(dict(listed)), "enumeration repeats a tuple"
        assert dict(listed) == expected
        total = ring.zero
        for payload in expected.values():
            total = ring.add(total, payload)
        if lazy:
            assert emitted == Counter() and stage.total(states[()]) == total
        else:
            assert emitted == (Counter() if ring.is_zero(total) else Counter({(total,): 1}))
        non_empty += bool(expected)
        if check is not None:
            check(stage, states.get(()), live)
    return non_empty


@pytest.mark.parametrize("seed", range(4))
def test_example_4_4_factorized_enumeration_equals_the_join(seed):
    assert run_stream(EX_4_4, CountRing(), seed) > 10


@pytest.mark.parametrize("ring", [CountRing(), SumRing(3), CofactorRing(3)], ids=repr)
@pytest.mark.parametrize("free", [(), ("A",), ("A", "C")], ids=str)
def test_q_hierarchical_join_equals_recomputation(ring, free):
    lifts = (("B", 0), ("E", 1), ("D", 2))
    order = three_atoms(free, lifts)
    assert set(ViewTreeStage("q", order, ring).update_bounds().values()) == {"O(1)"}
    assert run_stream(order, ring, seed=len(free)) > 10


@pytest.mark.parametrize("ring", [SumRing(3), CofactorRing(3)], ids=repr)
def test_non_hierarchical_path_probes_and_still_equals_recomputation(ring):
    stage = ViewTreeStage("q", PATH, ring)
    assert stage.update_bounds() == {"R": "O(1)", "S": "O(1)", "T": "O(matches of A at V_C)"}
    assert stage.describe().state.startswith("views V_A(), V_C(A), V_D(C), V_E(A, C), V_B(A);")
    assert stage.describe().update_cost == "R: O(1); S: O(1); T: O(matches of A at V_C)"
    assert run_stream(PATH, ring, seed=5) > 10


@pytest.mark.parametrize("ring,free", [(CountRing(), ()), (SumRing(4), ("locn",)), (CofactorRing(4), ()),
                                       (CountRing(), ("locn", "date"))], ids=str)
def test_retailer_star_equals_recomputation(ring, free):
    lifts = () if isinstance(ring, CountRing) else (("units", 0), ("pop", 1), ("price", 2), ("temp", 3))
    lifts = tuple((v, s) for v, s in lifts if v not in free)
    assert run_stream(retailer(free, lifts), ring, seed=11, batches=80) > 10


def test_retailer_regression_equals_least_squares_after_every_batch():
    """units ≈ θ0 + θ·(pop, price, temp) from the root's cofactor payload, against lstsq on the join."""
    ring = CofactorRing(4)
    order = retailer()
    compared = []

    def check(stage, state, live):
        rows = [(row, count) for row, count in enumerate_join(order, live)]
        design = numpy.array([[1, pop, price, temp] for (units, pop, price, temp), count in rows
                              for _ in range(count)], dtype=float)
        target = numpy.array([units for (units, *_), count in rows for _ in range(count)], dtype=float)
        payload = stage.total(state) if state is not None else ring.zero
        if len(design) == 0 or numpy.linalg.matrix_rank(design) < 4:
            with pytest.raises(SingularNormalEquations):
                linear_regression(ring, payload, label=0)
            return
        theta = [float(t) for t in linear_regression(ring, payload, label=0)]
        expected, *_ = numpy.linalg.lstsq(design, target, rcond=None)
        assert numpy.allclose(theta, expected, rtol=1e-9, atol=1e-9 * max(1.0, abs(expected).max()))
        compared.append(len(design))

    run_stream(order, ring, seed=3, batches=80, check=check, size=12, wipe=0.02)
    assert len(compared) > 20 and max(compared) > 50


def enumerate_join(order: VariableOrder, live: dict[str, Counter]):
    """(units, pop, price, temp) of each Retailer join tuple with its multiplicity, by nested loops."""
    for (locn, date, ksn, units), n1 in live["Inventory"].items():
        for (l2, zip_), n2 in live["Location"].items():
            for (z2, pop), n3 in live["Census"].items():
                for (k2, price), n4 in live["Item"].items():
                    for (l3, d3, temp), n5 in live["Weather"].items():
                        if l2 == locn == l3 and z2 == zip_ and k2 == ksn and d3 == date:
                            yield (units, pop, price, temp), n1 * n2 * n3 * n4 * n5


def test_static_atoms_are_loaded_once_and_refuse_updates():
    """§4.5: Location, Census and Item static; Inventory and Weather then update in O(1)."""
    rng = random.Random(2)
    initial = {"Location": [(locn, locn % 2) for locn in range(3)],
               "Census": [(zip_, rng.randrange(50, 90)) for zip_ in range(2)],
               "Item": [(ksn, rng.randrange(1, 9)) for ksn in range(3)]}
    order = retailer(static=("Location", "Census", "Item"))
    stage = ViewTreeStage("retail", order, CofactorRing(4), initial)
    assert stage.update_bounds() == {"Inventory": "O(1)", "Weather": "O(1)"}
    assert run_stream(order, CofactorRing(4), seed=8, batches=60, initial=initial) > 10
    states: dict = {}
    run_keyed(stage, states, [Change(0, (0, 1, 2, 5), 1), Change(4, (0, 1, 20), 1)])
    before = stage.total(states[()])
    with pytest.raises(StaticRelationUpdate, match="Census is static"):
        run_keyed(stage, states, [Change(0, (1, 1, 1, 1), 1), Change(2, (0, 70), 1)])
    assert stage.total(states[()]) == before and not CofactorRing(4).is_zero(before)


def test_a_failing_batch_and_a_journal_undo_leave_the_views_as_they_were():
    ring = SumRing(3)
    order = three_atoms(("A",), (("B", 0), ("E", 1), ("D", 2)))
    stage = ViewTreeStage("q", order, ring)
    states: dict = {}
    run_keyed(stage, states, [Change(0, (1, 2), 1), Change(1, (1, 3, 4), 1), Change(2, (1, 3, 5), 1)])
    snapshot = contents(states)
    listed = list(stage.enumerate(states[()]))
    assert listed == [((1,), (1, (2, 4, 5)))]
    with pytest.raises(TypeError):  # a lifted value that is not a number fails half way
        run_keyed(stage, states, [Change(0, (1, 7), 1), Change(1, (1, 3, "x"), 1)])
    assert contents(states) == snapshot
    journal = Journal()
    run_keyed(stage, states, [Change(0, (1, 2), -1), Change(2, (2, 3, 1), 1)], journal)
    journal.undo()
    assert contents(states) == snapshot and list(stage.enumerate(states[()])) == listed


def contents(states: dict) -> list:
    """Every relation's entries and indexes, copied (pickled bytes would differ by dict order)."""
    return pickle.loads(pickle.dumps([(r.entries, r.indexes) for r in states[()].relations]))


def test_orders_that_cannot_be_view_trees_are_refused():
    atoms = (Atom("R", ("A", "B")),)
    with pytest.raises(ValueError, match="off the root path"):
        ViewTreeStage("q", VariableOrder(atoms + (Atom("S", ("A",)),),
                                         (OrderNode("A", atoms=("S",)), OrderNode("B", atoms=("R",)))), CountRing())
    with pytest.raises(ValueError, match="in no atom below it"):
        ViewTreeStage("q", VariableOrder(atoms, (OrderNode("C", (OrderNode("A", (OrderNode("B", atoms=("R",)),)),)),)),
                      CountRing())
    with pytest.raises(ValueError, match="free variables must form the top"):
        ViewTreeStage("q", VariableOrder(atoms, (OrderNode("A", (OrderNode("B", atoms=("R",)),)),),
                                         free=("B",)), CountRing())
    with pytest.raises(ValueError, match="not placed"):
        ViewTreeStage("q", VariableOrder(atoms, (OrderNode("A", (OrderNode("B"),)),)), CountRing())


def test_example_4_12_order_of_the_reduct_maintains_the_original_relations():
    """Fig. 6: order Z → Y → X → W over R(X, W), S(X, Y), T(Y, Z). A delta to R probes S by X and T
    by Y; under the FDs X → Y and Y → Z each probe meets at most one tuple (Thm 4.11)."""
    order = VariableOrder(
        atoms=(Atom("R", ("X", "W")), Atom("S", ("X", "Y")), Atom("T", ("Y", "Z"))),
        roots=(OrderNode("Z", (OrderNode("Y", (OrderNode("X", (OrderNode("W", atoms=("R",)),), atoms=("S",)),),
                                         atoms=("T",)),)),),
        free=("Z", "Y", "X", "W"))
    stage = ViewTreeStage("q", order, CountRing())
    assert stage.update_bounds() == {"R": "O(matches of Y at V_X; Z at V_Y)", "S": "O(matches of Z at V_Y)",
                                     "T": "O(1)"}
    assert run_stream(order, CountRing(), seed=12, size=10, wipe=0.03) > 10


def example_4_14(static: bool) -> VariableOrder:
    """Q(A, B, C) = Σ_D R(A, D)·S(A, B)·T(B, C) with T static: order A → {D, B → C}."""
    return VariableOrder(
        atoms=(Atom("R", ("A", "D")), Atom("S", ("A", "B")), Atom("T", ("B", "C"), static)),
        roots=(OrderNode("A", (OrderNode("D", atoms=("R",)),
                               OrderNode("B", (OrderNode("C", atoms=("T",)),), atoms=("S",)))),),
        free=("A", "B", "C"), lifts=(("D", 0),))


def test_example_4_14_static_relation_makes_the_dynamic_updates_constant():
    ring = SumRing(1)
    initial = {"T": [(b, c) for b in range(3) for c in range(b + 1)]}
    assert ViewTreeStage("q", example_4_14(True), ring, initial).update_bounds() == {"R": "O(1)", "S": "O(1)"}
    # were T dynamic, one update to it would fan out over the A-values paired with its B (§4.5)
    assert ViewTreeStage("q", example_4_14(False), ring).update_bounds()["T"] == "O(matches of A at V_B)"
    assert run_stream(example_4_14(True), ring, seed=4, initial=initial) > 10


def test_initial_rows_are_loaded_once_even_after_everything_is_deleted():
    stage = ViewTreeStage("q", EX_4_4, CountRing(), {"R": [(1, 2)], "S": [(1, 3)]})
    states: dict = {}
    assert run_keyed(stage, states, [Change(0, (1, 2), -1)]) == [((1,), -1)]
    assert run_keyed(stage, states, [Change(1, (1, 3), -1)]) == []
    assert run_keyed(stage, states, [Change(0, (1, 5), 1)]) == []
    assert list(stage.enumerate(states[()])) == []
    assert run_keyed(stage, states, [Change(1, (1, 4), 1)]) == [((1,), 1)]
    assert list(stage.enumerate(states[()])) == [((1, 5, 4), 1)]


@pytest.mark.parametrize("ring", [CountRing(), CofactorRing(4)], ids=repr)
def test_lazy_propagation_reads_the_same_views(ring):
    order = retailer(lifts=() if isinstance(ring, CountRing) else (("units", 0), ("pop", 1), ("price", 2), ("temp", 3)))
    assert run_stream(order, ring, seed=21, batches=90, size=10, wipe=0.03, lazy=True) > 10
    stage = ViewTreeStage("q", EX_4_4, CountRing(), lazy=True)
    states: dict = {}
    assert run_keyed(stage, states, [Change(0, (1, 2), 1), Change(1, (1, 3), 1)]) == []
    run_keyed(stage, states, [Change(0, (1, 2), -1)])
    assert states[()].pending == {1: {(1, 3): 1}}  # the insert and delete of R(1, 2) cancelled unseen
    assert list(stage.enumerate(states[()])) == [] and states[()].pending == {}


def test_lazy_read_that_fails_keeps_views_and_pending_changes():
    order = three_atoms(("A",), (("B", 0), ("E", 1), ("D", 2)))
    stage = ViewTreeStage("q", order, SumRing(3), lazy=True)
    states: dict = {}
    run_keyed(stage, states, [Change(0, (1, 2), 1), Change(1, (1, 3, 4), 1), Change(2, (1, 3, 5), 1)])
    assert list(stage.enumerate(states[()])) == [((1,), (1, (2, 4, 5)))]
    snapshot = contents(states)
    run_keyed(stage, states, [Change(0, (1, 7), 1), Change(1, (1, 3, "x"), 1)])
    pending = dict(states[()].pending)
    with pytest.raises(TypeError):
        stage.total(states[()])
    assert contents(states) == snapshot and states[()].pending == pending
