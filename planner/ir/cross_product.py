"""The maintenance node of a global aggregate over a cross product of relations (RPAI §4.3's
multi-relation form; PSP): the sum over the product factors into a product of per-relation sums,
each part a one-row aggregate query maintained by whatever strategy fits it."""

from __future__ import annotations

import functools

import attrs

from planner.ir.expressions import Column
from planner.ir.guarantee import Guarantee
from planner.ir.logical import LogicalPlan
from planner.ir.notation import notation_value


@notation_value
@attrs.frozen
class ProductTerm:
    """``coefficient × Π part[column]``: one monomial of an aggregate argument split across relations."""

    coefficient: float
    factors: tuple[tuple[int, str], ...]


@attrs.frozen
class CrossProductAggregate(LogicalPlan):
    """A global SUM/COUNT/AVG over a cross product of relations with per-relation conditions (RPAI
    §4.3's multi-relation form ``v1 θ q_R1 AND ... AND vn θ q_Rn``; PSP).

    ``Σ_{(a,b) ∈ A'×B'} f(a)·g(b) = Σ_{A'} f · Σ_{B'} g``: each part is a one-row aggregate query over
    one relation (its count ``_n`` and the sums ``_f<i>`` of its factors), maintained by whatever
    strategy fits it; ``sums[k]`` lists the terms of the k-th outer aggregate, ``funcs[k]`` its
    function (sum, count, avg), ``names[k]`` its output name.
    """

    child_fields = ("parts",)
    maintained = True
    funcs: tuple[str, ...]
    names: tuple[str, ...]
    sums: tuple[tuple[ProductTerm, ...], ...]
    parts: tuple[LogicalPlan, ...]
    #: GROUP BY columns, all of one relation: that part (``grouped_part``) is grouped the same way (MST)
    group_names: tuple[str, ...] = ()
    grouped_part: int = -1

    @functools.cached_property
    def output(self) -> tuple[Column, ...]:
        return tuple(Column(None, name) for name in (*self.group_names, *self.names))

    def own_guarantee(self) -> Guarantee:
        return Guarantee.stated(cost="O(terms) per batch")  # Σ f·g = Σ f · Σ g: the product of the parts' sums
