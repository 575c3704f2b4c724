"""The IEDyn stage (T-reduct, Algorithms 1 and 2, delta enumeration) against nested-loop recomputation.

Every random test drives the stage per key with ``process`` and, after every batch, compares the
batch's output (push mode), the running sum of outputs, and ``enumerate`` (pull mode) with the
query recomputed by nested loops over the current multisets, with SQL's NULLs.
"""

from __future__ import annotations

import pickle
import random
from collections import Counter, defaultdict

import pytest

from operators.stages.base import Change, StageDescription
from operators.stages.gjt import Bound, GjtStage, TEdge, TNode
from operators.structures.rings import SumRing

# ---- the oracle ------------------------------------------------------------------------------


def leaves_and_predicates(root: TNode) -> tuple[list[TNode], list[Bound]]:
    leaves, predicates = [], []

    def walk(node: TNode) -> None:
        if not node.children:
            leaves.append(node)
        for edge in node.children:
            predicates.extend(edge.predicates)
            walk(edge.child)

    walk(root)
    return leaves, predicates


def holds(bound: Bound, values: dict) -> bool:
    left, right = values[bound.left], values[bound.right]
    if left is None or right is None:
        return False
    right = right + bound.offset
    return left < right if bound.op == "<" else left <= right


def recomputed(root: TNode, db: dict[int, Counter], output: tuple[str, ...]) -> dict:
    """π_output(⋈ leaves | predicates) by nested loops; a shared variable never matches NULL."""
    leaves, predicates = leaves_and_predicates(root)
    result: dict = defaultdict(int)

    def extend(i: int, values: dict, weight: int) -> None:
        if i == len(leaves):
            if all(holds(b, values) for b in predicates):
                result[tuple(values[v] for v in output)] += weight
            return
        leaf = leaves[i]
        for row, count in db[leaf.port].items():
            bound = dict(values)
            ok = True
            for variable, value in zip(leaf.variables, row, strict=True):
                if variable in bound:
                    if value is None or bound[variable] != value:
                        ok = False
                        break
                bound[variable] = value
            if ok:
                extend(i + 1, bound, weight * count)

    extend(0, {}, 1)
    return {row: w for row, w in result.items() if w}


# ---- driving the stage -----------------------------------------------------------------------


def run_batch(stage: GjtStage, states: dict, changes: list[Change]) -> dict:
    by_key: dict[tuple, list[Change]] = defaultdict(list)
    for change in changes:
        by_key[stage.key_of(change.port, change.row)].append(change)
    out: dict = defaultdict(int)
    for key, key_changes in by_key.items():
        new_state, emitted = stage.process(key, states.get(key), key_changes)
        if new_state is None:
            states.pop(key, None)
        else:
            states[key] = new_state
        assert len({row for row, _ in emitted}) == len(emitted), "a key's changes come consolidated"
        for row, weight in emitted:
            assert weight != 0
            out[row] += weight
    return {row: w for row, w in out.items() if w}


def pulled(stage: GjtStage, states: dict) -> dict:
    out: dict = defaultdict(int)
    for key, state in states.items():
        for row, weight in stage.enumerate(key, state):
            out[row] += weight
    return {row: w for row, w in out.items() if w}


def added(a: dict, b: dict, sign: int = 1) -> dict:
    out = dict(a)
    for row, w in b.items():
        out[row] = out.get(row, 0) + sign * w
    return {row: w for row, w in out.items() if w}


