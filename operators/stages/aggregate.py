"""Group-by aggregation as a keyed stage, keyed by the group (AJU §5 Theorem 14).

SUM, COUNT and AVG are ring aggregates: per group the stage keeps the row count and, per aggregate,
the running sum and the count of non-NULL arguments; a delete subtracts what its insert added, so
each change costs O(1) with no access to the group's other rows.

MIN, MAX and the DISTINCT aggregates are not rings: deleting the current minimum needs the next
value, and deleting a duplicate must not remove the value. For them the stage keeps the group's
argument values as value → multiplicity. A value takes part while its multiplicity is positive, so
only the changes that move a multiplicity across zero touch the rest of the state: COUNT/SUM/AVG
(DISTINCT) add or subtract that one value (O(1)); MIN/MAX add or remove it in a sorted list of the
present values (O(log n), n the distinct values of the group), whose ends are the answer.

The STDDEV/VARIANCE family is a ring too: its running "sum" is the exact payload (Σx, Σx²)
(operators/structures/moments.py), O(1) per change. The exact percentiles (MEDIAN, PERCENTILE,
PERCENTILE_CONT/DISC) keep every copy of the group's values in an order-statistic index
(operators/structures/order_statistics.py): O(log n) per change and per read, n the group's values.

The stage also applies what sits above the aggregate in SQL (HAVING, the select list), so it emits
the final result rows of its group: the old row retracted, the new one inserted.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable

import attrs
from sortedcontainers import SortedList

from operators.doubles import NAN, exact, exact_total, sum_value
from operators.stages.aggregate_source import ring_source
from operators.stages.average import average
from operators.stages.base import Change, KeyedStage, StageDescription
from operators.stages.source_text import ProgramText, SourceUnit
from operators.structures.moments import VARIANCE_FUNCTIONS, moments, variance
from operators.structures.order_statistics import percentile
from operators.zset import Changelog, Row, consolidate

ORDERED_FUNCTIONS = ("min", "max", "min_by", "max_by")
#: The ordered aggregates that answer with the least kept value (the others: the greatest).
LEAST_FUNCTIONS = ("min", "min_by")
#: max_by/min_by keep ``ordered_by``'s triples and answer with the value inside.
_BY_FUNCTIONS = ("min_by", "max_by")
#: Spark's exact percentiles; their ``AggregateSpec.parameters`` are (fraction, descending order).
PERCENTILE_FUNCTIONS = ("median", "percentile", "percentile_cont", "percentile_disc")
_COUNTED, _SUMMED, _SUMMED_DOUBLE, _KEPT = "counted", "summed", "summed double", "kept"
_MOMENTS = "moments"  # summed as the (Σx, Σx²) payload of the STDDEV/VARIANCE family
_UNSET = object()  # (``empty_result`` not computed yet)


@attrs.frozen
class AggregateSpec:
    """One aggregate: ``func`` in sum/count/avg/min/max/max_by/min_by, the variance family
    (VARIANCE_FUNCTIONS) or the percentiles (PERCENTILE_FUNCTIONS); ``argument`` None for COUNT(*)
    (for max_by/min_by ``ordered_by``'s, for count(DISTINCT a, b) ``all_present``'s);
    ``distinct`` aggregates each distinct non-NULL argument value once; ``double``: the argument is a
    DOUBLE, whose sum is kept exactly (``operators.doubles.exact``: an int scaled by 2**1074, NaN and
    infinite terms counted apart) and rounded once when read, so deletes leave no float residue;
    ``parameters``: a percentile's (fraction, descending order)."""

    func: str
    argument: Callable[[Row], object] | None = attrs.field(eq=False)
    distinct: bool = False
    double: bool = False
    parameters: tuple = ()

    @property
    def keeps_values(self) -> bool:
        """Whether a delete needs the group's other values (MIN, MAX, percentiles, DISTINCT): not a ring."""
        return self.func in ORDERED_FUNCTIONS or self.func in PERCENTILE_FUNCTIONS or self.distinct

    @property
    def label(self) -> str:
        distinct = " DISTINCT" if self.distinct and self.func not in ORDERED_FUNCTIONS else ""
        if self.func in PERCENTILE_FUNCTIONS and self.func != "median":
            fraction, descending = self.parameters
            return f"{self.func.upper()}{distinct}({fraction:g}{' DESC' if descending else ''})"
        return f"{self.func.upper()}{distinct}"

    def new_values(self) -> ValueCounts:
        if self.func in PERCENTILE_FUNCTIONS:
            return RankedValues(self.distinct, *self.parameters)
        if self.func in ORDERED_FUNCTIONS:
            return OrderedValues()
        if self.func in VARIANCE_FUNCTIONS:
            return DistinctValues(True, moments)
        return DistinctValues(self.func != "count", exact, exact_total) if self.double else DistinctValues(self.func != "count")


