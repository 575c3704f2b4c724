"""What the nested-aggregate stages share: the outer aggregates as *required sums* (RPAI Algorithm 4's
``requiredSums``), a scalar subquery's aggregate, and the emission of a global or grouped result.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from operators.doubles import canonical
from operators.stages.average import average
from operators.zset import Changelog, Compiled, Row, consolidate


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
                out.append(canonical(average(total, count) if func == "avg" else total))  # the one NaN
        return tuple(out)


def add_vectors(a: tuple, b: tuple, sign: int = 1) -> tuple:
    return tuple(x + sign * y for x, y in zip(a, b, strict=True))


@attrs.frozen
class ScalarAggregate:
    """One scalar aggregate subquery: its aggregate function, argument and the ``value`` built on it."""

    func: str
    argument: Compiled | None = attrs.field(eq=False)
    value: Compiled = attrs.field(eq=False)  # over the one-column row (aggregate,)

    def contribution(self, row: Row, weight: int) -> tuple:
        value = 1 if self.argument is None else self.argument(row)
        return (0, 0) if value is None else (weight * value, weight)

    def result(self, total, count):
        if self.func == "count":
            aggregate = count
        elif count == 0:
            aggregate = None
        else:
            aggregate = canonical(average(total, count) if self.func == "avg" else total)  # the one NaN
        return self.value((aggregate,))


def accumulate(acc: list, aggregate: ScalarAggregate, row: Row, weight: int) -> None:
    """Add one row's contribution to a subquery aggregate's ``[Σ argument, count]``."""
    total, count = aggregate.contribution(row, weight)
    acc[0] += total
    acc[1] += count


class GlobalResult:
    """Shared by the stages that emit the result rows of the outer aggregate: one row for a global
    aggregate (keyed by a constant), or one per group."""

    sums: RequiredSums
    finish: Callable[[Row], Row | None]
    #: GROUP BY: a row per group that has rows; else the one row of a global aggregate
    grouped: bool

    def result_row(self, vector) -> Row | None:
        return self.finish(self.sums.values(vector))

    def result_rows(self, vectors: dict) -> list[Row]:
        """The result: a row per group that has rows, or the global aggregate's one row (also over
        no rows: COUNT 0, SUM NULL); a row HAVING drops is left out."""
        if self.grouped:
            return grouped_rows(self.finish, self.sums, vectors)
        row = self.result_row(vectors.get((), self.sums.zero()))
        return [] if row is None else [row]

    def start_output(self) -> Changelog:
        """A global aggregate's row over no rows (COUNT 0, SUM NULL); a grouped one has none."""
        row = None if self.grouped else self.result_row(self.sums.zero())
        return [] if row is None else [(row, 1)]

    def key_of(self, port: int, row: Row) -> tuple:
        return ()


class CorrelationKeyed:
    """Shared by the stages keyed by a subquery's correlation key: outer rows on port 0, the
    subquery's inner rows on port 1, each with its own function reading the key."""

    outer_key: Compiled
    inner_key: Compiled

    def key_of(self, port: int, row: Row) -> tuple:
        return self.outer_key(row) if port == 0 else self.inner_key(row)

    def key_function(self, port: int) -> Compiled:
        return self.outer_key if port == 0 else self.inner_key


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
