"""Rows extended by the values of uncorrelated scalar subqueries: ``R × S1 × ... × Sn``, each S a one-row view.

An uncorrelated scalar subquery in a select list (``SUM(x) / (SELECT SUM(x) FROM t)``) is one value
for every row: the product of the rows with a relation of exactly one row (none: the value is NULL,
as Spark reads a scalar subquery with no row). Keyed by a constant, the stage keeps the rows R (a
multiset) and each subquery's current row, and emits

    Δ(R × S) = ΔR × S          when no S changed (O(1) per row change),
             = −(R × S) + (R' × S')  when one did (O(|R|): every row carries the new value),

R' being R after the batch. The second case is inherent to the query: every result row shows the
value, so every one changes with it (EXPLAIN says so).
"""

from __future__ import annotations

from collections import Counter

import attrs

from operators.stages.base import Change, ConstantKey, KeyedStage, StageDescription
from operators.zset import Changelog, apply_changes, consolidate


@attrs.define
class ScalarProductState:
    rows: Counter  # R
    scalars: list[Counter]  # per subquery, its current row(s): at most one (a global aggregate or OneRowStage)


class ScalarProductStage(ConstantKey, KeyedStage):
    """R's rows on port ``ROWS``, subquery i's one-column row on port ``ROWS + 1 + i``; emits R's rows
    with every subquery's value appended."""

    ROWS = 0

    def __init__(self, scalars: int, output_columns: tuple[str, ...], description: StageDescription):
        self.name = "scalar product"
        self.scalars, self.output_columns, self.description = scalars, output_columns, description

    def process(self, key: tuple, state: ScalarProductState | None,
                changes: list[Change]) -> tuple[ScalarProductState | None, Changelog]:
        state = state or ScalarProductState(Counter(), [Counter() for _ in range(self.scalars)])
        before = _values(state.scalars)
        for port, scalar in enumerate(state.scalars, start=self.ROWS + 1):
            apply_changes(scalar, [(c.row, c.weight) for c in changes if c.port == port])
        after = _values(state.scalars)
        delta = consolidate((c.row, c.weight) for c in changes if c.port == self.ROWS)
        if after == before:
            out = [(row + after, weight) for row, weight in delta]
        else:  # every row carries the new values: all of R before out, all of R after in
            out = [(row + before, -count) for row, count in state.rows.items()]
        apply_changes(state.rows, delta)
        if after != before:
            out += [(row + after, count) for row, count in state.rows.items()]
        empty = not state.rows and not any(state.scalars)
        return (None if empty else state), consolidate(out)

    def describe(self) -> StageDescription:
        return self.description


def _values(scalars: list[Counter]) -> tuple:
    """Each subquery's value: its one row's column, NULL while it has no row."""
    return tuple(next(iter(scalar))[0] if scalar else None for scalar in scalars)