class Stream:
    """Random batches of inserts and deletes per port: duplicates, deletes down to zero copies, and
    updates of a row's last column (a delete and an insert that leave the row's other values)."""

    def __init__(self, rng: random.Random, makers: dict) -> None:
        self.rng, self.makers = rng, makers
        self.db: dict[int, Counter] = {port: Counter() for port in makers}

    def batch(self, size: int) -> list[Change]:
        rng, changes = self.rng, []
        for _ in range(rng.randint(0, size)):
            port = rng.choice(list(self.makers))
            present = self.db[port]
            if present and rng.random() < 0.15:
                old = rng.choice(list(present))
                new = old[:-1] + self.makers[port](rng)[-1:]
                for row, weight in ((old, -1), (new, 1)):
                    present[row] += weight
                    if not present[row]:
                        del present[row]
                    changes.append(Change(port, row, weight))
                continue
            if present and rng.random() < 0.4:
                row = rng.choice(list(present))
                weight = -present[row] if rng.random() < 0.3 else -1
            else:
                row = rng.choice(list(present)) if present and rng.random() < 0.2 else self.makers[port](rng)
                weight = rng.choice((1, 1, 2))
            present[row] += weight
            if not present[row]:
                del present[row]
            changes.append(Change(port, row, weight))
        rng.shuffle(changes)
        return changes


def small(rng: random.Random, low: int = 0, high: int = 9, nulls: float = 0.05):
    return None if rng.random() < nulls else rng.randint(low, high)


def reducts(stage: GjtStage, states: dict) -> list[dict]:
    """ρ_n per node, summed over the keys (a node without the key variables sees every key)."""
    out: list[dict] = [defaultdict(int) for _ in stage.plan.nodes]
    for state in states.values():
        for number, reduct in enumerate(state.reducts):
            for row, weight in reduct.items():
                out[number][row] += weight
    return [{row: w for row, w in reduct.items() if w} for reduct in out]


def check_random_stream(stage: GjtStage, makers: dict, seed: int, batches: int = 40, size: int = 8) -> None:
    """Push and pull against recomputation after every batch; most batches must see a non-empty
    result, and a good share of them a non-empty change."""
    rng = random.Random(seed)
    stream, states, running, nonempty, changed = Stream(rng, makers), {}, {}, 0, 0
    output = stage.output if stage.output is not None else stage.root.variables
    before = {}
    for _ in range(batches):
        emitted = run_batch(stage, states, stream.batch(size))
        after = recomputed(stage.root, stream.db, output)
        assert emitted == added(after, before, -1)
        running = added(running, emitted)
        assert running == after
        if stage.output is not None:
            assert pulled(stage, states) == after
        # Definition 4.1 node by node: ρ_n = π_var(n)(the subtree's join | the subtree's predicates)
        assert reducts(stage, states) == [recomputed(n.tnode, stream.db, n.variables) for n in stage.plan.nodes]
        nonempty += bool(after)
        changed += bool(emitted)
        before = after
    assert nonempty > batches // 2 and changed > batches // 4


def stage_of(root: TNode, key=(), output=None, connex=None) -> GjtStage:
    return GjtStage("gjt", root, key, output, connex, StageDescription("gjt"))


def leaf(port: int, *variables: str) -> TNode:
    return TNode(variables, (), port)


def node(variables: tuple[str, ...], *edges: TEdge) -> TNode:
    return TNode(variables, edges)


# ---- §4's example, tree T2 of Figure 2 -------------------------------------------------------

R, S, T = 0, 1, 2
T2 = node(("y", "w"),
          TEdge(node(("y", "z", "w"), TEdge(leaf(R, "x", "y"), (Bound("x", "<", "z"),)), TEdge(leaf(S, "y", "z", "w")))),
          TEdge(node(("u",), TEdge(leaf(T, "u", "v"))), (Bound("w", "<", "u"),)))
T2_CONNEX = frozenset({(), (0,), (1,)})


