"""The ``OuterJoin`` maintenance node: a LEFT, RIGHT or FULL OUTER JOIN of any two maintained
inputs (relations, joins, derived tables, other outer joins), maintained by change propagation
with per-key match counts (operators/stages/outer_join.py states the law).

The foreign-key strategy keeps a LEFT JOIN of two relations along one foreign key (a live-tuple
lookup, O(1) per change); everything else a user writes with outer joins (chains of three or more
relations, a derived table on either side, RIGHT and FULL, ON conditions beyond the keys, a WHERE
over the padded rows) becomes this node (rules/outer_join.py). ``kind`` ``inner`` is an inner join
with an outer join for a side (``a LEFT JOIN b ... JOIN c``), which cannot flatten into a join graph.
"""

from __future__ import annotations

import functools

import attrs

from planner.ir.expressions import Column, Expr
from planner.ir.guarantee import Guarantee
from planner.ir.logical import LogicalPlan

#: What one change costs, per preserved side and condition (EXPLAIN's words).
OUTER_JOIN_COST = ("O(matching rows on the other side + preserved rows whose padding turns) per change: the rows "
                   "of a key turn padded or matched when its match count moves between 0 and not 0")
OUTER_JOIN_COST_THETA = ("O(rows of the key on the other side + preserved rows whose padding turns) per change: the ON "
                         "condition is tested on each pair, and each preserved row keeps its own match count")

SYMBOLS = {"left": "⟕", "right": "⟖", "full": "⟗", "inner": "⋈"}


@attrs.frozen
class OuterJoin(LogicalPlan):
    """``σ_residual(left ⟕/⟖/⟗/⋈ right)`` on the pairs ``on`` (equal columns, one of each side: the
    stage's key; none: a constant key) and ``condition`` (the rest of ON, tested on each pair).

    ``residual`` is a WHERE above the join, tested on its result rows, padded ones included
    (``WHERE r.x > 5 OR r.x IS NULL``): a selection is linear, so it filters the join's changes.
    """

    child_fields = ("left", "right")
    variant_field = "kind"
    maintained = True
    kind: str
    on: tuple[tuple[Column, Column], ...]
    condition: Expr | None
    left: LogicalPlan
    right: LogicalPlan
    residual: Expr | None = None

    @functools.cached_property
    def output(self) -> tuple[Column, ...]:
        return self.left.output + self.right.output

    def own_guarantee(self) -> Guarantee:
        joined = "inner join over an outer join" if self.kind == "inner" else self.kind.upper() + " OUTER JOIN"
        return Guarantee.stated(f"{joined} by change propagation with per-key match counts",
                                cost=OUTER_JOIN_COST_THETA if self.condition is not None else OUTER_JOIN_COST)

    @property
    def preserved(self) -> tuple[bool, bool]:
        """Whether the left and the right side's rows without a partner show, padded with NULLs."""
        return self.kind in ("left", "full"), self.kind in ("right", "full")
