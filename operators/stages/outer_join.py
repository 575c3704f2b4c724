"""The outer join by change propagation: ``L ⟕ R``, ``L ⟖ R``, ``L ⟗ R`` (and ``L ⋈ R``) over any two
maintained inputs, both materialized and keyed by the equi-join key, each row of a preserved side
with its match count.

Law (Griffin & Kumar, "Algebraic change propagation for semijoin and outerjoin queries"; Larson &
Zhou, "Efficient maintenance of materialized outer-join views"): an outer join is its inner join
plus the padded anti-join of each preserved side,

    L ⟕_θ R = (L ⋈_θ R) ⊎ ((L ▷_θ R) × {NULL, ...}),   L ▷_θ R = {l ∈ L : m(l) = 0},
    m(l) = Σ_{r ∈ R, θ(l, r)} mult(r),

so each part is maintained on its own. The inner part is the change-propagation join's
ΔL ⋈ R + L' ⋈ ΔR. The padded part moves only where a match count crosses 0: a change (r, w) moves
m(l) by w for each l it matches, and l's padded copy is retracted when m(l) leaves 0 (the row turns
matched) and re-inserted when it returns to 0 (matched back to padded); a change (l, w) is padded
iff m(l) = 0. ``⟖`` is the mirror image, ``⟗`` both at once.

Per key the stage keeps each side's rows as a multiset. With no condition beyond the key's
equalities, every row of a key matches every row of the other side, so m(l) is the other side's
row count under the key: one total per side and key. With a further condition θ (``ON a.k = b.k
AND a.x < b.y``), each row of a preserved side keeps its own count. Either way a change costs the
matching rows on the other side, as the inner join's delta does, plus the rows whose padding turns.

Changes are applied one at a time, each an exact delta of the result over Z-sets, so the key's
output is the same whatever order its changes arrive in (Spark's micro-batches are unordered) and
the emitted changes are consolidated. A row whose key holds a NULL matches nothing (``NULL = x`` is
never true): on a preserved side it passes straight through, padded; otherwise it is dropped.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import attrs

from operators.stages.base import Change, KeyedStage, StageDescription, key_getter
from operators.zset import Changelog, Row

KINDS = ("inner", "left", "right", "full")


@attrs.define
class OuterJoinState:
    """One key's rows of each side (row → multiplicity), their totals, and (with a condition θ) the
    match count of each row of a preserved side."""

    rows: tuple[Counter, Counter] = attrs.field(factory=lambda: (Counter(), Counter()))
    totals: list[int] = attrs.field(factory=lambda: [0, 0])
    matches: tuple[dict, dict] = attrs.field(factory=lambda: ({}, {}))


class OuterJoinStage(KeyedStage):
    LEFT, RIGHT = 0, 1

    def __init__(self, name: str, kind: str, keys: tuple[tuple[int, ...], tuple[int, ...]],
                 widths: tuple[int, int], output_columns: tuple[str, ...], description: StageDescription,
                 condition: Callable[[Row], bool] | None = None):
        if kind not in KINDS:
            raise ValueError(f"unknown join kind {kind!r}")
        self.name, self.kind, self.keys, self.widths = name, kind, keys, widths
        self.output_columns, self.description, self.condition = output_columns, description, condition
        #: which sides are preserved: their rows without a partner show padded with NULLs
        self.preserved = (kind in ("left", "full"), kind in ("right", "full"))
        self._nulls = ((None,) * widths[0], (None,) * widths[1])
        self._key = (key_getter(keys[0]), key_getter(keys[1]))

    def __getstate__(self):
        state = dict(self.__dict__)
        del state["_key"]
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._key = (key_getter(self.keys[0]), key_getter(self.keys[1]))

    def key_of(self, port: int, row: Row) -> tuple:
        return tuple(self._key[port](row))

    def key_function(self, port: int):
        return self._key[port]

    def process(self, key: tuple, state: OuterJoinState | None, changes: list[Change]) -> tuple[OuterJoinState | None, Changelog]:
        out: Counter = Counter()
        if None in key:  # SQL's = is never true of a NULL: the row matches nothing and is not kept
            for port, row, weight in changes:
                if self.preserved[port]:
                    out[self._padded(port, row)] += weight
            return state, [(row, weight) for row, weight in out.items() if weight]
        state = state or OuterJoinState()
        done: list[Change] = []
        try:
            for change in changes:
                self._apply(state, change.port, change.row, change.weight, out)
                done.append(change)
        except BaseException:
            # atomic per key: the changes applied so far are taken back (each evaluates the condition on
            # the pairs it already did, so this cannot raise), then the error goes on
            for port, row, weight in reversed(done):
                self._apply(state, port, row, -weight, Counter())
            raise
        return (state if state.rows[0] or state.rows[1] else None), [(row, weight) for row, weight in out.items() if weight]

    def _pair(self, port: int, row: Row, other: Row) -> Row:
        return row + other if port == self.LEFT else other + row

    def _padded(self, port: int, row: Row) -> Row:
        return row + self._nulls[1] if port == self.LEFT else self._nulls[0] + row

    def _apply(self, state: OuterJoinState, port: int, row: Row, weight: int, out: Counter) -> None:
        """One change ``(row, weight)`` on ``port``: its exact delta of the result into ``out``, then
        into the state. Every condition is evaluated before the state is touched."""
        other = 1 - port
        condition = self.condition
        if condition is None:
            partners = list(state.rows[other].items())
        else:
            partners = [(o, count) for o, count in state.rows[other].items() if condition(self._pair(port, row, o))]
        # the inner part: Δ ⋈ the other side
        for o, count in partners:
            out[self._pair(port, row, o)] += weight * count
        # the change's own padded copy, while it has no partner
        matched = state.totals[other] if condition is None else sum(count for _, count in partners)
        if self.preserved[port] and matched == 0:
            out[self._padded(port, row)] += weight
        # the other side's rows whose match count the change moves across 0
        if self.preserved[other]:
            if condition is None:
                before, after = state.totals[port], state.totals[port] + weight
                if (before == 0) != (after == 0):
                    sign = 1 if after == 0 else -1
                    for o, count in state.rows[other].items():
                        out[self._padded(other, o)] += sign * count
            else:
                counts = state.matches[other]
                for o, count in partners:
                    before = counts[o]
                    counts[o] = before + weight
                    if (before == 0) != (before + weight == 0):
                        out[self._padded(other, o)] += count if before + weight == 0 else -count
        # the state: the row's multiplicity, its side's total and (with θ) its match count
        rows = state.rows[port]
        multiplicity = rows[row] + weight
        if multiplicity:
            rows[row] = multiplicity
            if condition is not None and self.preserved[port]:
                state.matches[port][row] = matched
        else:
            del rows[row]
            state.matches[port].pop(row, None)
        state.totals[port] += weight

    def describe(self) -> StageDescription:
        return self.description