def test_section_4_update_gives_the_papers_deltas():
    """Figure 4: inserting s(2,3,6)×2 and t(4,9)×3 makes Δρ_{y,z,w} = [⟨2,3,6⟩ ↦ 4] and
    Δρ_{y,w} = [⟨y:1, w:3⟩ ↦ 36] (ρ_{y,z,w}(1,3,3) = 12, the only tuple with w < 4)."""
    stage = stage_of(T2, output=("y", "z", "w", "u"), connex=T2_CONNEX)
    db = [Change(R, (1, 1), 2), Change(R, (2, 1), 1), Change(R, (2, 2), 2), Change(R, (5, 2), 1),
          Change(S, (1, 3, 3), 4), Change(S, (2, 4, 6), 1), Change(T, (5, 1), 1)]
    state, _ = stage.process((), None, db)
    numbers = {n.variables: n.number for n in stage.plan.nodes}
    reduct = state.reducts
    assert reduct[numbers[("y", "z", "w")]] == {(1, 3, 3): 12, (2, 4, 6): 2}
    assert reduct[numbers[("y", "w")]] == {(1, 3): 12}
    root_before = dict(reduct[numbers[("y", "w")]])
    state, emitted = stage.process((), state, [Change(S, (2, 3, 6), 2), Change(T, (4, 9), 3)])
    assert reduct[numbers[("y", "z", "w")]][(2, 3, 6)] == 4
    assert added(reduct[numbers[("y", "w")]], root_before, -1) == {(1, 3): 36}
    assert dict(emitted) == {(1, 3, 3, 4): 36}


def test_section_4_query_random_streams():
    makers = {R: lambda g: (small(g), small(g, 0, 3)), S: lambda g: (small(g, 0, 3), small(g), small(g)),
              T: lambda g: (small(g), small(g, 0, 2))}
    check_random_stream(stage_of(T2, output=("y", "z", "w", "u"), connex=T2_CONNEX), makers, seed=1)


def test_a_projection_beyond_the_connex_set_is_consolidated():
    """π_{y,u}: the connex set covers y, z, w, u (not free-connex for this output): project, add up."""
    makers = {R: lambda g: (small(g), small(g, 0, 3)), S: lambda g: (small(g, 0, 3), small(g), small(g)),
              T: lambda g: (small(g), small(g, 0, 2))}
    check_random_stream(stage_of(T2, output=("u", "y"), connex=T2_CONNEX), makers, seed=2)


# ---- IEDyn's Table 1 shapes ------------------------------------------------------------------

def rows3(g: random.Random) -> tuple:
    return small(g), small(g, 0, 2), small(g, 0, 1)


Q3 = node(("d", "e"),
          TEdge(leaf(R, "a", "b", "c"), (Bound("a", "<", "d"),)),
          TEdge(node(("d", "e"), TEdge(leaf(S, "d", "e", "f")), TEdge(leaf(T, "g", "h", "i"), (Bound("e", "<", "g"),)))))
Q4 = node(("d",),
          TEdge(leaf(R, "a", "b", "c"), (Bound("a", "<", "d"),)),
          TEdge(node(("d",), TEdge(leaf(S, "d", "e", "f")), TEdge(leaf(T, "g", "h", "i"), (Bound("d", "<", "g"),)))))
ALL9 = ("a", "b", "c", "d", "e", "f", "g", "h", "i")


@pytest.mark.parametrize("tree", [Q3, Q4], ids=["Q3", "Q4"])
def test_full_three_way_inequality_joins(tree):
    check_random_stream(stage_of(tree, output=ALL9), {R: rows3, S: rows3, T: rows3}, seed=3, size=6)


def test_not_free_connex_projection_of_q4():
    """Q10 = π_{b,c,e,f,h,i}(Q4): no connex set covers exactly those, so the full tree is enumerated."""
    output = ("b", "c", "e", "f", "h", "i")
    check_random_stream(stage_of(Q4, output=output), {R: rows3, S: rows3, T: rows3}, seed=4, size=6)


Q5 = node(("d",),
          TEdge(node(("d", "k"), TEdge(leaf(R, "a", "b", "k"), (Bound("a", "<", "d"),)), TEdge(leaf(S, "d", "e", "k")))),
          TEdge(leaf(T, "g", "h", "i"), (Bound("d", "<", "g"),)))


