"""A view tree as a dataflow of keyed stages, one per view or per fused chain of views (issue 12 item 7).

``ViewTreeStage`` holds a whole view tree under one constant key. Here each stage holds a *fragment*
of the tree (a top variable T and the single-part views fused under it, see
``operators/lowering/view_stages.py``) and is keyed by variables that every one of its inputs
carries, so its state splits by key across Spark partitions. The inputs of a stage are the atoms
placed in its fragment (rows with integer weights) and the outputs of the stages below it (view
ports: rows ``(key values..., payload)`` whose weight multiplies the payload). A stage's order is its
fragment under the chain of T's key ``dep(T)`` (its ancestors the fragment mentions), so the layout of
``ViewTreeStage`` keys each view exactly as the whole tree would.

- ``ViewStage`` (T bound): V_T(dep(T)) = Σ_T lift(T) · Π parts is a sum, so each stage key k computes
  the summands whose parts it holds and emits the change of that partial sum, ``(dep(T) values...,
  Δpayload)`` with weight 1. Summation is linear: the parent's stage, which keeps V_T as one of its
  parts, adds the contributions of every key (Olteanu §3.1's δ(Σ_X V) = Σ_X δV). The stage does not
  keep V_T itself: nothing in it reads V_T.
- ``GroupViewStage`` (T free): the free variables are not summed; the stage emits the changed groups
  of its fragment, −old/+new per group (``GroupedViewTreeStage``), which a parent free stage keeps as
  one part (the expanded view V'_T of Ex. 4.12) and the root's stage emits as the query's groups.
- ``TotalStage``: a global aggregate's total, the sum of the root stage's contributions, under a
  constant key (one group, present also when the join is empty).

Every row between stages is read linearly: a port's rows stand for Σ weight · payload per key, so
−old/+new pairs, deltas with weight 1 and the negated replay of ``KeyedStage.revert`` all mean what
they say. Static atoms (§4.5) are refused after the view's first batch by the validator; a stage
keyed per view sees the first batch of a key, not of the view, so it does not check them itself.
"""

from __future__ import annotations

from typing import Any

import attrs

from operators.stages.base import (
    Change,
    ConstantKey,
    KeyedStage,
    StageDescription,
    UnchangedOldState,
    key_getter,
)
from operators.stages.view_tree import ViewTreeStage, ViewTreeState
from operators.stages.view_tree_groups import GroupedViewTreeStage
from operators.structures.ring_relation import RingRelation
from operators.structures.rings import Ring
from operators.structures.variable_order import VariableOrder
from operators.zset import Changelog, Row


class _Discarded:
    """Where a stage applies the deltas of a relation nothing in it reads: not kept. A ``ViewStage``'s
    top view (the parent's stage keeps V_T), an atom that only its own view sums (a summed column's:
    ΔV = Σ lift · Δatom needs no lookup), the chain above the top."""

    __slots__ = ()

    def add(self, key: tuple, delta: Any, ring: Any) -> None:
        pass

    def __reduce__(self) -> str:
        return "_DISCARDED"  # unpickled as the one instance


_DISCARDED = _Discarded()


