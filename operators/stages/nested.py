"""Keyed stages for correlated nested aggregates (RPAI, Abeysinghe et al., SIGMOD 2022).

The outer query's aggregates are kept as *required sums* (RPAI Algorithm 4's ``requiredSums``): per
aggregate the sum of its argument and the count of non-NULL arguments, so AVG needs no extra index.
Aggregate indexes map a value of the correlated aggregate q to the required sums of the outer rows
having that q; the result is a range sum over the index for ``v θ q``.

- ``RpaiTreeStage`` (VWAP, §2.2.3): q is a prefix sum along one column; an insert shifts the q of
  every later group: ``shift_keys`` on an RPAI tree, O(log n). Keyed by a constant.
- ``CorrelationGroupStage`` + ``AggregateIndexStage`` (Example 2.1, §2.1.3): keyed by the
  correlation key, a group's q moves as one point; the global index stage moves that group's sums
  from the old q to the new one (the PAI map), O(1) for ``=``, O(log n) for a range.
- ``PerKeyIndexStage`` + ``SumVectorsStage`` (TPC-H Q17): per correlation key an RPAI tree keyed by
  the outer value v; the key's contribution is one range sum, O(log n) per update.
- ``GeneralNestedStage`` (§4.2): free, bound and result maps; O(n) per update. A subquery nested two
  levels in the VWAP shape (NQ2) is one more of its subqueries, read from an RPAI tree.

Index keys are made exact numbers (``operators/structures/aggregate_index.py`` says why).
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from operators.stages.base import Change, KeyedStage, StageDescription
from operators.structures.aggregate_index import PrefixAggregateIndex, PrefixIndexState, exact, range_sum
from operators.structures.pai_map import HashAggregateIndex
from operators.structures.rpai_tree import RPAITree
from operators.zset import Changelog, Row, consolidate

Compiled = Callable[[Row], object]


@attrs.frozen
class RequiredSums:
    """The outer aggregates as a vector that adds up: the number of rows, then (sum, non-NULL count)
    per aggregate. The row count says whether a group exists (SQL shows a group with any row)."""

    funcs: tuple[str, ...]
    arguments: tuple[Compiled | None, ...] = attrs.field(eq=False)

    @property
    def width(self) -> int:
        return 1 + 2 * len(self.funcs)

    def zero(self) -> tuple:
        return (0,) * self.width

    def of(self, row: Row, weight: int) -> tuple:
        vector = [weight]
        for argument in self.arguments:
            value = 1 if argument is None else argument(row)
            vector += [0, 0] if value is None else [weight * value, weight]
        return tuple(vector)

    def values(self, vector) -> tuple:
        out = []
        for i, func in enumerate(self.funcs):
            total, count = vector[1 + 2 * i], vector[2 + 2 * i]
            if func == "count":
                out.append(count)
            elif count == 0:
                out.append(None)
            else:
                out.append(total / count if func == "avg" else total)
        return tuple(out)


def add_vectors(a: tuple, b: tuple, sign: int = 1) -> tuple:
    return tuple(x + sign * y for x, y in zip(a, b, strict=True))


@attrs.frozen
class ScalarAggregate:
    """One scalar aggregate subquery: its aggregate function, argument and the ``value`` built on it."""

    func: str
    argument: Compiled | None = attrs.field(eq=False)
    value: Compiled = attrs.field(eq=False)  # over the one-column row (aggregate,)
    start: tuple = (0, 0)  # (Σ, count) before any input: a fed query's row over empty input

    def contribution(self, row: Row, weight: int) -> tuple:
        value = 1 if self.argument is None else self.argument(row)
        return (0, 0) if value is None else (weight * value, weight)

    def result(self, total, count):
        total, count = total + self.start[0], count + self.start[1]
        if self.func == "count":
            aggregate = count
        elif count == 0:
            aggregate = None
        else:
            aggregate = total / count if self.func == "avg" else total
        return self.value((aggregate,))


def accumulate(acc: list, aggregate: ScalarAggregate, row: Row, weight: int) -> None:
    """Add one row's contribution to a subquery aggregate's ``[Σ argument, count]``."""
    total, count = aggregate.contribution(row, weight)
    acc[0] += total
    acc[1] += count


class _GlobalResult:
    """Shared by the stages keyed by a constant that emit the one result row of a global aggregate."""

    sums: RequiredSums
    finish: Callable[[Row], Row | None]

    def result_row(self, vector) -> Row | None:
        return self.finish(self.sums.values(vector))

    def empty_result(self) -> Row | None:
        return self.result_row(self.sums.zero())

    def key_of(self, port: int, row: Row) -> tuple:
        return ()

    def emit(self, before: Row | None, after: Row | None) -> Changelog:
        return consolidate(([(before, -1)] if before is not None else []) + ([(after, 1)] if after is not None else []))


def grouped_rows(finish: Callable[[Row], Row | None], sums: RequiredSums, vectors: dict) -> list[Row]:
    """The result rows of the groups that have rows: ``finish(group + aggregate values)``."""
    rows = []
    for group, vector in vectors.items():
        if vector[0] > 0:
            row = finish(group + sums.values(vector))
            if row is not None:
                rows.append(row)
    return rows


def diff_rows(before: list[Row], after: list[Row]) -> Changelog:
    return consolidate([(row, -1) for row in before] + [(row, 1) for row in after])


@attrs.define
class RpaiState:
    index: PrefixIndexState
    uncorrelated: list[list]


class RpaiTreeStage(_GlobalResult, KeyedStage):
    """VWAP-shaped queries (RPAI Figure 2c): port 0 the relation's rows, port 1+i uncorrelated aggregate i.

    ``index`` keeps the rows by their q with their required sums; ``op`` compares v with q. With
    ``group`` (GROUP BY, MST's bids per broker) each group has its own trees in the index.
    """

    def __init__(self, name: str, index: PrefixAggregateIndex, sums: RequiredSums, value: Compiled, op: str,
                 uncorrelated: tuple[ScalarAggregate, ...], finish: Callable[[Row], Row | None],
                 output_columns: tuple[str, ...], description: StageDescription, group: Compiled | None = None):
        self.name, self.index, self.sums, self.group = name, index, sums, group
        self.value, self.op, self.uncorrelated, self.finish = value, op, uncorrelated, finish
        self.output_columns, self.description = output_columns, description

    def _v(self, state: RpaiState):
        values = tuple(agg.result(*acc) for agg, acc in zip(self.uncorrelated, state.uncorrelated, strict=True))
        return self.value(values)

    def _output(self, state: RpaiState | None) -> list[Row]:
        if state is None and self.group is None:
            empty = self.empty_result()
            return [] if empty is None else [empty]
        vectors = {} if state is None else self.index.range_vectors(state.index, self.op, self._v(state))
        if self.group is not None:
            return grouped_rows(self.finish, self.sums, vectors)
        row = self.result_row(vectors.get((), self.sums.zero()))
        return [] if row is None else [row]

    def process(self, key: tuple, state: RpaiState | None, changes: list[Change]):
        before = self._output(state)
        if state is None:
            state = RpaiState(self.index.new_state(), [[0, 0] for _ in self.uncorrelated])
        rows = consolidate((c.row, c.weight) for c in changes if c.port == 0)
        for row, weight in rows:  # deletes first (consolidate orders them so): every state stays valid
            sign = 1 if weight > 0 else -1
            group = () if self.group is None else self.group(row)
            for _ in range(abs(weight)):
                self.index.apply(state.index, row, sign, self.sums.of(row, sign), group)
        for change in changes:
            if change.port > 0:
                accumulate(state.uncorrelated[change.port - 1], self.uncorrelated[change.port - 1], change.row, change.weight)
        return state, diff_rows(before, self._output(state))

    def describe(self) -> StageDescription:
        return self.description


@attrs.define
class GroupState:
    inner: list  # [Σ argument, count] of the correlated aggregate
    outer: dict  # GROUP BY group (``()`` without one) -> [required sums, row count] of the key's outer rows


class CorrelationGroupStage(KeyedStage):
    """Keyed by the correlation key: port 0 outer rows, port 1 inner rows; emits ``(q, *group, *sums)``
    entries, one per GROUP BY group among the key's outer rows (one entry without GROUP BY)."""

    def __init__(self, name: str, outer_key: Compiled, inner_key: Compiled, correlated: ScalarAggregate,
                 sums: RequiredSums, group: Compiled, output_columns: tuple[str, ...], description: StageDescription):
        self.name, self.outer_key, self.inner_key = name, outer_key, inner_key
        self.correlated, self.sums, self.group = correlated, sums, group
        self.output_columns, self.description = output_columns, description

    def key_of(self, port: int, row: Row) -> tuple:
        return self.outer_key(row) if port == 0 else self.inner_key(row)

    def key_function(self, port: int):
        return self.outer_key if port == 0 else self.inner_key

    def _entries(self, state: GroupState | None) -> list[Row]:
        if state is None or not state.outer:
            return []
        q = self.correlated.result(*state.inner)
        return [(q, *group, *vector) for group, (vector, _) in state.outer.items()]

    def process(self, key: tuple, state: GroupState | None, changes: list[Change]):
        before = self._entries(state)
        state = state or GroupState([0, 0], {})
        for change in changes:
            if change.port == 0:
                group = self.group(change.row)
                entry = state.outer.setdefault(group, [self.sums.zero(), 0])
                entry[0] = add_vectors(entry[0], self.sums.of(change.row, change.weight))
                entry[1] += change.weight
                if entry[1] == 0:
                    del state.outer[group]
            else:
                accumulate(state.inner, self.correlated, change.row, change.weight)
        empty = not state.outer and state.inner[1] == 0
        return (None if empty else state), diff_rows(before, self._entries(state))

    def describe(self) -> StageDescription:
        return self.description


@attrs.define
class IndexState:
    indexes: dict  # GROUP BY group (``()`` without one) -> aggregate indexes, one per required-sum component
    uncorrelated: list[list]


class AggregateIndexStage(_GlobalResult, KeyedStage):
    """The PAI map (§2.1.3): port 0 group entries ``(q, *group, *sums)``, port 1+i uncorrelated aggregate i.

    With GROUP BY (``group_width`` > 0) each group has its own index; a group shows when any of its
    rows satisfies ``v op q`` (SQL: a group exists when a row passes WHERE).
    """

    def __init__(self, name: str, sums: RequiredSums, value: Compiled, op: str,
                 uncorrelated: tuple[ScalarAggregate, ...], finish: Callable[[Row], Row | None],
                 output_columns: tuple[str, ...], description: StageDescription, group_width: int = 0):
        self.name, self.sums, self.value, self.op = name, sums, value, op
        self.uncorrelated, self.finish, self.group_width = uncorrelated, finish, group_width
        self.output_columns, self.description = output_columns, description

    def _output(self, state: IndexState | None) -> list[Row]:
        if state is None and not self.group_width:
            empty = self.empty_result()
            return [] if empty is None else [empty]
        vectors = {}
        if state is not None:
            v = self.value(tuple(agg.result(*acc) for agg, acc in zip(self.uncorrelated, state.uncorrelated, strict=True)))
            vectors = {group: tuple(range_sum(index, self.op, v) for index in indexes)
                       for group, indexes in state.indexes.items()}
        if self.group_width:
            return grouped_rows(self.finish, self.sums, vectors)
        row = self.result_row(vectors.get((), self.sums.zero()))
        return [] if row is None else [row]

    def process(self, key: tuple, state: IndexState | None, changes: list[Change]):
        before = self._output(state)
        if state is None:
            state = IndexState({}, [[0, 0] for _ in self.uncorrelated])
        make = HashAggregateIndex if self.op == "=" else RPAITree
        for change in changes:
            if change.port == 0:
                q, group, parts = change.row[0], change.row[1 : 1 + self.group_width], change.row[1 + self.group_width :]
                if q is None:
                    continue  # a NULL aggregate satisfies no comparison
                indexes = state.indexes.get(group)
                if indexes is None:
                    indexes = state.indexes[group] = [make() for _ in range(self.sums.width)]
                for index, part in zip(indexes, parts, strict=True):
                    if part:
                        index.add(exact(q), change.weight * part)
                if self.group_width and not len(indexes[0]):
                    del state.indexes[group]  # the group's last row left
            else:
                accumulate(state.uncorrelated[change.port - 1], self.uncorrelated[change.port - 1], change.row, change.weight)
        return state, diff_rows(before, self._output(state))

    def describe(self) -> StageDescription:
        return self.description


@attrs.define
class KeyIndexState:
    inner: list
    trees: dict  # group -> RPAI trees (one per required-sum component) keyed by v


class PerKeyIndexStage(KeyedStage):
    """TPC-H Q17's shape: keyed by the correlation key (a constant for a global threshold, PSP and
    Q22), the outer rows of each group in RPAI trees keyed by v; emits each group's contribution
    (its required sums over rows with ``v op q``) as ``group + sums`` rows, ``-old, +new``.
    """

    def __init__(self, name: str, outer_key: Compiled, inner_key: Compiled, value: Compiled, op: str,
                 correlated: ScalarAggregate, sums: RequiredSums, group: Compiled, output_columns: tuple[str, ...],
                 description: StageDescription):
        self.name, self.outer_key, self.inner_key = name, outer_key, inner_key
        self.value, self.op, self.correlated, self.sums, self.group = value, op, correlated, sums, group
        self.output_columns, self.description = output_columns, description

    def key_of(self, port: int, row: Row) -> tuple:
        return self.outer_key(row) if port == 0 else self.inner_key(row)

    def key_function(self, port: int):
        return self.outer_key if port == 0 else self.inner_key

    def _contributions(self, state: KeyIndexState | None) -> list[Row]:
        if state is None:
            return []
        q = self.correlated.result(*state.inner)
        if q is None:
            return []
        # rows with v op q, i.e. keys k = v with k op q: the mirrored range of range_sum
        mirrored = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "="}[self.op]
        out = []
        for group, trees in state.trees.items():
            vector = tuple(range_sum(tree, mirrored, q) for tree in trees)
            if vector[0]:
                out.append(group + vector)
        return out

    def process(self, key: tuple, state: KeyIndexState | None, changes: list[Change]):
        before = self._contributions(state)
        state = state or KeyIndexState([0, 0], {})
        for change in changes:
            if change.port == 0:
                v = self.value(change.row)
                if v is None:
                    continue  # a NULL v satisfies no comparison
                group = self.group(change.row)
                trees = state.trees.get(group)
                if trees is None:
                    trees = state.trees[group] = [RPAITree() for _ in range(self.sums.width)]
                for tree, part in zip(trees, self.sums.of(change.row, change.weight), strict=True):
                    if part:
                        tree.add(exact(v), part)
                if not len(trees[0]):
                    del state.trees[group]
            else:
                accumulate(state.inner, self.correlated, change.row, change.weight)
        empty = not state.trees and state.inner[1] == 0
        return (None if empty else state), diff_rows(before, self._contributions(state))

    def describe(self) -> StageDescription:
        return self.description


