"""F-IVM view-tree maintenance over a variable order, with ring payloads (Olteanu PODS'24 §4.1).

The view tree (``operators.structures.variable_order``) keeps one view per variable; an update to
one atom changes only the views on the path from the atom's variable to the root. For each view on
that path, the delta of the part below is joined with the view's other parts (lookups when the
delta binds all their variables, index probes otherwise), multiplied by the variable's lift, and
summed over the variable: the delta rules δ(V1·V2) = δV1·V2 and δ(Σ_X V) = Σ_X δV of §3.1 applied
one part at a time. Propagation is eager by default (views are current after every batch) or lazy
(net changes wait in the state until a read; see ``ViewTreeStage``).

Bounds. The survey (Thm 4.1, [4]; Thm 4.11 for Σ-reducts) gives, for a q-hierarchical query, O(N)
preprocessing, O(1) time per single-tuple update and O(1) enumeration delay. Here, when every plan
on an atom's path is lookups only (``update_bounds`` says so per atom; true for the canonical order
of a q-hierarchical query), a single-tuple update costs O(depth) expected hash operations and ring
operations, so O(1) in data complexity; it differs from the survey in that dict operations are
expected rather than worst-case O(1), a ring operation costs the payload size (O(m²) for the
degree-m cofactor ring), and a batch is applied atom by atom, O(|δ|·depth). An order that is not
q-hierarchical still works, with probes whose cost is the number of matches (stated per atom).
Preprocessing is the same path over the initial rows, O(N). Enumeration delay is O(#free
variables) lookups; CPython sets do not shrink on delete, so iterating a group that was once much
larger costs its old capacity (amortized against the inserts that grew it).

Output. The query result stays factorized over the views (Ex. 4.4): ``enumerate(state)`` lists
(free values, payload) with constant delay and nothing materialized. The stage's changelog carries
one row ``(total,)``, the query aggregated over every variable (COUNT, the SUM payload, the
cofactor payload of a regression), emitted as −old/+new and absent when zero (a lazy stage emits
nothing: it is read on request, as the survey's lazy-fact). Emitting the flat
delta of a result with free variables would cost |δQ| per update, O(N) in Ex. 4.4; a GROUP BY query
uses ``GroupedViewTreeStage`` (``view_tree_groups.py``), which emits the changed groups' payloads.

One stage keyed by a constant holds the whole tree, so it does not scale out; SQL aggregates are
lowered to per-view keyed stages instead (``view_stages.py``, issue 12 item 7), built on this class.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from operators.stages.base import Change, ConstantKey, KeyedStage, StageDescription
from operators.structures.ring_relation import RingRelation
from operators.structures.rings import Ring
from operators.structures.variable_order import DeltaPlan, Step, VariableOrder, build_layout
from operators.zset import Changelog, Row

#: A free variable left open in an ``enumerate`` pattern.
ANY = object()


class StaticRelationUpdate(ValueError):
    """A change arrived for an atom declared static (§4.5): it has no update path."""


class ViewTreeState:
    """The relations of a view tree (atoms, views, expanded views, numbered as in
    ``ViewTreeLayout``) and, under lazy propagation, the net atom changes not yet propagated."""

    __slots__ = ("relations", "pending")

    def __init__(self, relations: list[RingRelation]):
        self.relations = relations
        self.pending: dict[int, dict[Row, int]] = {}

    def __getstate__(self):
        return self.relations, self.pending

    def __setstate__(self, state):
        self.relations, self.pending = state


class ViewTreeStage(ConstantKey, KeyedStage):
    """One stage holding a whole view tree (state: ``ViewTreeState``).

    ``lazy`` (the survey's lazy-fact, Fig. 4): a batch only adds its net changes to ``pending`` and
    emits nothing; ``refresh`` (called by ``total`` and ``enumerate``) propagates them, so changes
    that cancel before a read never reach the views. A value that cannot be lifted then fails at the
    read, not at the batch (the read leaves the views and ``pending`` as they were).
    """

    def __init__(self, name: str, order: VariableOrder, ring: Ring,
                 initial: Mapping[str, Iterable[Row]] | None = None, lazy: bool = False):
        self.name, self.order, self.ring, self.lazy = name, order, ring, lazy
        self.layout = build_layout(order)
        self.output_columns = ("payload",)
        ports = {atom.name: port for port, atom in enumerate(order.atoms)}
        self.initial = {ports[name]: tuple(rows) for name, rows in (initial or {}).items()}
        self.widths = tuple(len(atom.variables) for atom in order.atoms)
        self.static = frozenset(port for port, atom in enumerate(order.atoms) if atom.static)
        self._enumeration, self._output_positions = self._enumeration_plan()

    # --- KeyedStage -------------------------------------------------------------------------

    def process(self, key: tuple, state: ViewTreeState | None,
                changes: list[Change]) -> tuple[ViewTreeState, Changelog]:
        deltas = self._consolidate(changes, state is None)  # raises before anything changes
        if state is None:
            state = self._initial_state()
        if self.lazy:
            _merge(state.pending, deltas)
            return state, []
        before = self.total(state)
        self._propagate_all(state.relations, deltas)
        after = self.total(state)
        is_zero = self.ring.is_zero
        out: Changelog = []
        if before != after:
            if not is_zero(before):
                out.append(((before,), -1))
            if not is_zero(after):
                out.append(((after,), 1))
        return state, out  # kept even when empty: a new state would load ``initial`` again

    def describe(self) -> StageDescription:
        atoms = ", ".join(f"{a.name}({', '.join(a.variables)}){' static' if a.static else ''}"
                          for a in self.order.atoms)
        bounds = "; ".join(f"{name}: {bound}" for name, bound in self.update_bounds().items())
        return StageDescription(
            operator=f"ViewTree[{self.ring!r}] (F-IVM, {'lazy' if self.lazy else 'eager'}, factorized output)",
            inputs=atoms,
            state="views " + ", ".join(f"V_{n.variable}({', '.join(n.dep)})" for n in reversed(self.layout.nodes))
                  + f"; expanded V'_X for free {', '.join(self.order.free) or 'none'}; the atoms",
            key="constant (does not scale out): one stage holds the whole view tree",
            update_cost=bounds or "no dynamic atoms",
            why="Olteanu §4.1: a delta travels its atom's path to the root; q-hierarchical orders look "
                "up one entry per sibling view (Thm 4.1)")

    # --- reading the views --------------------------------------------------------------------

    def update_bounds(self) -> dict[str, str]:
        """Per dynamic atom, the cost of a single-tuple update: O(1) unless a plan on its path must
        enumerate variables the delta does not bind (then: proportional to their matches)."""
        bounds = {}
        for port, atom in enumerate(self.order.atoms):
            if atom.static:
                continue
            fan_out = [f"{', '.join(plan.enumerated)} at V_{self.layout.nodes[plan.node].variable}"
                       for plan in self.layout.paths[port] if plan.enumerated]
            bounds[atom.name] = "O(1)" if not fan_out else "O(matches of " + "; ".join(fan_out) + ")"
        return bounds

    def refresh(self, state: ViewTreeState) -> None:
        """Propagate the pending changes of lazy propagation (nothing to do when eager)."""
        if state.pending:
            self._propagate_all(state.relations, state.pending)
            state.pending = {}

    def total(self, state: ViewTreeState) -> Any:
        """The query aggregated over all its variables: the product of the root views."""
        self.refresh(state)
        ring = self.ring
        result = ring.one
        for root in self.layout.roots:
            result = ring.mul(result, state.relations[self.layout.nodes[root].view].entries.get((), ring.zero))
        return result

    def enumerate(self, state: ViewTreeState | None, pattern: tuple | None = None) -> Iterator[tuple[Row, Any]]:
        """The result as (values of ``order.free``, payload), with constant delay (Ex. 4.4).

        Free variables are visited parents first; each value comes from the expanded view of its
        variable grouped by its ancestors, where an entry is non-zero only if every part below it
        is non-empty, so no branch dead-ends. Bound roots contribute one constant factor.
        ``pattern`` (one entry per free variable in that visiting order, ``free_variables_visited``)
        restricts the result to the groups with the given values; ``ANY`` leaves a variable open.
        """
        if state is None:
            return
        self.refresh(state)
        ring = self.ring
        constant = ring.one
        for root in self.layout.roots:
            node = self.layout.nodes[root]
            if not node.free:
                constant = ring.mul(constant, state.relations[node.view].entries.get((), ring.zero))
        if ring.is_zero(constant):
            return
        if not self._enumeration:
            yield (), constant
            return
        yield from self._enumerate_from(state.relations, 0, (), constant, pattern)

    @property
    def free_variables_visited(self) -> tuple[str, ...]:
        """The free variables in the order ``enumerate`` visits them (parents first)."""
        return tuple(self.layout.nodes[i].variable for i in self.layout.free_preorder)

    # --- maintenance --------------------------------------------------------------------------

    def _consolidate(self, changes: list[Change], first: bool = False) -> dict[int, dict[Row, int]]:
        """Per port, the batch's rows with their summed non-zero weights; checks arity and §4.5: a
        static atom's rows come from ``initial`` or, when there is none, from the ``first`` batch (a
        maintained view's initial load; its ``Validator`` refuses static changes after that)."""
        deltas: dict[int, dict[Row, int]] = {}
        loading = first and not self.initial
        for port, row, weight in changes:
            if port in self.static and not loading:
                raise StaticRelationUpdate(
                    f"{self.name}: {self.order.atoms[port].name} is static (§4.5) and has no update "
                    f"path; rejected change {row!r} (weight {weight})")
            if len(row) != self.widths[port]:
                raise ValueError(f"{self.name}: row {row!r} of {self.order.atoms[port].name} has "
                                 f"{len(row)} columns, expected {self.widths[port]}")
            rows = deltas.setdefault(port, {})
            rows[row] = rows.get(row, 0) + weight
        return {port: nonzero for port, rows in deltas.items() if (nonzero := {r: w for r, w in rows.items() if w})}

    def _initial_state(self) -> ViewTreeState:
        relations = [RingRelation(positions) for positions in self.layout.index_positions]
        for port, rows in self.initial.items():
            counts: dict[Row, int] = {}
            for row in rows:
                counts[row] = counts.get(row, 0) + 1
            self._apply(relations, self._propagate(relations, port, counts), negate=False)
        return ViewTreeState(relations)

    def _propagate_all(self, relations: list[RingRelation],
                       deltas: dict[int, dict[Row, int]]) -> list[list[tuple[int, dict]]]:
        """Each atom's delta up its path in turn (δ(V1·V2) = δV1·V2 + V1'·δV2); all or nothing.
        Returns the deltas applied, per atom (what a stage holding part of a tree emits from)."""
        applied: list[list[tuple[int, dict]]] = []
        try:
            for port, rows in deltas.items():
                updates = self._propagate(relations, port, rows)  # reads only: may raise (a lift)
                self._apply(relations, updates, negate=False)
                applied.append(updates)
        except BaseException:
            for updates in reversed(applied):
                self._apply(relations, updates, negate=True)
            raise
        return applied

    def _propagate(self, relations: list[RingRelation], port: int, rows: dict[Row, int]) -> list[tuple[int, dict]]:
        """The deltas of the atom and of every view on its path, computed before any is applied
        (each view's delta reads its other parts only, which this atom's update leaves alone)."""
        delta = self._input_delta(port, rows)
        updates = [(port, delta)]
        nodes = self.layout.nodes
        for plan in self.layout.paths[port]:
            node = nodes[plan.node]
            view_delta, expanded_delta = self._view_delta(relations, plan, node.lift_slot, node.expanded >= 0, delta)
            if expanded_delta:
                updates.append((node.expanded, expanded_delta))
            if not view_delta:
                break
            updates.append((node.view, view_delta))
            delta = view_delta
        return updates

    def _input_delta(self, port: int, rows: dict[Row, Any]) -> dict[Row, Any]:
        """A port's consolidated rows as ring payloads: an atom's row counts, lifted by ``from_int``
        (a stage fed by other view stages overrides it: its view ports carry payloads already)."""
        from_int = self.ring.from_int
        return {row: from_int(weight) for row, weight in rows.items()}

    def _view_delta(self, relations: list[RingRelation], plan: DeltaPlan, lift_slot: int, expanded: bool,
                    delta: dict[tuple, Any]) -> tuple[dict, dict | None]:
        ring = self.ring
        add, mul, mul_lift, is_zero = ring.add, ring.mul, ring.mul_lift, ring.is_zero
        view_positions, variable_position, steps = plan.view_positions, plan.variable_position, plan.steps
        out: dict[tuple, Any] = {}
        grouped: dict[tuple, Any] | None = {} if expanded else None
        for key, payload in delta.items():
            for assignment, product in _join(steps, 0, key, payload, relations, mul):
                view_key = tuple(assignment[p] for p in view_positions)
                value = assignment[variable_position]
                if grouped is not None:  # an assignment binds exactly dep ∪ {X}: one per expanded key
                    grouped[view_key + (value,)] = product
                if lift_slot >= 0:
                    product = mul_lift(product, lift_slot, value)
                old = out.get(view_key)
                out[view_key] = product if old is None else add(old, product)
        out = {k: v for k, v in out.items() if not is_zero(v)}
        if grouped is not None:
            grouped = {k: v for k, v in grouped.items() if not is_zero(v)}
        return out, grouped

    def _apply(self, relations: list[RingRelation], updates: list[tuple[int, dict]], negate: bool) -> None:
        ring = self.ring
        neg = ring.neg
        for relation, delta in updates:
            target = relations[relation]
            for key, payload in delta.items():
                target.add(key, neg(payload) if negate else payload, ring)

    # --- enumeration --------------------------------------------------------------------------

    def _enumeration_plan(self) -> tuple[tuple, tuple[int, ...]]:
        """Per free variable (parents first): its expanded view, the assignment positions of its
        ancestors it is grouped by, and the parts multiplied in at it (atoms and bound children),
        each with the assignment positions of its key; and where ``order.free`` sits in an assignment."""
        layout = self.layout
        variables = [layout.nodes[i].variable for i in layout.free_preorder]
        free_views = {layout.nodes[i].view for i in layout.free_preorder}
        plan = []
        for i in layout.free_preorder:
            node = layout.nodes[i]
            local = tuple((part, tuple(variables.index(v) for v in layout.key_variables[part]))
                          for part in node.parts if part not in free_views)
            plan.append((node.expanded, tuple(variables.index(v) for v in node.dep), local))
        return tuple(plan), tuple(variables.index(v) for v in self.order.free)

    def _enumerate_from(self, relations: list[RingRelation], depth: int, assignment: tuple,
                        payload: Any, pattern: tuple | None) -> Iterator[tuple[Row, Any]]:
        expanded, group_positions, local = self._enumeration[depth]
        mul = self.ring.mul
        relation = relations[expanded]
        last = depth + 1 == len(self._enumeration)
        group = tuple(assignment[p] for p in group_positions)
        if pattern is None or pattern[depth] is ANY:
            keys = relation.matching(tuple(range(len(group_positions))), group)
        else:
            wanted = group + (pattern[depth],)
            keys = (wanted,) if wanted in relation.entries else ()
        for key in keys:
            values = assignment + (key[-1],)
            product = payload
            for part, positions in local:
                product = mul(product, relations[part].entries[tuple(values[p] for p in positions)])
            if last:
                yield tuple(values[p] for p in self._output_positions), product
            else:
                yield from self._enumerate_from(relations, depth + 1, values, product, pattern)


def _join(steps: tuple[Step, ...], start: int, assignment: tuple, payload: Any,
          relations: list[RingRelation], mul) -> Iterator[tuple[tuple, Any]]:
    """The assignments extending ``assignment`` through ``steps[start:]`` with their products:
    lookups multiply in place, a probe recurses once per match."""
    for depth in range(start, len(steps)):
        step = steps[depth]
        relation = relations[step.relation]
        if not step.probe:
            other = relation.entries.get(tuple(assignment[p] for p in step.bound_positions))
            if other is None:
                return
            payload = mul(payload, other)
            continue
        entries, new_positions = relation.entries, step.new_positions
        group = tuple(assignment[p] for p in step.bound_positions)
        for key in relation.matching(step.index_positions, group):
            yield from _join(steps, depth + 1, assignment + tuple(key[p] for p in new_positions),
                             mul(payload, entries[key]), relations, mul)
        return
    yield assignment, payload


def _merge(pending: dict[int, dict[Row, int]], deltas: dict[int, dict[Row, int]]) -> None:
    """Add a batch's net row weights into ``pending``, dropping rows and ports that cancel."""
    for port, rows in deltas.items():
        into = pending.setdefault(port, {})
        for row, weight in rows.items():
            total = into.get(row, 0) + weight
            if total:
                into[row] = total
            else:
                del into[row]
        if not into:
            del pending[port]
