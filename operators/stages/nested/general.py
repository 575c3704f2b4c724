"""RPAI's general incrementalization algorithm (§4.2): free, bound and result maps, O(n) per update.
A subquery nested two levels in the VWAP shape (NQ2) is one more of its subqueries, read from an
RPAI tree.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from operators.stages.base import Change, KeyedStage, StageDescription
from operators.stages.nested.sums import (
    Compiled,
    GlobalResult,
    RequiredSums,
    ScalarAggregate,
    accumulate,
    add_vectors,
    diff_rows,
)
from operators.structures.aggregate_index import PrefixAggregateIndex, PrefixIndexState
from operators.zset import Row, consolidate


@attrs.frozen
class CorrelatedMaps:
    """How the general algorithm reads one correlated subquery (RPAI §4.2.2).

    ``free_of`` picks the subquery's free (outer) values out of an outer key; ``bound_of`` its bound
    (inner) values out of an inner row; ``holds`` evaluates the correlation on ``free + bound``.
    With ``equalities`` the correlation is ``bound[j] = free[j]`` for every j: an inner row then
    changes the one free key equal to its bound values, found by lookup instead of a scan (SQL's
    ``=`` never holds for NULL, so a key holding NULL matches nothing).
    """

    aggregate: ScalarAggregate
    free_of: Compiled = attrs.field(eq=False)
    bound_of: Compiled = attrs.field(eq=False)
    holds: Compiled = attrs.field(eq=False)
    equalities: bool = False


@attrs.frozen
class ParameterizedIndex:
    """How the general algorithm reads a subquery nested two levels (NQ2's middle level).

    Its rows sit in one ``PrefixAggregateIndex`` keyed by their q; for an outer key its value is
    the aggregate over the rows with ``parameter op q``, one range sum (O(log n)), where
    ``parameter`` reads the values of the subqueries before it (RPAI §4.2 applied recursively,
    with §2.2.3's tree for the inner level instead of a second set of free and bound maps).
    """

    aggregate: ScalarAggregate
    index: PrefixAggregateIndex = attrs.field(eq=False)
    parameter: Compiled = attrs.field(eq=False)  # over the tuple of the earlier subqueries' values
    op: str

    def value_at(self, state: PrefixIndexState, parameter) -> object:
        total, count = self.index.range_vectors(state, self.op, parameter).get((), (0, 0))
        return self.aggregate.result(total, count)


@attrs.define
class GeneralState:
    results: dict  # outer key -> [required sums, row count]           (result maps)
    bound: list[dict]  # per subquery: bound values -> [Σ, count]       (bound maps)
    free: list[dict]  # per subquery: free values -> [Σ, count, outer rows using it]  (free maps)
    uncorrelated: list[list]
    prefix: list  # per subquery: its PrefixIndexState if it is a ParameterizedIndex, else None
    output: list  # the result rows after the last batch: the next batch's "before" without an O(n) pass


class GeneralNestedStage(GlobalResult, KeyedStage):
    """RPAI's general incrementalization algorithm (§4.2, Algorithm 3), keyed by a constant.

    Port 0: outer rows; port 1+i: rows of subquery i. ``subqueries[i]`` is a ``CorrelatedMaps`` or,
    for an uncorrelated subquery, a ``ScalarAggregate``. ``predicate`` reads ``outer key + one value
    per subquery``. Per update: O(free keys) for an inner row, O(bound keys) for a new free key;
    the result is recomputed from the result map, O(distinct outer keys), once per batch.
    """

    def __init__(self, name: str, outer_key: Compiled, subqueries: tuple, predicate: Compiled, sums: RequiredSums,
                 group: Compiled, finish: Callable[[Row], Row | None], output_columns: tuple[str, ...],
                 description: StageDescription, grouped: bool = False):
        self.name, self.outer_key, self.subqueries, self.predicate = name, outer_key, subqueries, predicate
        self.sums, self.finish, self.group, self.grouped = sums, finish, group, grouped
        self.output_columns, self.description = output_columns, description

    def _values(self, state: GeneralState, key: Row, memo: dict) -> tuple:
        """Every subquery's value for one outer key. ``memo`` keeps, for this pass over the result map,
        each value by what it depends on: nothing (uncorrelated), the free values (correlated) or the
        parameter (parameterized, which reads the values before it): many outer keys share them."""
        values: list = []
        for i, spec in enumerate(self.subqueries):
            if isinstance(spec, ScalarAggregate):
                depends = (i,)
            elif isinstance(spec, ParameterizedIndex):
                depends = (i, spec.parameter(tuple(values)))
            else:
                depends = (i, spec.free_of(key))
            value = memo.get(depends, memo)
            if value is memo:
                value = memo[depends] = self._value(state, i, depends[1:])
            values.append(value)
        return tuple(values)

    def _value(self, state: GeneralState, i: int, depends: tuple):
        spec = self.subqueries[i]
        if isinstance(spec, ScalarAggregate):
            return spec.result(*state.uncorrelated[i])
        if isinstance(spec, ParameterizedIndex):
            return spec.value_at(state.prefix[i], depends[0])
        total, count, _ = state.free[i][depends[0]]
        return spec.aggregate.result(total, count)

    def _output(self, state: GeneralState | None) -> list[Row]:
        """The result rows, recomputed from the result map (Algorithm 3's final loop)."""
        totals: dict[tuple, tuple] = {}
        memo: dict = {}
        for key, (vector, _) in (state.results.items() if state is not None else ()):
            values = self._values(state, key, memo)
            if self.predicate(key + values) is True:
                group = self.group(key)
                totals[group] = add_vectors(totals.get(group, self.sums.zero()), vector)
        return self.result_rows(totals)

    def process(self, key: tuple, state: GeneralState | None, changes: list[Change]):
        n = len(self.subqueries)
        before = state.output if state is not None else self._output(None)
        state = state or GeneralState({}, [{} for _ in range(n)], [{} for _ in range(n)], [[0, 0] for _ in range(n)],
                                      [s.index.new_state() if isinstance(s, ParameterizedIndex) else None
                                       for s in self.subqueries], before)
        by_port: dict[int, list] = {}
        for change in changes:
            if change.port > 0:
                by_port.setdefault(change.port, []).append((change.row, change.weight))
        # Each step evaluates its expressions before it changes the maps; the steps done are logged
        # and taken back newest first if a later one or the output raises (base.py, atomic per key)
        done: list = []  # (subquery index, or -1 for an outer row; row; weight)
        try:
            for port, rows in by_port.items():  # inner rows first: new free keys below then see the updated bound maps
                for row, weight in consolidate(rows):  # deletes first: an index never loses a row it lacks
                    self._inner(state, port - 1, row, weight)
                    done.append((port - 1, row, weight))
            for change in changes:
                if change.port == 0:
                    self._outer(state, change.row, change.weight)
                    done.append((-1, change.row, change.weight))
            output = self._output(state)
        except BaseException:
            for i, row, weight in reversed(done):
                if i < 0:
                    self._outer(state, row, -weight)
                else:
                    self._inner(state, i, row, -weight)
            raise
        state.output = output
        return state, diff_rows(before, output)

    def _inner(self, state: GeneralState, i: int, row: Row, weight: int) -> None:
        spec = self.subqueries[i]
        if isinstance(spec, ScalarAggregate):
            accumulate(state.uncorrelated[i], spec, row, weight)
            return
        if isinstance(spec, ParameterizedIndex):
            sign = 1 if weight > 0 else -1
            for _ in range(abs(weight)):
                spec.index.apply(state.prefix[i], row, sign, spec.aggregate.contribution(row, sign))
            return
        total, count = spec.aggregate.contribution(row, weight)
        bound = spec.bound_of(row)
        if spec.equalities:  # the one free key equal to the bound values, if any
            aggregate = None if None in bound else state.free[i].get(bound)
            affected = () if aggregate is None else (aggregate,)
        else:  # Algorithm 3, lines 14-17
            affected = [aggregate for free, aggregate in state.free[i].items() if spec.holds(free + bound) is True]
        # every expression was evaluated: from here on nothing raises (the step is atomic)
        entry = state.bound[i].setdefault(bound, [0, 0])
        entry[0] += total
        entry[1] += count
        if entry[1] == 0:
            del state.bound[i][bound]
        for aggregate in affected:
            aggregate[0] += total
            aggregate[1] += count

    def _outer(self, state: GeneralState, row: Row, weight: int) -> None:
        key = self.outer_key(row)
        vector = self.sums.of(row, weight)
        # per correlated subquery: its free values and, for a free key not seen yet, its new aggregate;
        # all expressions are evaluated before the maps change, so the step is atomic
        free_keys = []
        for i, spec in enumerate(self.subqueries):
            if isinstance(spec, ScalarAggregate | ParameterizedIndex):
                continue  # read the outer rows only through other subqueries, or not at all
            free = spec.free_of(key)
            new = None
            if free not in state.free[i]:  # Algorithm 3, lines 19-24: the new outer value's aggregate
                if spec.equalities:
                    sums = None if None in free else state.bound[i].get(free)
                    matching = () if sums is None else (sums,)
                else:
                    matching = [sums for bound, sums in state.bound[i].items() if spec.holds(free + bound) is True]
                new = [sum(t for t, _ in matching), sum(c for _, c in matching), 0]
            free_keys.append((i, free, new))
        entry = state.results.setdefault(key, [self.sums.zero(), 0])
        entry[0] = add_vectors(entry[0], vector)
        entry[1] += weight
        if entry[1] == 0:
            del state.results[key]
        for i, free, new in free_keys:
            aggregate = state.free[i][free] if new is None else state.free[i].setdefault(free, new)
            aggregate[2] += weight
            if aggregate[2] == 0:
                del state.free[i][free]

    def describe(self) -> StageDescription:
        return self.description
