"""SUM/COUNT/AVG grouped by output variables, read off a GJT's root payload (IEDyn §2's rings, item 3).

An aggregate over a ``GeneralizedJoinTree`` would otherwise enumerate the join's changes into a
ring aggregate: O(output changes) per batch. Here the GJT is rebuilt guarded by the GROUP BY
variables (Prop. 3.7 with out(Q) = the group), so its root's label is within them; when the root's
label *contains* every group variable, ρ_root with ``SumRing`` payloads (``GjtStage``'s ring mode)
holds COUNT(*) and the SUMs of the join tuples per root tuple, maintained by Algorithm 2 alone, and
a small ring aggregate sums the payloads of the root tuples of one group (one root tuple per group
when the label equals the group; the only tuple ``()`` for a global aggregate over an empty label).

Payload slots (``lifts``): each SUM/AVG argument column is lifted at its own atom's rows into a
"sum" slot (a NULL adds nothing), and into a "non-NULL" slot counting the join tuples where it is
not NULL (lifted as 1), so SUM over only NULLs is NULL and AVG divides by the non-NULL count, as
Spark does; COUNT(x) reads the non-NULL slot, COUNT(*) the payload's count. Columns shared by two
aggregates share slots.

Not taken (the enumeration path stays, with the reason in EXPLAIN): DISTINCT, MIN/MAX, an argument
or group key that is not a column (a product ``x*y`` of two atoms needs the cofactor ring: not built
here), a cyclic query, a root label missing a group variable.
"""

from __future__ import annotations

import functools

import attrs

from planner.ir.expressions import AggregateCall, Column
from planner.ir.gjt_maintenance import GeneralizedJoinTree
from planner.ir.gjt_plan import GjtPlan, plan_gjt
from planner.ir.logical import NamedExpr

#: The EXPLAIN line of an aggregate taken by this path (tests look for it).
READ_FROM_ROOT = "aggregate read from the T-representation's root (ring payload), join not enumerated"


@attrs.frozen
class GjtRingAggregate:
    """How an aggregate reads the ring payload of a GJT guarded by its GROUP BY variables."""

    node: GeneralizedJoinTree
    plan: GjtPlan
    #: the GROUP BY variables, in GROUP BY order
    group: tuple[str, ...]
    #: slot i: (column, "sum" | "non-null")
    lifts: tuple[tuple[Column, str], ...]
    #: per aggregate: (function, sum slot or None, count slot or None for COUNT(*)'s row count)
    reads: tuple[tuple[str, int | None, int | None], ...]

    @property
    def root_variables(self) -> tuple[str, ...]:
        return tuple(sorted(self.plan.tree.label))

    @property
    def explain(self) -> str:
        label = ", ".join(self.root_variables)
        merge = ("one root tuple per group" if set(self.root_variables) == set(self.group)
                 else f"root label {{{label}}} ⊋ GROUP BY: a ring aggregate sums the root tuples' payloads per group")
        return (f"{READ_FROM_ROOT}: GJT guarded by the GROUP BY {{{', '.join(self.group)}}}, ρ_root holds "
                f"SumRing({len(self.lifts)}) payloads (COUNT(*), sums and non-NULL counts); {merge}; cost per "
                f"batch: Algorithm 2's update ({self.node.update_bound}) plus O(1) per changed root tuple, "
                "independent of the join's output size")


def gjt_ring_aggregate(group_by: tuple[NamedExpr, ...], aggregates: tuple[NamedExpr, ...],
                       node: GeneralizedJoinTree) -> GjtRingAggregate | str:
    """The ring-payload reading of ``aggregates`` grouped by ``group_by`` over ``node``, or why not."""
    return _cached(group_by, aggregates, node)


@functools.lru_cache(maxsize=64)
def _cached(group_by, aggregates, node: GeneralizedJoinTree) -> GjtRingAggregate | str:
    if not all(isinstance(g.expr, Column) for g in group_by):
        return "a GROUP BY key is not a column"
    lifts: dict[tuple[Column, str], int] = {}
    reads = []
    for item in aggregates:
        call = item.expr
        if not isinstance(call, AggregateCall) or call.func not in ("sum", "count", "avg") or call.distinct:
            return f"{getattr(call, 'func', '?').upper()} {'DISTINCT ' if getattr(call, 'distinct', False) else ''}is not read off a SumRing payload"
        if call.arg is None:
            reads.append((call.func, None, None))
            continue
        if not isinstance(call.arg, Column):
            return f"the argument of {call.func.upper()} is not a column (a product across atoms needs the cofactor ring)"
        count = lifts.setdefault((call.arg, "non-null"), len(lifts))
        total = None if call.func == "count" else lifts.setdefault((call.arg, "sum"), len(lifts))
        reads.append((call.func, total, count))
    try:
        group = tuple(dict.fromkeys(node.variable_of(g.expr) for g in group_by))
        query = attrs.evolve(node.query, output=frozenset(group))
    except (KeyError, ValueError) as reason:
        return f"the GROUP BY is not over the join's variables ({reason})"
    plan = plan_gjt(query)
    if plan.tree is None:
        return f"the query is cyclic ({plan.witness})"
    missing = set(group) - plan.tree.label
    if missing:
        return (f"the root of the GJT guarded by the GROUP BY is labelled {{{', '.join(sorted(plan.tree.label))}}}, "
                f"without {', '.join(sorted(missing))}: ρ_root is not grouped finely enough")
    return GjtRingAggregate(node, plan, group, tuple(sorted(lifts, key=lifts.get)), tuple(reads))