class _KeyedFragment:
    """What both fragment stages share: the stage key read off each port's row, view ports whose rows
    end with a payload, per key only the relations something reads, and a state dropped once they
    are all empty."""

    order: VariableOrder
    ring: Ring
    widths: tuple[int, ...]

    def _key_ports(self, key: tuple[str, ...], view_ports: frozenset[int], fragment: tuple[str, ...]) -> None:
        #: the variables whose views this stage computes: its top first, then the views fused under it
        self.fragment = fragment
        self.key_variables, self.view_ports = key, view_ports
        self._key_positions = tuple(tuple(atom.variables.index(v) for v in key) for atom in self.order.atoms)
        self.widths = tuple(width + (port in view_ports) for port, width in enumerate(self.widths))

    def key_of(self, port: int, row: Row) -> tuple:
        return tuple(row[p] for p in self._key_positions[port])

    def key_function(self, port: int):
        return key_getter(self._key_positions[port])

    def _consolidate(self, changes: list[Change], first: bool = False) -> dict[int, dict[Row, Any]]:
        """Per port, the batch's net input: atoms' rows → summed weights; view ports' keys → summed
        weight · payload. Raises on a row of the wrong width before anything changes."""
        ring, views = self.ring, self.view_ports
        deltas: dict[int, dict[Row, Any]] = {}
        for port, row, weight in changes:
            if len(row) != self.widths[port]:
                raise ValueError(f"{self.name}: row {row!r} of {self.order.atoms[port].name} has "
                                 f"{len(row)} columns, expected {self.widths[port]}")
            rows = deltas.setdefault(port, {})
            if port in views:
                key, payload = row[:-1], row[-1]
                value = payload if weight == 1 else ring.neg(payload) if weight == -1 else \
                    ring.mul(ring.from_int(weight), payload)
                old = rows.get(key)
                rows[key] = value if old is None else ring.add(old, value)
            else:
                rows[row] = rows.get(row, 0) + weight
        is_zero = ring.is_zero
        out = {}
        for port, rows in deltas.items():
            kept = {k: v for k, v in rows.items() if not is_zero(v)} if port in views else \
                {k: v for k, v in rows.items() if v}
            if kept:
                out[port] = kept
        return out

    def _input_delta(self, port: int, rows: dict[Row, Any]) -> dict[Row, Any]:
        return rows if port in self.view_ports else super()._input_delta(port, rows)

    def _fresh_relations(self) -> list:
        """A new key's relations: those a delta plan looks up or probes, or enumeration reads; the others
        are only ever written, so they are not kept (``_Discarded``)."""
        layout = self.layout
        read = {step.relation for path in layout.paths for plan in path for step in plan.steps}
        for expanded, _, local in self._enumeration:
            read |= {expanded, *(part for part, _ in local)}
        return [RingRelation(positions) if i in read else _DISCARDED
                for i, positions in enumerate(layout.index_positions)]

    def _key_text(self) -> str:
        if not self.key_variables:
            return "constant (does not scale out): its inputs share no variable"
        return f"({', '.join(self.key_variables)})"

    def _inputs_text(self) -> str:
        return ", ".join(f"{a.name}({', '.join(a.variables)}){' static' if a.static else ''}" for a in self.order.atoms)


def _empty(state: ViewTreeState) -> bool:
    return all(not r.entries for r in state.relations if isinstance(r, RingRelation))