def test_equality_and_inequality_q5_shape():
    makers = {R: lambda g: (small(g), small(g, 0, 2), small(g, 0, 2)), S: lambda g: (small(g), small(g, 0, 2), small(g, 0, 2)),
              T: rows3}
    check_random_stream(stage_of(Q5, output=("a", "b", "k", "d", "e", "g", "h", "i")), makers, seed=5, size=14)


# k in every leaf: the stage is keyed by it. Edge root -> R has a band on a (two bounds, one with
# an offset) and a residual inequality on c.
BAND = node(("k", "d"),
            TEdge(leaf(R, "a", "k", "c"), (Bound("a", "<", "d"), Bound("d", "<=", "a", 3), Bound("c", "<=", "d"))),
            TEdge(node(("k", "d"), TEdge(leaf(S, "d", "k", "f")), TEdge(leaf(T, "g", "k"), (Bound("d", "<", "g", -1),)))))


def test_keyed_band_join_with_offsets_and_a_residual_inequality():
    makers = {R: lambda g: (small(g), small(g, 0, 1), small(g, 0, 5)), S: lambda g: (small(g), small(g, 0, 1), small(g, 0, 1)),
              T: lambda g: (small(g), small(g, 0, 1))}
    stage = stage_of(BAND, key=("k",), output=("k", "a", "c", "d", "f", "g"))
    check_random_stream(stage, makers, seed=6, size=20)


FRAUD = node(("card", "ts2"),
             TEdge(leaf(R, "card", "ts"), (Bound("ts2", "<", "ts"), Bound("ts", "<", "ts2", 3600))),
             TEdge(leaf(S, "card", "ts2")))


def test_fraud_window_ts_lt_ts2_plus_3600():
    makers = {R: lambda g: (g.randint(0, 2), g.randrange(0, 10_000, 500)),
              S: lambda g: (g.randint(0, 2), small(g, 0, 10_000))}
    check_random_stream(stage_of(FRAUD, key=("card",), output=("card", "ts", "ts2")), makers, seed=7, size=10)


# The left child {a} is inside N but its tuples do not carry the root's d: a batch that swaps R(1, 0)
# for R(1, 5) leaves ρ_{a}(1) as it was while the enumeration below it changes.
NESTED = node(("d",),
              TEdge(node(("a",), TEdge(leaf(R, "a", "b")), TEdge(leaf(T, "a", "c"))), (Bound("a", "<", "d"),)),
              TEdge(leaf(S, "d", "e")))


def test_a_reduct_weight_that_stays_while_its_children_change():
    stage = stage_of(NESTED, output=("a", "b", "c", "d", "e"))
    state, _ = stage.process((), None, [Change(R, (1, 0), 1), Change(T, (1, 7), 1), Change(S, (4, 0), 1)])
    state, emitted = stage.process((), state, [Change(R, (1, 0), -1), Change(R, (1, 5), 1)])
    assert dict(emitted) == {(1, 0, 7, 4, 0): -1, (1, 5, 7, 4, 0): 1}
    makers = {R: lambda g: (small(g, 0, 4), small(g)), T: lambda g: (small(g, 0, 4), small(g)),
              S: lambda g: (small(g), small(g, 0, 2))}
    check_random_stream(stage_of(NESTED, output=("a", "b", "c", "d", "e")), makers, seed=11)


# A self-join: both leaves read port 0 (the order-book spread, x.broker = y.broker and y.t < x.t).
SPREAD = node(("b", "t1"), TEdge(leaf(R, "b", "t1", "p1")), TEdge(leaf(R, "b", "t2", "p2"), (Bound("t2", "<", "t1"),)))


def test_self_join_on_one_port():
    stage = stage_of(SPREAD, key=("b",), output=("b", "t1", "p1", "t2", "p2"))
    check_random_stream(stage, {R: lambda g: (g.randint(0, 1), small(g), small(g, 0, 3))}, seed=15)