def ordered_by(value: Callable[[Row], object], ordering: Callable[[Row], object]) -> Callable[[Row], object]:
    """max_by(value, ordering)'s kept argument of a row: ``(ordering, value is not NULL, value)``, or
    None (the row is skipped, as Spark skips it) when the ordering is NULL.

    The triples are ordered by the ordering, then by the value with NULL first: Spark leaves the
    value of tied orderings to whichever row it meets last (not a function of the input), where
    this is. max_by answers with the greatest triple's value, min_by with the least's, so on a tie
    max_by takes the greatest value and min_by the least (a NULL value first). The middle flag
    keeps a NULL value from being compared with a value."""
    def kept(row: Row) -> object:
        order = ordering(row)
        if order is None:
            return None
        shown = value(row)
        return order, shown is not None, shown
    return kept


def all_present(arguments: tuple[Callable[[Row], object], ...]) -> Callable[[Row], object]:
    """count(DISTINCT a, b, ...)'s kept argument of a row: the tuple of its values, None (skipped,
    as Spark skips it) when any of them is NULL."""
    def kept(row: Row) -> object:
        values = tuple(argument(row) for argument in arguments)
        return None if None in values else values
    return kept


class ValueCounts(ABC):
    """A multiset of argument values as value → multiplicity; a value is present while it is positive.

    A multiplicity may dip below zero within a batch (a delete can arrive before its insert). Only
    crossings of zero are reported to the subclass, so the state after a batch does not depend on
    the order of its changes.
    """

    __slots__ = ("multiplicity",)

    def __init__(self) -> None:
        self.multiplicity: dict[object, int] = {}

    def _counted(self, value: object, weight: int) -> tuple[int, int]:
        """``value``'s multiplicity before and after adding ``weight`` (a zero multiplicity is no entry)."""
        before = self.multiplicity.get(value, 0)
        after = before + weight
        if after:
            self.multiplicity[value] = after
        else:
            del self.multiplicity[value]
        return before, after

    def add(self, value: object, weight: int) -> None:
        before, after = self._counted(value, weight)
        if before <= 0 < after:
            self._appeared(value)
        elif after <= 0 < before:
            self._vanished(value)

    @abstractmethod
    def _appeared(self, value: object) -> None:
        """``value``'s multiplicity became positive."""

    @abstractmethod
    def _vanished(self, value: object) -> None:
        """``value``'s multiplicity is no longer positive."""

    @abstractmethod
    def result(self, func: str) -> object:
        """The aggregate ``func`` over the present values (the group has at least one)."""


def _same(value: object) -> object:
    return value


class DistinctValues(ValueCounts):
    """COUNT/SUM/AVG/STDDEV/VARIANCE(DISTINCT): the number of present values and, when ``summed``,
    the sum of their ``term``s (the value, a DOUBLE's ``exact`` int, or its (x, x²) payload for the
    variance family), whose value ``read`` gives."""

    __slots__ = ("summed", "term", "read", "present", "total")

    def __init__(self, summed: bool, term: Callable[[object], object] = _same,
                 read: Callable[[object], object] = _same) -> None:
        super().__init__()
        self.summed = summed
        self.term, self.read = term, read
        self.present = 0
        self.total = None

    def _appeared(self, value: object) -> None:
        self.present += 1
        if self.summed:
            term = self.term(value)
            self.total = term if self.total is None else self.total + term

    def _vanished(self, value: object) -> None:
        self.present -= 1
        if self.summed:
            # no float residue once empty
            self.total = self.total + self.term(value) * -1 if self.present else None

    def result(self, func: str) -> object:
        if func == "count":
            return self.present
        if not self.present:
            return None
        if func in VARIANCE_FUNCTIONS:
            return variance(func, self.total, self.present)
        total = self.read(self.total)
        return average(total, self.present) if func == "avg" else total


