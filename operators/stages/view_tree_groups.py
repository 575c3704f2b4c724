"""A view tree that emits the changes of its per-group payloads: a GROUP BY's result as a changelog.

``ViewTreeStage`` keeps the result factorized and emits only the total. A GROUP BY query needs, per
group (an assignment of the free variables, which sit at the top of the order), the payload
aggregated over the bound variables, and its result changes. This stage emits ``(group values...,
payload)`` rows, −old and +new for every group a batch changed, and nothing for the others.

Which groups a batch can change: a change of atom R fixes R's free variables; the groups that agree
with it there are the candidates (``enumerate`` with a pattern visits just those, a lookup per fixed
variable). Their payloads are read before and after the batch is propagated, and the differences
emitted. When every atom holds every free variable (GROUP BY a variable of all atoms, the common
case) that is one group per changed row: O(#free variables) lookups on top of the view tree's own
update. An atom missing a free variable changes every group extending its values (Ex. 4.4: an R
change of Q(Y, X, Z) = R(Y, X)·S(Y, Z) changes the groups (y, x, z) for every z of S), which is the
size of the result's change itself, so no flat changelog can do better.

A global aggregate (no free variable) has one group, always present: its row is emitted also when
the payload is zero (COUNT 0, SUM NULL), matching the row a SQL global aggregate returns over no
input. Eager propagation only: a lazy view tree emits nothing to diff.
"""

from __future__ import annotations

from typing import Any

from operators.stages.base import Change, StageDescription
from operators.stages.view_tree import ANY, ViewTreeStage, ViewTreeState
from operators.structures.rings import Ring
from operators.structures.variable_order import VariableOrder
from operators.zset import Changelog


class GroupedViewTreeStage(ViewTreeStage):
    """A ``ViewTreeStage`` whose output rows are ``order.free`` values then the group's payload."""

    def __init__(self, name: str, order: VariableOrder, ring: Ring):
        super().__init__(name, order, ring)
        self.output_columns = (*order.free, "payload")
        visited = self.free_variables_visited
        #: per port: (position in the pattern, position in the atom's row) of its free variables
        self._fixes = tuple(
            tuple((visited.index(v), i) for i, v in enumerate(atom.variables) if v in visited)
            for atom in order.atoms)

    def start_output(self) -> Changelog:
        """A global aggregate's one group, present over empty input with the zero payload."""
        return [] if self.order.free else [((self.ring.zero,), 1)]

    def process(self, key: tuple, state: ViewTreeState | None,
                changes: list[Change]) -> tuple[ViewTreeState, Changelog]:
        deltas = self._consolidate(changes, state is None)  # raises before anything changes
        if state is None:
            state = self._initial_state()
        patterns = self._patterns(deltas)
        before = self._groups(state, patterns)
        self._propagate_all(state.relations, deltas)
        after = self._groups(state, patterns)
        out: Changelog = []
        for group in before.keys() | after.keys():
            old, new = before.get(group), after.get(group)
            if old != new:
                if old is not None:
                    out.append(((*group, old), -1))
                if new is not None:
                    out.append(((*group, new), 1))
        return state, out

    def _patterns(self, deltas: dict[int, dict]) -> set[tuple]:
        """The groups the changed rows can reach, as patterns over the visited free variables."""
        width = len(self.free_variables_visited)
        patterns = set()
        for port, rows in deltas.items():
            fixes = self._fixes[port]
            if not fixes:
                return {(ANY,) * width}  # a change outside every free variable reaches every group
            for row in rows:
                pattern = [ANY] * width
                for at, column in fixes:
                    pattern[at] = row[column]
                patterns.add(tuple(pattern))
        return patterns

    def _groups(self, state: ViewTreeState, patterns: set[tuple]) -> dict[tuple, Any]:
        if not self.order.free:
            return {(): self.total(state)} if patterns else {}
        found: dict[tuple, Any] = {}
        for pattern in patterns:
            found.update(self.enumerate(state, pattern))
        return found

    def describe(self) -> StageDescription:
        inner = super().describe()
        return StageDescription(
            operator=inner.operator.replace("factorized output", "per-group payload changes"),
            inputs=inner.inputs, state=inner.state,
            key="constant (does not scale out): one stage holds the whole view tree",
            update_cost=inner.update_cost + "; plus O(#free variables) lookups per changed group",
            why=inner.why + "; the groups a change reaches are read before and after it (free variables on top)")