# Both ends of R's interval come from different variables of the root: x < a < y is empty when x >= y.
BETWEEN = node(("x", "y"), TEdge(leaf(S, "x", "y")), TEdge(leaf(R, "a", "b"), (Bound("x", "<", "a"), Bound("a", "<", "y"))))


@pytest.mark.parametrize("output", [None, ("x", "y", "a", "b")], ids=["reduct", "enumerate"])
def test_an_interval_with_ends_from_two_variables_may_be_empty(output):
    makers = {S: lambda g: (small(g), small(g)), R: lambda g: (small(g), small(g, 0, 1))}
    check_random_stream(stage_of(BETWEEN, output=output), makers, seed=16)


# ---- REDUCT mode -----------------------------------------------------------------------------

def test_reduct_mode_one_child_with_a_filter():
    tree = node(("y",), TEdge(leaf(R, "x", "y"), (Bound("x", "<", "y"),)))
    check_random_stream(stage_of(tree, key=("y",)), {R: lambda g: (small(g), small(g, 0, 5))}, seed=8)


def test_reduct_mode_two_leaves_sum_the_prefix():
    """ρ_root = π_{a,b}(R ⋈ S | a < c): an R delta sums S's prefix, an S delta walks R's rows."""
    tree = node(("a", "b"), TEdge(leaf(R, "a", "b")), TEdge(leaf(S, "b", "c"), (Bound("a", "<", "c"),)))
    makers = {R: lambda g: (small(g), small(g, 0, 2)), S: lambda g: (small(g, 0, 2), small(g))}
    check_random_stream(stage_of(tree), makers, seed=9)


# ---- ring payloads: SUM and COUNT grouped by the root's variables, read off ρ_root ---------------

def grouped_sums(root: TNode, db: dict[int, Counter], group: tuple[str, ...], summed: tuple[str, ...]) -> dict:
    """{group + ((COUNT(*), (SUM(v) for v in summed)),): 1} by recomputation; SUM skips NULLs."""
    totals: dict = {}
    for row, weight in recomputed(root, db, group + summed).items():
        count, sums = totals.get(row[:len(group)], (0, (0,) * len(summed)))
        values = row[len(group):]
        totals[row[:len(group)]] = (count + weight, tuple(s + weight * (v or 0) for s, v in zip(sums, values, strict=True)))
    return {key + (value,): 1 for key, value in totals.items() if value[0]}


def check_ring_stream(stage: GjtStage, makers: dict, summed: tuple[str, ...], seed: int, batches: int = 40) -> None:
    rng = random.Random(seed)
    stream, states, running, nonempty = Stream(rng, makers), {}, {}, 0
    for _ in range(batches):
        running = added(running, run_batch(stage, states, stream.batch(8)))
        expected = grouped_sums(stage.root, stream.db, stage.root.variables, summed)
        assert running == expected
        assert pulled(stage, states) == expected
        nonempty += bool(expected)
    assert nonempty > batches // 2


def test_sum_and_count_grouped_by_the_root_without_enumerating():
    """Q = SUM(v), SUM(x), COUNT(*) of §4's join grouped by (y, w): v lifted at t, x at r."""
    makers = {R: lambda g: (small(g), small(g, 0, 3)), S: lambda g: (small(g, 0, 3), small(g), small(g)),
              T: lambda g: (small(g), small(g, 0, 2))}
    stage = GjtStage("agg", T2, (), None, None, StageDescription("agg"), ring=SumRing(2),
                     lift={T: ((0, 1),), R: ((1, 0),)})
    assert stage.output_columns == ("y", "w", "payload")
    check_ring_stream(stage, makers, ("v", "x"), seed=12)