class OrderedValues(ValueCounts):
    """MIN/MAX: the present values in a sorted list (duplicates share one entry)."""

    __slots__ = ("ordered",)

    def __init__(self) -> None:
        super().__init__()
        self.ordered = SortedList()

    def _appeared(self, value: object) -> None:
        self.ordered.add(value)

    def _vanished(self, value: object) -> None:
        self.ordered.remove(value)

    def result(self, func: str) -> object:
        if not self.ordered:
            return None
        return extreme_value(func, self.ordered[0] if func in LEAST_FUNCTIONS else self.ordered[-1])


def extreme_value(func: str, kept: object) -> object:
    """The answer of ordered aggregate ``func`` whose extreme kept argument is ``kept`` (not None)."""
    return kept[2] if func in _BY_FUNCTIONS else kept


class RankedValues(ValueCounts):
    """MEDIAN/PERCENTILE*: every present copy of the values (each distinct value once for DISTINCT)
    in an order-statistic index, read at the percentile's ranks (operators/structures/order_statistics.py).

    A value's copies in the index are its multiplicity when positive, else none, so the index after
    a batch does not depend on the order of its changes either."""

    __slots__ = ("ordered", "distinct", "fraction", "descending")

    def __init__(self, distinct: bool, fraction: float, descending: bool) -> None:
        super().__init__()
        self.ordered = SortedList()
        self.distinct, self.fraction, self.descending = distinct, fraction, descending

    def add(self, value: object, weight: int) -> None:
        if self.distinct:
            super().add(value, weight)
            return
        before, after = self._counted(value, weight)
        for _ in range(max(after, 0) - max(before, 0)):
            self.ordered.add(value)
        for _ in range(max(before, 0) - max(after, 0)):
            self.ordered.remove(value)

    def _appeared(self, value: object) -> None:
        self.ordered.add(value)

    def _vanished(self, value: object) -> None:
        self.ordered.remove(value)

    def result(self, func: str) -> object:
        return percentile(self.ordered, self.fraction, func == "percentile_disc", self.descending)


@attrs.define
class GroupState:
    rows: int
    group: Row
    #: Per aggregate: the running sum (ring aggregates), the argument's ``ValueCounts`` (the others),
    #: or None while the group has no non-NULL argument.
    values: list
    #: Per aggregate: the number of non-NULL arguments (of rows, for COUNT(*)).
    counts: list[int]


def aggregate_value(spec: AggregateSpec, value: object, count: int) -> object:
    """The aggregate's value in a result row; a NaN sum or average is the one NaN (operators/doubles.py),
    so the row retracted later is equal to the row emitted now."""
    if count == 0:
        return 0 if spec.func == "count" else None
    if spec.keeps_values:
        result = value.result(spec.func)
    elif spec.func == "count":
        return count
    elif spec.func in VARIANCE_FUNCTIONS:
        result = variance(spec.func, value, count)
    else:
        total = exact_total(value) if spec.double else sum_value(value)
        result = average(total, count) if spec.func == "avg" else total
    return NAN if result != result else result


