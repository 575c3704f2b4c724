"""The triangle count ``Q() = Σ_{A,B,C} R(A,B)·S(B,C)·T(C,A)`` with heavy/light partitioning
(IVM^ε: Kara, Ngo, Nikolic, Olteanu, Zhang, ICDT'19 / TODS'20; Olteanu PODS'24 §3.3).

Q is cyclic, so no view tree gives O(1) updates; the survey (§3.3) shows delta queries alone cost
O(N) per update, and materializing ``V_ST(B,A) = Σ_C S(B,C)·T(C,A)`` costs O(N) for updates to S
or T. IVM^ε partitions each relation on its first variable (R on A, S on B, T on C) into a light
part (the key's degree < ~N^ε) and a heavy part (at most ~N^{1−ε} heavy keys), and materializes one
view per relation pair, a heavy part joined with the next relation's light part:

    V_RS(A,C) = Σ_B R_H(A,B)·S_L(B,C),  V_ST(B,A) = Σ_C S_H(B,C)·T_L(C,A),  V_TR(C,B) = Σ_A T_H(C,A)·R_L(A,B).

A single-tuple update δR(α,β) = m (S and T alike, the query is symmetric under R→S→T→R) adds
``m·Σ_C S(β,C)·T(C,α)`` to Q, computed by the partition of β in S:
- β light in S: iterate S(β,·), fewer than ~N^ε tuples, each a lookup in T: O(N^ε);
- β heavy in S: ``V_ST(β,α)`` gives the S_H·T_L part in O(1), and the S_H·T_H part iterates the
  heavy C-values paired with α in T_H (an index of T_H by A), at most ~N^{1−ε}: O(N^{1−ε}).
It maintains the views R takes part in: V_RS when α is heavy in R (iterate S_L(β,·): O(N^ε)) and
V_TR when α is light in R (iterate T_H(·,α): O(N^{1−ε})).

Rebalancing keeps the partition valid (Kara et al. §4): with N the number of tuples of R, S and T
and the threshold θ = M^ε, the invariant ``M/4 ≤ N < M`` is restored by a *major* rebalancing
(M doubles when N reaches M, halves when N drops below M/4; then every key is re-partitioned at
θ, degree ≥ θ being heavy, and the views rebuilt), and a *minor* rebalancing moves one key when
its degree leaves the band: a light key reaching 3θ/2 becomes heavy, a heavy key dropping below
θ/2 becomes light (its tuples are taken out of the views and put back under the new part). So
light keys have degree < 3θ/2 = O(N^ε) and there are at most 2N/θ = O(N^{1−ε}) heavy keys.

Bound: O(N^{max(ε, 1−ε)}) amortized time per single-tuple update, O(N^{1/2}) at ε = ½ (the survey's
optimum, matching the OuMv lower bound up to the amortization); O(N^{1+min(ε,1-ε)}) space for the views, at most
O(N^{3/2}) at ε = ½. Amortization: a minor rebalancing of a key moves O(N^ε) tuples, each
O(N^{max(ε,1−ε)}), and happens only after Ω(N^ε) updates to that key; a major one re-inserts all N
tuples, O(N^{1+max(ε,1−ε)}), after Ω(M) = Ω(N) updates. Dict operations are expected O(1).

``epsilon=1`` makes every key light (θ = M > N): the stage is then plain first-order delta
queries, O(N) per update, the survey's §3.1 baseline; the benchmark compares the two.

Ports: 0 = R(A,B), 1 = S(B,C), 2 = T(C,A), rows of two columns, multiset weights. One stage keyed
by a constant (the count is global), emitting the count as −old/+new like the other global
aggregates, the count 0 included: it is the row COUNT shows over empty input, the stage's start
output.
"""

from __future__ import annotations

from operators.stages.base import Change, ConstantKey, KeyedStage, StageDescription
from operators.zset import Changelog, Row

RELATIONS = ("R(A,B)", "S(B,C)", "T(C,A)")


