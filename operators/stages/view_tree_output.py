"""A view tree whose result is the join's rows themselves, kept factorized (Olteanu Ex. 4.4).

Over the count ring a free tuple's payload is the number of join rows projecting to it, the bag
multiplicity SQL gives the projected row. This stage keeps the views of ``ViewTreeStage`` and

- in pull mode (``push=False``) emits nothing: a batch costs the views' update alone (O(1) per
  single-tuple change for a q-hierarchical order), and the result is read by ``enumerate(key,
  state)``, the interface every enumerating stage offers ``Dataflow.enumerate_result``, with
  constant delay: nothing else holds it;
- in push mode emits each batch's result changes by *delta enumeration*: a changed row of atom R
  fixes R's free variables, and the free tuples agreeing with it (``ViewTreeStage.enumerate`` with
  a pattern: a lookup per fixed variable, an iteration per open one) are read before and after the
  batch is propagated; their count differences are the changes. For an order with the free
  variables on top (what the rule builds) every tuple read changes, so this is O(|δQ|) beyond the
  views' update: the size of the change itself (Ex. 4.4: an R(y, x) change meets every z of S).

``once_each`` (SELECT DISTINCT of exactly the free columns): a tuple counts 1 while its payload is
positive. Like ``ViewTreeStage``: one stage keyed by a constant (does not scale out).
"""

from __future__ import annotations

from collections.abc import Iterator

from operators.stages.base import Change, StageDescription, key_getter
from operators.stages.view_tree import ANY, ViewTreeStage, ViewTreeState
from operators.structures.rings import CountRing
from operators.structures.variable_order import VariableOrder
from operators.zset import Changelog, Row


class FactorizedOutputStage(ViewTreeStage):
    """Output rows with their multiplicities, enumerated from a count-ring view tree: ``columns``
    named, column i the free variable at ``positions[i]`` of ``order.free`` (columns made equal
    share one)."""

    def __init__(self, name: str, order: VariableOrder, columns: tuple[str, ...], positions: tuple[int, ...],
                 once_each: bool = False, push: bool = True):
        super().__init__(name, order, CountRing())
        self.columns, self.positions, self.once_each, self.push = columns, positions, once_each, push
        self.output_columns = columns
        self._project = key_getter(positions)
        visited = self.free_variables_visited
        #: per port: (pattern position, row position) of each free variable the atom holds
        self._fixed = tuple(tuple((visited.index(v), i) for i, v in enumerate(atom.variables) if v in visited)
                            for atom in order.atoms)

    def without_changes(self) -> FactorizedOutputStage:
        """This stage in pull mode: the same views, no result changes."""
        return FactorizedOutputStage(self.name, self.order, self.columns, self.positions, self.once_each, push=False)

    def enumerate(self, key: tuple, state: ViewTreeState | None) -> Iterator[tuple[Row, int]]:
        """The result: each free tuple's output row with its multiplicity, constant delay."""
        project = self._project
        return ((project(values), count) for values, count in self._tuples(state, None))

    def process(self, key: tuple, state: ViewTreeState | None,
                changes: list[Change]) -> tuple[ViewTreeState, Changelog]:
        deltas = self._consolidate(changes, state is None)  # raises before anything changes
        if state is None:
            state = self._initial_state()
        if not self.push:
            self._propagate_all(state.relations, deltas)
            return state, []
        patterns = self._reached(deltas)
        before = self._counts(state, patterns)
        self._propagate_all(state.relations, deltas)
        after = self._counts(state, patterns)
        out: Changelog = []
        for row in before.keys() | after.keys():
            weight = after.get(row, 0) - before.get(row, 0)
            if weight:
                out.append((row, weight))
        return state, out  # kept even when empty: a new state would load ``initial`` again

    def _tuples(self, state: ViewTreeState | None, pattern: tuple | None) -> Iterator[tuple[Row, int]]:
        """The free tuples (``order.free``) matching ``pattern``, each with its count (1 under ``once_each``)."""
        found = ViewTreeStage.enumerate(self, state, pattern)
        return ((values, 1) for values, count in found if count > 0) if self.once_each else found

    def _reached(self, deltas: dict[int, dict[Row, int]]) -> set[tuple]:
        """The patterns (over the visited free variables) of the tuples the changed rows can reach."""
        open_pattern = [ANY] * len(self.free_variables_visited)
        reached = set()
        for port, rows in deltas.items():
            fixed = self._fixed[port]
            for row in rows:
                pattern = list(open_pattern)
                for at, column in fixed:
                    pattern[at] = row[column]
                reached.add(tuple(pattern))
        return reached

    def _counts(self, state: ViewTreeState, patterns: set[tuple]) -> dict[Row, int]:
        """The output rows of the free tuples ``patterns`` reach, with their counts (each tuple once,
        however many patterns reach it)."""
        reached: dict[Row, int] = {}
        for pattern in patterns:
            reached.update(self._tuples(state, pattern if self._enumeration else None))
        rows: dict[Row, int] = {}
        project = self._project
        for values, count in reached.items():
            row = project(values)
            rows[row] = rows.get(row, 0) + count
        return rows

    def describe(self) -> StageDescription:
        inner = super().describe()
        mode = "push: each batch's changes delta-enumerated" if self.push else "pull: read by enumeration"
        return StageDescription(
            operator=f"ViewTree[count] (F-IVM, factorized output, {mode}{', DISTINCT' if self.once_each else ''})",
            inputs=inner.inputs, state=inner.state, key=inner.key,
            update_cost=inner.update_cost + ("; plus O(|δ result|) to enumerate the changes" if self.push else ""),
            why="Olteanu Ex. 4.4: the result stays factorized over the views and is enumerated from them with "
                "constant delay; q-hierarchical orders look up one entry per sibling view (Thm 4.1)")
