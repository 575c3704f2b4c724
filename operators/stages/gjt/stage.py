"""The GJT stage: a T-representation per key, updated by Algorithm 2, enumerated by Algorithm 1 or
delta-enumerated per batch (the package docstring gives the algorithms and their bounds)."""

from __future__ import annotations

import gc
from collections import Counter
from collections.abc import Callable, Iterator, Mapping

from operators.stages.base import Change, KeyedStage, StageDescription
from operators.stages.gjt.enumeration import DeltaEnumeration
from operators.stages.gjt.plan import GjtPlan, PlanNode
from operators.stages.gjt.probes import all_hold
from operators.stages.gjt.tree import TNode
from operators.structures.ring_weight import RingWeight, payload
from operators.structures.rings import Ring
from operators.structures.sorted_groups import SortedGroups
from operators.zset import Changelog, Row


class GjtState:
    """One key's T-representation: ρ_n per node (``reducts``, by node number) and the indexes.

    The stage reads a state through these two lists only (a reduct as a dict, an index as a
    ``SortedGroups``), so a state of the same shape kept elsewhere runs the same algorithms: the Spark
    runner's ``gjt_pages.PagedGjtState`` holds them in pages of its state store."""

    __slots__ = ("reducts", "indexes")

    def __init__(self, nodes: int, indexes: int) -> None:
        self.reducts: list[dict[Row, int]] = [{} for _ in range(nodes)]
        self.indexes: list[SortedGroups] = [SortedGroups() for _ in range(indexes)]

    def __getstate__(self):
        return self.reducts, self.indexes

    def __setstate__(self, data) -> None:
        self.reducts, self.indexes = data