def test_keyed_ring_stage_pickles_with_its_state():
    makers = {R: lambda g: (g.randint(0, 2), g.randrange(0, 10_000, 500)),
              S: lambda g: (g.randint(0, 2), small(g, 0, 10_000))}
    stage = GjtStage("fraud", FRAUD, ("card",), None, None, StageDescription("fraud"), ring=SumRing(1),
                     lift={R: ((0, 1),)})
    check_ring_stream(stage, makers, ("ts",), seed=13)
    copy = pickle.loads(pickle.dumps(stage))
    rng = random.Random(14)
    stream, states = Stream(rng, makers), {}
    for _ in range(10):
        run_batch(stage, states, stream.batch(10))
    states_copy = pickle.loads(pickle.dumps(states))
    more = stream.batch(10)
    assert run_batch(copy, states_copy, more) == run_batch(stage, states, more)
    assert pulled(copy, states_copy) == pulled(stage, states) == grouped_sums(FRAUD, stream.db, ("card", "ts2"), ("ts",))


def test_a_ring_needs_the_key_among_the_root_variables():
    with pytest.raises(ValueError, match="REDUCT mode"):
        GjtStage("agg", Q4, ("b",), None, None, StageDescription("agg"), ring=SumRing(1), lift={R: ((0, 0),)})


# ---- the stage contract ----------------------------------------------------------------------

def test_revert_restores_the_enumeration_and_states_pickle():
    makers = {R: rows3, S: rows3, T: rows3}
    stage = stage_of(Q3, output=ALL9)
    rng = random.Random(10)
    stream, states = Stream(rng, makers), {}
    for _ in range(20):
        run_batch(stage, states, stream.batch(12))
    before = pulled(stage, states)
    assert before
    (key, state), = states.items()
    joined = next(row for row in stream.db[S] if any(out[3:6] == row for out in before))
    changes = [Change(S, joined, -stream.db[S][joined]), Change(R, (0, 0, 0), 1), Change(T, (9, 1, 1), 2)]
    new_state, emitted = stage.process(key, state, changes)
    assert emitted
    restored = stage.revert(key, state, new_state, changes)
    assert pulled(stage, {key: restored}) == before
    copy = pickle.loads(pickle.dumps(restored))
    assert pulled(stage, {key: copy}) == before
    stage_copy = pickle.loads(pickle.dumps(stage))
    more = stream.batch(8)
    assert dict(stage_copy.process(key, copy, more)[1]) == dict(stage.process(key, restored, more)[1])
    assert pulled(stage_copy, {key: copy}) == pulled(stage, {key: restored})


def test_a_failing_comparison_leaves_the_state_as_it_was():
    stage = stage_of(Q4, output=ALL9)
    state, _ = stage.process((), None, [Change(R, (1, 0, 0), 1), Change(S, (5, 0, 0), 1), Change(T, (7, 0, 0), 1)])
    before = pulled(stage, {(): state})
    assert before
    with pytest.raises(TypeError):
        stage.process((), state, [Change(T, (9, 0, 0), 1), Change(S, ("x", 1, 1), 1)])
    assert pulled(stage, {(): state}) == before


@pytest.mark.parametrize(("root", "connex", "message"), [
    (node(("a",), TEdge(leaf(R, "a")), TEdge(leaf(S, "a")), TEdge(leaf(T, "a"))), None, "must be binary"),
    (node(("a", "b"), TEdge(leaf(R, "a")), TEdge(leaf(S, "b"))), None, "covered by none of its children"),
    (node(("a",), TEdge(leaf(R, "a", "b")), TEdge(leaf(S, "a", "c"), (Bound("b", "<", "c"),))), None,
     "must be < or <= over their variables"),
    (T2, frozenset({(), (0,)}), "not sibling-closed"),
    (T2, frozenset({(), (0, 0)}), "not a connected set"),
], ids=["ternary", "uncovered", "predicate", "sibling", "connected"])
def test_a_tree_the_algorithms_cannot_run_is_refused(root, connex, message):
    with pytest.raises(ValueError, match=message):
        GjtStage("bad", root, (), ("a",) if connex is None else ("y",), connex, StageDescription("bad"))