class ViewStage(_KeyedFragment, ViewTreeStage):
    """The stage of a bound variable ``fragment[0]`` (the top): emits the change of V_top's summands
    held under each key as ``(dep(top) values..., Δpayload)`` rows of weight 1 (module docstring)."""

    def __init__(self, name: str, order: VariableOrder, ring: Ring, fragment: tuple[str, ...], key: tuple[str, ...],
                 view_ports: frozenset[int] = frozenset()):
        super().__init__(name, order, ring)
        layout = self.layout
        top_node = next(i for i, n in enumerate(layout.nodes) if n.variable == fragment[0])
        self.top = layout.nodes[top_node]
        # a delta climbs to V_top and stops: the chain above only gives the views their keys
        stops = [next((i for i, plan in enumerate(path) if plan.node == top_node), None) for path in layout.paths]
        if None in stops:  # an input above the top would not be multiplied into V_top
            raise ValueError(f"{name}: input {order.atoms[stops.index(None)].name} lies above {fragment[0]}")
        paths = tuple(path[:stop + 1] for path, stop in zip(layout.paths, stops, strict=True))
        self.layout = attrs.evolve(layout, paths=paths)
        #: the views this stage computes, the top last
        self._views = tuple(n for i, n in enumerate(layout.nodes) if any(p.node == i for path in paths for p in path))
        self.output_columns = (*self.top.dep, "payload")
        self._key_ports(key, view_ports, fragment)

    def process(self, key: tuple, state: ViewTreeState | None,
                changes: list[Change]) -> tuple[ViewTreeState | None, Changelog]:
        deltas = self._consolidate(changes)  # raises before anything changes
        if state is None:
            state = ViewTreeState(self._fresh_relations())
        applied = self._propagate_all(state.relations, deltas)
        ring, top = self.ring, self.top.view
        total: dict[tuple, Any] = {}
        for updates in applied:
            for relation, delta in updates:
                if relation == top:
                    for view_key, payload in delta.items():
                        old = total.get(view_key)
                        total[view_key] = payload if old is None else ring.add(old, payload)
        is_zero = ring.is_zero
        out: Changelog = [((*view_key, payload), 1) for view_key, payload in total.items() if not is_zero(payload)]
        return (None if _empty(state) else state), out

    def describe(self) -> StageDescription:
        views = [n for n in self._views if n.view != self.top.view]
        bounds = "; ".join(f"{name}: {bound}" for name, bound in self.update_bounds().items())
        return StageDescription(
            operator=f"View V_{self.top.variable}[{self.ring!r}] (F-IVM, per-view stage)",
            inputs=self._inputs_text(),
            state="the inputs by key" + "".join(f"; V_{n.variable}({', '.join(n.dep)})" for n in views),
            key=self._key_text(),
            update_cost=bounds or "no dynamic inputs",
            why=f"Olteanu §4.1: V_{self.top.variable}({', '.join(self.top.dep)}) = Σ_{self.top.variable} of the "
                "product of its parts, a sum: each key emits its summands' change and the parent's stage adds them")


class GroupViewStage(_KeyedFragment, GroupedViewTreeStage):
    """The stage of a free variable: emits ``(order.free values..., payload)`` −old/+new per changed
    group of its fragment (the root's: the query's groups)."""

    def __init__(self, name: str, order: VariableOrder, ring: Ring, fragment: tuple[str, ...],
                 key: tuple[str, ...], view_ports: frozenset[int] = frozenset()):
        super().__init__(name, order, ring)
        self._key_ports(key, view_ports, fragment)

    def process(self, key: tuple, state: ViewTreeState | None,
                changes: list[Change]) -> tuple[ViewTreeState | None, Changelog]:
        state, out = super().process(key, state, changes)
        return (None if _empty(state) else state), out

    def _initial_state(self) -> ViewTreeState:
        return ViewTreeState(self._fresh_relations())

    def describe(self) -> StageDescription:
        inner = super().describe()
        return attrs.evolve(inner, operator=f"Groups ({', '.join(self.order.free)})[{self.ring!r}] (F-IVM, per-view stage)",
                            inputs=self._inputs_text(), key=self._key_text())


class TotalStage(ConstantKey, UnchangedOldState, KeyedStage):
    """A global aggregate's payload: the sum of the root stage's contributions ``(payload,)``, emitted
    −old/+new; the one group is present also when the payload is zero (COUNT 0, SUM NULL)."""

    def __init__(self, name: str, ring: Ring):
        self.name, self.ring = name, ring
        self.output_columns = ("payload",)

    def start_output(self) -> Changelog:
        return [((self.ring.zero,), 1)]

    def process(self, key: tuple, state: Any | None, changes: list[Change]) -> tuple[Any | None, Changelog]:
        ring = self.ring
        old = ring.zero if state is None else state
        new = old
        for change in changes:
            new = ring.add(new, ring.mul(ring.from_int(change.weight), change.row[0]))
        if new == old:
            return state, []
        return (None if ring.is_zero(new) else new), [((old,), -1), ((new,), 1)]

    def describe(self) -> StageDescription:
        return StageDescription(
            operator=f"Total[{self.ring!r}] (F-IVM)", inputs="the root view's contributions", state="one payload",
            key="constant: a global aggregate has one group (its input is one row per changed root key)",
            update_cost="O(1) per contribution", why="Σ over the root variable finishes here: a sum is linear")