class GjtStage(KeyedStage):
    """A binary GJT ``root`` over leaves on ports, maintained with IEDyn (module docstring).

    ``key``: variables in every leaf, the partition key. ``output`` None: REDUCT mode, emitting
    Δρ_root; otherwise ENUMERATE mode over the sibling-closed connex set ``connex`` (paths of child
    indexes from the root; None means every node), emitting Δπ_output(Q). ``ring`` and ``lift``
    (optional, REDUCT mode): SUM/COUNT per root tuple as ring payloads (module docstring).
    ``push`` False (ENUMERATE mode): IEDyn's pull-based mode, the T-representation is kept up to date
    and nothing is delta-enumerated, so a batch costs Algorithm 2 alone; the result is read with
    ``enumerate``.
    """

    def __init__(self, name: str, root: TNode, key: tuple[str, ...], output: tuple[str, ...] | None,
                 connex: frozenset[tuple[int, ...]] | None, description: StageDescription, *,
                 ring: Ring | None = None, lift: Mapping[int, tuple[tuple, ...]] | None = None,
                 push: bool = True):
        self.name, self.root, self.key, self.output, self.connex = name, root, key, output, connex
        self.push = push
        self.description = description
        self.ring, self.lift = ring, dict(lift or {})
        if ring is not None and (output is not None or not set(key) <= set(root.variables)):
            raise ValueError(f"{name}: ring payloads need REDUCT mode (no output) and the key among the "
                             f"root's variables {root.variables}, so each group's payload lives under one key")
        if self.lift and ring is None:
            raise ValueError(f"{name}: lift without a ring")
        self.plan = GjtPlan(name, root, key, output, connex)
        self.output_columns = output if output is not None else root.variables + (("payload",) if ring else ())

    def __reduce__(self):
        """Pickled as its constructor's arguments: the compiled closures are rebuilt (Spark runner)."""
        return _rebuild, ((self.name, self.root, self.key, self.output, self.connex, self.description),
                          {"ring": self.ring, "lift": self.lift, "push": self.push})

    def without_changes(self) -> GjtStage:
        """This stage in pull-based mode (``push`` False): same state layout, no result changes."""
        return _rebuild((self.name, self.root, self.key, self.output, self.connex, self.description),
                        {"ring": self.ring, "lift": self.lift, "push": False})

    # ---- the keyed-stage contract ------------------------------------------------------------

    @property
    def state_shape(self) -> tuple[int, int]:
        """(reducts, indexes) a key's state holds: one reduct per node, one index per distinct spec."""
        return len(self.plan.nodes), len(self.plan.specs)

    def key_function(self, port: int) -> Callable[[Row], tuple]:
        return self.plan.key_functions[port]

    def key_of(self, port: int, row: Row) -> tuple:
        return self.plan.key_functions[port](row)

    def describe(self) -> StageDescription:
        return self.description

    def process(self, key: tuple, state: GjtState | None, changes: list[Change]) -> tuple[GjtState | None, Changelog]:
        if state is None:
            state = GjtState(*self.state_shape)
        pending: list[dict[Row, int]] = [{} for _ in self.plan.nodes]
        lift = self.lift
        for change in changes:
            weight = change.weight
            if change.port in lift:
                weight = self._lifted(change.port, change.row) * weight
            for leaf in self.plan.leaves[change.port]:
                delta = pending[leaf.number]
                delta[change.row] = delta.get(change.row, 0) + weight
        applied: list[tuple[PlanNode, Row, int]] = []
        try:
            deltas = self._update(state, pending, applied)
            if self.ring is not None:
                out = self._group_changes(state, deltas[-1])
            elif self.output is None:
                out = list(deltas[-1].items())
            elif self.push:
                out = self._delta_enumerate(state, pending, deltas)
            else:
                out = []
        except BaseException:
            for node, row, weight in reversed(applied):
                self._apply_row(state, node, row, -weight)
            raise
        if not any(state.reducts):
            return None, out
        return state, out

    # ---- ring payloads ---------------------------------------------------------------------

    def _lifted(self, port: int, row: Row) -> RingWeight:
        """The payload of one row on a lifted port: ``one`` times ``lift(slot, value)`` per summed
        column (a NULL adds nothing, as SQL's SUM skips it; a SUM over NULLs only reads 0, not NULL).
        A lift's position may be a function of the row (a per-row expression); ``(slot, position,
        True)`` lifts 1 for a non-NULL value: that slot counts the join tuples where the value is not
        NULL, which SUM's NULL and AVG's divisor need."""
        ring = self.ring
        value = ring.one
        for slot, position, *indicator in self.lift[port]:
            lifted = position(row) if callable(position) else row[position]
            if lifted is not None:
                value = ring.mul_lift(value, slot, 1 if indicator and indicator[0] else lifted)
        return RingWeight(ring, value)

    def _group_changes(self, state: GjtState, delta: dict[Row, object]) -> Changelog:
        """Δρ_root as group rows ``root tuple + (payload,)``: the old row out, the new row in."""
        ring, root = self.ring, state.reducts[-1]
        out: Changelog = []
        for row, change in delta.items():
            new = root.get(row, 0)
            old = new - change
            if old:
                out.append((row + (payload(ring, old),), -1))
            if new:
                out.append((row + (payload(ring, new),), 1))
        return out

    # ---- Algorithm 2 -------------------------------------------------------------------------

    def _apply_row(self, state: GjtState, node: PlanNode, row: Row, weight: int) -> None:
        """ρ_n[row] += weight, and in every index on n that admits the row; all or nothing."""
        done = 0
        try:
            for spec, number in zip(node.indexes, node.index_numbers, strict=True):
                spec.file(state.indexes[number], row, weight)
                done += 1
        except BaseException:
            for spec, number in list(zip(node.indexes, node.index_numbers, strict=True))[:done]:
                spec.file(state.indexes[number], row, -weight)
            raise
        reduct = state.reducts[node.number]
        count = reduct.get(row, 0) + weight
        if count:
            reduct[row] = count
        else:
            del reduct[row]

    def _update(self, state: GjtState, pending: list[dict[Row, int]],
                applied: list[tuple[PlanNode, Row, int]]) -> list[dict[Row, int]]:
        """Algorithm 2 over the batch; returns Δρ_n per node (consolidated)."""
        deltas: list[dict[Row, int]] = []
        indexes = state.indexes
        for node in self.plan.nodes:  # post-order: bottom-up, first child's subtree first
            delta = {row: weight for row, weight in pending[node.number].items() if weight}
            deltas.append(delta)
            for row, weight in delta.items():
                self._apply_row(state, node, row, weight)
                applied.append((node, row, weight))
            parent = node.parent
            if parent is None or not delta:
                continue
            target = pending[parent.number]
            to_parent = node.to_parent
            probe = node.sibling_probe
            if probe is None:  # one child: Δ_p = π_var(p) σ_pred(p→n) Δ_n
                checks = node.up_checks
                for row, weight in delta.items():
                    if not checks or all_hold(checks, row):
                        projected = to_parent(row)
                        target[projected] = target.get(projected, 0) + weight
            elif to_parent is not None:  # var(p) ⊆ var(n): one prefix-sum query per delta row
                for row, weight in delta.items():
                    total = probe.total(indexes, row)
                    if total:
                        projected = to_parent(row)
                        target[projected] = target.get(projected, 0) + weight * total
            else:  # the parent's variables come from the sibling: walk its compatible rows
                from_sibling = node.sibling.to_parent
                for other, weight in probe.joined(indexes, delta):
                    projected = from_sibling(other)
                    target[projected] = target.get(projected, 0) + weight
        return deltas

    # ---- Algorithm 1 and delta enumeration ---------------------------------------------------

    def _expand(self, indexes: list[SortedGroups], node: PlanNode, row: Row, weight) -> Iterator[tuple[Row, object]]:
        """E(node, row) over the current state: Algorithm 1 below one tuple of N. A binary node
        pairs everything its first child's side enumerates with everything its second's (Lines
        8-12 in another nesting order: the same pairs, each side walked with constant delay)."""
        if node.frontier:
            return iter(((row, weight),))
        if len(node.sides) == 1:
            return self._side(indexes, node.sides[0], row)
        return self._pairs(indexes, node, row)

    def _pairs(self, indexes: list[SortedGroups], node: PlanNode, row: Row) -> Iterator[tuple[Row, object]]:
        first, second = node.sides
        combine = node.combine
        for a, a_weight in self._side(indexes, first, row):
            for b, b_weight in self._side(indexes, second, row):
                yield combine(a, b), a_weight * b_weight

    def _side(self, indexes: list[SortedGroups], child: PlanNode, row: Row) -> Iterator[tuple[Row, object]]:
        """A' of the module docstring: everything the child enumerates below ``row``'s compatible
        tuples (a frontier child: those tuples themselves, straight from P_child)."""
        rows = child.parent_probe.rows(indexes, row)
        if child.frontier:
            return rows
        return (pair for other, weight in rows for pair in self._expand(indexes, child, other, weight))

    def enumerate(self, key: tuple, state: GjtState) -> Iterator[tuple[Row, int]]:
        """π_output(Q) for one key's state (pull mode): Algorithm 1 from every tuple of ρ_root; with a
        ring, the groups of ρ_root with their payloads (the aggregate, read without the join)."""
        if self.ring is not None:
            ring = self.ring
            return ((row + (payload(ring, weight),), 1) for row, weight in state.reducts[-1].items())
        if self.output is None:
            raise TypeError(f"{self.name}: a REDUCT-mode stage has no output to enumerate")
        root, project, indexes = self.plan.nodes[-1], self.plan.project, state.indexes
        rows = (
            (project(row), weight)
            for top, top_weight in state.reducts[root.number].items()
            for row, weight in self._expand(indexes, root, top, top_weight)
        )
        if not self.plan.projects:
            return rows
        totals: Counter = Counter()
        for row, weight in rows:
            totals[row] += weight
        return ((row, weight) for row, weight in totals.items() if weight)

    def _touched(self, state: GjtState, pending: list[dict[Row, int]],
                 deltas: list[dict[Row, int]]) -> tuple[list[SortedGroups | None], set[Row]]:
        """Per node of N below the root, its touched tuples filed like P_n (so a parent tuple finds
        its compatible ones as it finds its rows, IEDyn §6 indexes the deltas like ρ); and the
        root's touched tuples.

        A parent's touched tuples: its children's touched tuples projected, where var(parent) ⊆
        var(child), and otherwise the sibling rows each touched child tuple joins, projected. For
        the child's Δρ support those are the keys Algorithm 2 already reached (``pending``, kept
        with the weights that summed to zero; it joined the sibling's old or new rows, and a row
        in one only is the sibling's own touched tuple, projected anyway), so only touched tuples
        outside the support walk the sibling again.
        """
        touched_sets: list[set[Row] | None] = [None] * len(self.plan.nodes)
        indexes = state.indexes
        for node in self.plan.nodes:
            if not self.plan.in_connex[node.number]:
                continue
            if node.frontier:
                touched_sets[node.number] = set(deltas[node.number])
                continue
            touched = set(pending[node.number])
            for child in node.children:
                below = touched_sets[child.number]
                if child.to_parent is not None:
                    touched.update(map(child.to_parent, below))
                    continue
                support = deltas[child.number]
                outside = {row: 0 for row in below if row not in support}
                if outside:
                    touched.update(map(child.sibling.to_parent,
                                       (other for other, _ in child.sibling_probe.joined(indexes, outside))))
            touched_sets[node.number] = touched
        filed: list[SortedGroups | None] = [None] * len(self.plan.nodes)
        for node in self.plan.nodes:
            if node.parent_probe is None:
                continue
            index = filed[node.number] = SortedGroups()
            spec = node.parent_probe.spec
            for row in touched_sets[node.number]:
                spec.file(index, row, 1)
        return filed, touched_sets[-1]

    def _delta_enumerate(self, state: GjtState, pending: list[dict[Row, int]],
                         deltas: list[dict[Row, int]]) -> Changelog:
        """ΔQ of the batch: ΔE(root, t) summed over the root's touched tuples, projected.

        The cyclic collector is paused meanwhile: what is built (tuples, lists of them, dicts of
        lists; ``DeltaEnumeration``) holds no cycle, and with millions of such objects alive its
        full passes rescanned them all again and again (a third of Q3's push run at 720 inserts).
        """
        collecting = gc.isenabled()
        gc.disable()
        try:
            touched, touched_root = self._touched(state, pending, deltas)
            batch = DeltaEnumeration(state.indexes, touched, deltas)
            root, project = self.plan.nodes[-1], self.plan.project
            out: Changelog = []
            for top in touched_root:  # distinct root tuples, distinct rows (``DeltaEnumeration``)
                if root.frontier:
                    weight = deltas[root.number].get(top)
                    if weight:
                        out.append((project(top), weight))
                elif self.plan.reorders:
                    out += [(project(row), weight) for row, weight in batch.delta(root, top)]
                else:
                    out += batch.delta(root, top)
            if not self.plan.projects:
                return out
            totals: dict[Row, object] = {}
            get = totals.get
            for row, weight in out:
                totals[row] = get(row, 0) + weight
            return [(row, weight) for row, weight in totals.items() if weight]
        finally:
            if collecting:
                gc.enable()



def _rebuild(arguments: tuple, options: dict) -> GjtStage:
    return GjtStage(*arguments, **options)