class SumVectorsStage(_GlobalResult, KeyedStage):
    """Adds the per-key contributions ``group + sums`` into each group's result row (keyed by the group,
    so it scales out by group; a constant for a global aggregate)."""

    def __init__(self, name: str, sums: RequiredSums, group_width: int, finish: Callable[[Row], Row | None],
                 output_columns: tuple[str, ...], description: StageDescription):
        self.name, self.sums, self.group_width, self.finish = name, sums, group_width, finish
        self.output_columns, self.description = output_columns, description

    def key_of(self, port: int, row: Row) -> tuple:
        return row[: self.group_width]

    def _rows(self, key: tuple, total: tuple) -> list[Row]:
        if not self.group_width:
            row = self.result_row(total)
            return [] if row is None else [row]
        return grouped_rows(self.finish, self.sums, {key: total})

    def process(self, key: tuple, state: tuple | None, changes: list[Change]):
        total = state if state is not None else self.sums.zero()
        before = self._rows(key, total)
        for change in changes:
            total = add_vectors(total, change.row[self.group_width :], change.weight)
        empty = self.group_width and total[0] == 0
        return (None if empty else total), diff_rows(before, self._rows(key, total))

    def describe(self) -> StageDescription:
        return self.description


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


class GeneralNestedStage(_GlobalResult, KeyedStage):
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
        if self.grouped:
            return grouped_rows(self.finish, self.sums, totals)
        row = self.result_row(totals.get((), self.sums.zero()))
        return [] if row is None else [row]

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
        for port, rows in by_port.items():  # inner rows first: new free keys below then see the updated bound maps
            for row, weight in consolidate(rows):  # deletes first: an index never loses a row it lacks
                self._inner(state, port - 1, row, weight)
        for change in changes:
            if change.port == 0:
                self._outer(state, change.row, change.weight)
        state.output = self._output(state)
        return state, diff_rows(before, state.output)

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
        entry = state.bound[i].setdefault(bound, [0, 0])
        entry[0] += total
        entry[1] += count
        if entry[1] == 0:
            del state.bound[i][bound]
        if spec.equalities:  # the one free key equal to the bound values, if any
            aggregate = None if None in bound else state.free[i].get(bound)
            affected = () if aggregate is None else (aggregate,)
        else:  # Algorithm 3, lines 14-17
            affected = [aggregate for free, aggregate in state.free[i].items() if spec.holds(free + bound) is True]
        for aggregate in affected:
            aggregate[0] += total
            aggregate[1] += count

    def _outer(self, state: GeneralState, row: Row, weight: int) -> None:
        key = self.outer_key(row)
        entry = state.results.setdefault(key, [self.sums.zero(), 0])
        entry[0] = add_vectors(entry[0], self.sums.of(row, weight))
        entry[1] += weight
        if entry[1] == 0:
            del state.results[key]
        for i, spec in enumerate(self.subqueries):
            if isinstance(spec, ScalarAggregate | ParameterizedIndex):
                continue  # read the outer rows only through other subqueries, or not at all
            free = spec.free_of(key)
            aggregate = state.free[i].get(free)
            if aggregate is None:  # Algorithm 3, lines 19-24: the new outer value's aggregate
                if spec.equalities:
                    sums = None if None in free else state.bound[i].get(free)
                    matching = () if sums is None else (sums,)
                else:
                    matching = [sums for bound, sums in state.bound[i].items() if spec.holds(free + bound) is True]
                aggregate = state.free[i][free] = [sum(t for t, _ in matching), sum(c for _, c in matching), 0]
            aggregate[2] += weight
            if aggregate[2] == 0:
                del state.free[i][free]

    def describe(self) -> StageDescription:
        return self.description