class GroupAggregateStage(KeyedStage):
    """Keyed by the group-by values; emits finished result rows (after HAVING and the select list)."""

    operator = "GroupAggregate"

    @property
    def codegen_kind(self) -> str:
        """The program's ring template sums in place; kept values (MIN/MAX, DISTINCT) run through ``process``."""
        return "generic" if self._keeps_values else "ring"

    def batch_source(self, program: ProgramText, unit: SourceUnit) -> list[str]:
        """The compiled program's ring function body (operators/stages/aggregate_source.py)."""
        return ring_source(program, unit, self.where, self.group_by, self.aggregates)

    def __init__(self, group_names: tuple[str, ...], group_by: tuple[Callable[[Row], object], ...],
                 aggregates: tuple[AggregateSpec, ...], finish: Callable[[Row], Row | None],
                 output_columns: tuple[str, ...], where: Callable[[Row], bool] | None = None):
        self.name = f"aggregate by {', '.join(group_names) or '()'}"
        self.group_names = group_names
        self.where = where  # the join's residual (non-equality) predicate: failing rows count nowhere
        self.group_by = group_by
        self.aggregates = aggregates
        self.finish = finish  # aggregate row (groups + values) → result row, or None if HAVING fails
        self.output_columns = output_columns
        # per aggregate (argument, how a change updates it), read once per change: the hot loop
        self._updates = tuple(
            (spec.argument, _KEPT if spec.keeps_values else _COUNTED if spec.func == "count"
             else _MOMENTS if spec.func in VARIANCE_FUNCTIONS else _SUMMED_DOUBLE if spec.double else _SUMMED)
            for spec in aggregates
        )
        self._keeps_values = any(spec.keeps_values for spec in aggregates)

    def key_of(self, port: int, row: Row) -> tuple:
        return tuple(g(row) for g in self.group_by)

    def empty_result(self) -> Row | None:
        """The row a global aggregate (no GROUP BY) shows over empty input: COUNT 0, SUM/MIN NULL, or
        the ``ErrorRow`` of its select list's error (0/0: operators/held_errors.py). Computed once:
        every batch that empties or refills the group retracts or emits this same row."""
        if self.group_by:
            return None
        empty = self.__dict__.get("_empty", _UNSET)
        if empty is _UNSET:
            empty = self._empty = self.finish(tuple(self._values(self._new_state(()))))
        return empty

    def start_output(self) -> Changelog:
        empty = self.empty_result()
        return [] if empty is None else [(empty, 1)]

    def _new_state(self, group: Row) -> GroupState:
        return GroupState(0, group, [None] * len(self.aggregates), [0] * len(self.aggregates))

    def _values(self, state: GroupState) -> list:
        return [aggregate_value(spec, value, count)
                for spec, value, count in zip(self.aggregates, state.values, state.counts, strict=True)]

    def _result(self, state: GroupState | None) -> Row | None:
        if state is None or state.rows == 0:
            return self.empty_result()
        return self.finish(state.group + tuple(self._values(state)))

    def process(self, key: tuple, state: GroupState | None, changes: list[Change]) -> tuple[GroupState | None, Changelog]:
        """Atomic (operators/stages/base.py): the running sums and counts go into a copy of the group's
        few scalars, so the old state stays as it was; the one part shared with it, the value
        multisets of MIN/MAX/DISTINCT, is logged as it changes and put back if anything raises."""
        before = self._result(state)
        if state is None:
            new = self._new_state(key)
        else:
            new = GroupState(state.rows, state.group, list(state.values), list(state.counts))
        kept_log: list | None = [] if self._keeps_values else None
        try:
            self._accumulate(new, changes, kept_log)
            if new.rows < 0:
                raise RuntimeError(f"{self.name}: group {key} has a negative row count (a delete without its insert)")
            for i, count in enumerate(new.counts):
                if count == 0:
                    new.values[i] = None  # forget float residue and empty multisets once no value is left
            after = self._result(new)
        except BaseException:
            for values, value, weight in reversed(kept_log or ()):
                values.add(value, -weight)
            raise
        out = ([(before, -1)] if before is not None else []) + ([(after, 1)] if after is not None else [])
        return (new if new.rows else None), consolidate(out)

    def _accumulate(self, state: GroupState, changes: list[Change], kept_log: list | None) -> None:
        """Add ``changes`` to ``state``; each change of a value multiset is appended to ``kept_log``."""
        values, counts = state.values, state.counts
        for change in changes:
            row, weight = change.row, change.weight
            if self.where is not None and not self.where(row):
                continue
            state.rows += weight
            for i, (argument, update) in enumerate(self._updates):
                if argument is None:
                    counts[i] += weight
                    continue
                value = argument(row)
                if value is None:
                    continue
                counts[i] += weight
                if update == _SUMMED or update == _SUMMED_DOUBLE or update == _MOMENTS:
                    if update == _SUMMED_DOUBLE:
                        value = exact(value)  # the exact int Σx·2**1074, NaN/±Infinity counted (operators/doubles.py)
                    elif update == _MOMENTS:
                        value = moments(value)
                    values[i] = value * weight if values[i] is None else values[i] + value * weight
                elif update == _KEPT:
                    self._keep(values, i, value, weight, kept_log)

    def _keep(self, values: list, i: int, value: object, weight: int, kept_log: list | None) -> None:
        """Add ``weight`` copies of ``value`` to aggregate ``i``'s multiset, logged in ``kept_log``."""
        if values[i] is None:
            values[i] = self.aggregates[i].new_values()
        values[i].add(value, weight)
        kept_log.append((values[i], value, weight))

    def revert(self, key: tuple, old_state: GroupState, new_state: GroupState | None, changes: list[Change]) -> GroupState:
        """The old state's scalars were never touched; only its value multisets take the changes back
        (exact: integer multiplicities, and DOUBLE sums are exact too)."""
        if self._keeps_values:
            # the negated changes through a throwaway copy of the scalars reach the shared multisets
            shadow = GroupState(old_state.rows, old_state.group, list(old_state.values), list(old_state.counts))
            self._accumulate(shadow, [Change(c.port, c.row, -c.weight) for c in changes], [])
        return old_state

    def describe(self) -> StageDescription:
        ordered = any(s.func in ("min", "max") for s in self.aggregates)
        by = any(s.func in _BY_FUNCTIONS for s in self.aggregates)
        ranked = any(s.func in PERCENTILE_FUNCTIONS for s in self.aggregates)
        distinct = any(s.keeps_values and s.func not in ORDERED_FUNCTIONS + PERCENTILE_FUNCTIONS for s in self.aggregates)
        second_moments = any(s.func in VARIANCE_FUNCTIONS and not s.distinct for s in self.aggregates)
        state = ["row count, sums, non-NULL counts"]
        why = []
        if second_moments:
            state.append("per STDDEV/VARIANCE the exact (Σx, Σx²)")
        if ordered:
            state.append("per MIN/MAX a sorted multiset of its values")
            why.append("MIN/MAX are not rings (deleting the minimum needs the next value): values kept in order")
        if by:
            state.append("per MAX_BY/MIN_BY a sorted multiset of its (ordering, value) pairs")
            why.append("MAX_BY/MIN_BY are not rings (deleting the row of the largest ordering needs the next "
                       "one): pairs kept in order of the ordering")
        if ranked:
            state.append("per percentile every value in an order-statistic index (sorted sublists with positional counts)")
            why.append("a percentile reads the values at its ranks: each copy kept in order, ranks found in O(log n)")
        if distinct:
            state.append("per DISTINCT aggregate value → multiplicity")
            why.append("a DISTINCT aggregate changes only when a value's multiplicity crosses zero")
        logarithmic = [what for what, kept in (("the distinct MIN/MAX values", ordered),
                                               ("the MAX_BY/MIN_BY pairs", by),
                                               ("the percentile's values", ranked)) if kept]
        cost = (f"O(log n) per join change, n {' or '.join(logarithmic)} of the group; O(1) for the others"
                if logarithmic else "O(1) per join change")
        ring = "SUM/COUNT form a ring: a delete subtracts its insert"
        if second_moments:
            ring += "; STDDEV/VARIANCE are read off the ring payload (Σx, Σx²), kept exactly"
        return self._description("join result changes", "per group: " + "; ".join(state), cost,
                                 "; ".join(why or [ring]) + " (AJU Thm 14)")

    def _description(self, inputs: str, state: str, update_cost: str, why: str) -> StageDescription:
        """EXPLAIN's row for this stage: the operator with its aggregates and the key, with the rest given."""
        labels = ", ".join(dict.fromkeys(spec.label for spec in self.aggregates))
        return StageDescription(operator=f"{self.operator} ({labels})", inputs=inputs, state=state,
                                key=", ".join(self.group_names) or "constant (does not scale out)",
                                update_cost=update_cost, why=why)


class RingAggregateStage(GroupAggregateStage):
    """A ``GroupAggregateStage`` whose aggregates are all rings (SUM, COUNT, AVG without DISTINCT)."""

    operator = "RingAggregate"

    def __init__(self, group_names: tuple[str, ...], group_by: tuple[Callable[[Row], object], ...],
                 aggregates: tuple[AggregateSpec, ...], finish: Callable[[Row], Row | None],
                 output_columns: tuple[str, ...], where: Callable[[Row], bool] | None = None):
        not_rings = [spec.label for spec in aggregates if spec.keeps_values]
        if not_rings:
            raise ValueError(f"{', '.join(not_rings)} is not a ring aggregate; use a GroupAggregateStage")
        super().__init__(group_names, group_by, aggregates, finish, output_columns, where)