class PartitionedRelation:
    """One relation's tuples, grouped by its first column, with the set of heavy first-column
    values and the heavy part indexed by the second column (what the previous relation probes)."""

    def __init__(self) -> None:
        self.rows: dict[Row, int] = {}
        self.by_first: dict[object, dict[object, int]] = {}
        self.heavy: set = set()
        self.heavy_by_second: dict[object, dict[object, int]] = {}

    def degree(self, first) -> int:
        return len(self.by_first.get(first, ()))

    def add(self, first, second, weight: int) -> None:
        _add_nested(self.by_first, first, second, weight)
        _add_flat(self.rows, (first, second), weight)
        if first in self.heavy:
            _add_nested(self.heavy_by_second, second, first, weight)


class TriangleState:
    """The three partitioned relations, the three views (``views[i]`` joins relation i's heavy part
    with relation i+1's light part, keyed by (i's first variable, (i+1)'s second variable)), the
    count, and M of the invariant M/4 ≤ N < M."""

    def __init__(self) -> None:
        self.relations = [PartitionedRelation() for _ in RELATIONS]
        self.views: list[dict[Row, int]] = [{}, {}, {}]
        self.count = 0
        self.size = 0  # N: tuples (distinct rows) in R, S and T
        self.capacity = 1  # M


