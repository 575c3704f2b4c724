"""``ScalarProduct``: uncorrelated scalar subqueries of a select list, a product with one-row views."""

from __future__ import annotations

import functools

import attrs

from planner.ir.expressions import Column
from planner.ir.guarantee import Guarantee
from planner.ir.logical import LogicalPlan


@attrs.frozen
class ScalarProduct(LogicalPlan):
    """The rows of ``child``, each extended by the one value of every uncorrelated plan of ``scalars``,
    as the column of the same position in ``names`` (NULL while that plan has no row): an uncorrelated
    scalar subquery in a select list, a product with one-row relations. When a value changes every
    row changes with it (operators/stages/scalar_product.py)."""

    child_fields = ("child", "scalars")
    maintained = True
    #: one value for every row: when it changes, every row of the result changes (inherent to the query)
    update_cost = "O(1) per row change; O(rows) when a subquery's value changes"
    names: tuple[str, ...]
    child: LogicalPlan
    scalars: tuple[LogicalPlan, ...]

    @functools.cached_property
    def output(self) -> tuple[Column, ...]:
        return self.child.output + tuple(Column(None, name) for name in self.names)

    def own_guarantee(self) -> Guarantee:
        return Guarantee.stated(cost=self.update_cost)