class TriangleCountStage(ConstantKey, KeyedStage):
    """IVM^ε for the triangle count (module docstring); state: ``TriangleState``."""

    def __init__(self, name: str, epsilon: float = 0.5):
        if not 0 <= epsilon <= 1:
            raise ValueError(f"{name}: epsilon must be in [0, 1], got {epsilon}")
        self.name, self.epsilon = name, epsilon
        self.output_columns = ("count",)

    def start_output(self) -> Changelog:
        return [((0,), 1)]

    def process(self, key: tuple, state: TriangleState | None,
                changes: list[Change]) -> tuple[TriangleState, Changelog]:
        net: dict[tuple[int, Row], int] = {}
        for port, row, weight in changes:  # checked before anything changes: process is atomic
            if port not in (0, 1, 2) or len(row) != 2:
                raise ValueError(f"{self.name}: change {row!r} on port {port}: expected a two-column "
                                 f"row of {', '.join(RELATIONS)} (ports 0, 1, 2)")
            net[port, row] = net.get((port, row), 0) + weight
        state = state or TriangleState()
        before = state.count
        # deletes first, so the degrees in between stay those of a valid database (only the cost
        # depends on it: any partition gives the right count)
        for (port, (first, second)), weight in sorted(net.items(), key=lambda item: item[1] > 0):
            if weight:
                self._update(state, port, first, second, weight)
        # −old/+new, 0 included: the count 0 is the row a global COUNT shows over empty input
        out: Changelog = [((before,), -1), ((state.count,), 1)] if state.count != before else []
        return state, out

    def describe(self) -> StageDescription:
        return StageDescription(
            operator=f"TriangleCount[IVM^ε, ε={self.epsilon:g}]",
            inputs=", ".join(RELATIONS),
            state="R, S, T partitioned heavy/light on A, B, C; views V_RS(A,C), V_ST(B,A), V_TR(C,B)",
            key="constant (does not scale out): one global count",
            update_cost=f"O(N^{max(self.epsilon, 1 - self.epsilon):g}) amortized per single-tuple update",
            why="Olteanu §3.3 / Kara et al.: the triangle is cyclic (no O(1) view tree); heavy/light "
                "partitioning balances the delta query against the views")

    # --- maintenance ----------------------------------------------------------------------------

    def threshold(self, state: TriangleState) -> float:
        """θ = M^ε; with ε = 1 it exceeds every degree (N < M), so every key stays light."""
        return state.capacity ** self.epsilon

    def _update(self, state: TriangleState, port: int, first, second, weight: int) -> None:
        relations = state.relations
        state.count += weight * self._paths(state, port, first, second)
        had = (first, second) in relations[port].rows
        self._move(state, port, first, second, weight)
        state.size += ((first, second) in relations[port].rows) - had
        if not self._major_rebalance(state):
            self._minor_rebalance(state, port, first)

    def _paths(self, state: TriangleState, port: int, first, second) -> int:
        """Σ_z next(second, z)·previous(z, first): the triangles through one tuple of relation ``port``."""
        relations = state.relations
        nxt, prv = relations[(port + 1) % 3], relations[(port + 2) % 3]
        if second not in nxt.heavy:  # light: fewer than 3θ/2 partners
            prv_rows = prv.rows
            return sum(count * prv_rows.get((z, first), 0) for z, count in nxt.by_first.get(second, {}).items())
        # heavy: next_H·previous_L from the view, next_H·previous_H over the heavy z paired with ``first``
        nxt_rows = nxt.rows
        total = state.views[(port + 1) % 3].get((second, first), 0)
        return total + sum(nxt_rows.get((second, z), 0) * count
                           for z, count in prv.heavy_by_second.get(first, {}).items())

    def _move(self, state: TriangleState, port: int, first, second, weight: int) -> None:
        """Add ``weight`` copies of (first, second) to relation ``port`` and to the two views it is
        part of, under the current partition (the count is the caller's business)."""
        relations = state.relations
        relation, nxt, prv = relations[port], relations[(port + 1) % 3], relations[(port + 2) % 3]
        if first in relation.heavy:
            if second not in nxt.heavy:  # V_port(first, z) += R_H(first, second)·next_L(second, z)
                view = state.views[port]
                for z, count in nxt.by_first.get(second, {}).items():
                    _add_flat(view, (first, z), weight * count)
        else:  # V_prev(z, second) += prev_H(z, first)·R_L(first, second)
            view = state.views[(port + 2) % 3]
            for z, count in prv.heavy_by_second.get(first, {}).items():
                _add_flat(view, (z, second), count * weight)
        relation.add(first, second, weight)

    def _repartition_key(self, state: TriangleState, port: int, first, heavy: bool) -> None:
        """Move the tuples of key ``first`` of relation ``port`` to the other part: out of the views
        under the old part, back in under the new one."""
        relation = state.relations[port]
        tuples = list(relation.by_first.get(first, {}).items())
        for second, count in tuples:
            self._move(state, port, first, second, -count)
        (relation.heavy.add if heavy else relation.heavy.discard)(first)
        for second, count in tuples:
            self._move(state, port, first, second, count)

    def _minor_rebalance(self, state: TriangleState, port: int, first) -> None:
        relation, theta = state.relations[port], self.threshold(state)
        degree = relation.degree(first)
        if first in relation.heavy and degree < theta / 2:
            self._repartition_key(state, port, first, heavy=False)
        elif first not in relation.heavy and degree >= 1.5 * theta:
            self._repartition_key(state, port, first, heavy=True)

    def _major_rebalance(self, state: TriangleState) -> bool:
        """Restore M/4 ≤ N < M (doubling or halving M); then re-partition every key at θ = M^ε and
        rebuild the views. True when it ran."""
        capacity = state.capacity
        while state.size >= capacity:
            capacity *= 2
        while capacity > 1 and state.size < capacity // 4:
            capacity //= 2
        if capacity == state.capacity:
            return False
        state.capacity = capacity
        theta = self.threshold(state)
        everything = [(port, row, count) for port, relation in enumerate(state.relations)
                      for row, count in relation.rows.items()]
        count, size = state.count, state.size
        fresh = TriangleState()
        fresh.count, fresh.size, fresh.capacity = count, size, capacity
        for port, relation in enumerate(state.relations):
            fresh.relations[port].heavy = {first for first, group in relation.by_first.items() if len(group) >= theta}
        for port, (first, second), weight in everything:
            self._move(fresh, port, first, second, weight)
        state.__dict__.update(fresh.__dict__)
        return True


def _add_flat(target: dict, key, weight: int) -> None:
    total = target.get(key, 0) + weight
    if total:
        target[key] = total
    else:
        del target[key]


def _add_nested(target: dict, outer, inner, weight: int) -> None:
    group = target.get(outer)
    if group is None:
        group = target[outer] = {}
    _add_flat(group, inner, weight)
    if not group:
        del target[outer]
