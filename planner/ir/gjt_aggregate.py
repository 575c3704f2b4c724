"""SUM/COUNT/AVG grouped by output variables, read off a GJT's root payload (IEDyn §2's rings, item 3).

An aggregate over a ``GeneralizedJoinTree`` would otherwise enumerate the join's changes into a
ring aggregate: O(output changes) per batch. Here the GJT is rebuilt guarded by the GROUP BY
variables (Prop. 3.7 with out(Q) = the group), so its root's label is within them; when the root's
label *contains* every group variable, ρ_root with ``SumRing`` payloads (``GjtStage``'s ring mode)
holds COUNT(*) and the SUMs of the join tuples per root tuple, maintained by Algorithm 2 alone, and
a small ring aggregate sums the payloads of the root tuples of one group (one root tuple per group
when the label equals the group; the only tuple ``()`` for a global aggregate over an empty label).

Payload slots (``lifts``): an argument is a sum of signed terms, each an expression over one
atom's columns (``x.volume * x.price - y.volume * y.price``). A "sum" slot is lifted at each atom's
rows with that atom's part of the argument: in ``SumRing`` a product of lifts into one slot adds
them, so the slot sums the whole argument over the join tuples. An argument over one atom also gets
a "non-NULL" slot lifted with 1 where it is not NULL (a NULL adds nothing to the sum), so SUM over
only NULLs is NULL and AVG divides by the non-NULL count, as Spark does; COUNT(x) reads it, COUNT(*)
the payload's count. An argument spanning atoms is taken only when its columns are NOT NULL (then
it is never NULL and its count is the row count): the NULL of one atom's part would have to cancel
another atom's part, a product the sum ring does not hold. Equal arguments share slots. Each term is
computed per row as Spark computes it (overflow checks included); the sum of the parts is the
argument's sum, not each join row's difference computed and checked separately.

Not taken (the enumeration path stays, with the reason in EXPLAIN): DISTINCT, MIN/MAX, a group key
that is not a column, a term over two atoms (``x.a * y.b`` needs the cofactor ring: not built here)
or over none (a constant), an argument spanning atoms over a nullable column, a cyclic query, a root
label missing a group variable.
"""

from __future__ import annotations

import attrs

from catalog.schema import Catalog
from planner.ir.expressions import AggregateCall, Call, Column, Expr, columns
from planner.ir.gjt_maintenance import GeneralizedJoinTree
from planner.ir.gjt_plan import GjtPlan, plan_gjt
from planner.ir.logical import NamedExpr

#: The EXPLAIN line of an aggregate taken by this path (tests look for it).
READ_FROM_ROOT = "aggregate read from the T-representation's root (ring payload), join not enumerated"


#: One atom's part of an argument: (alias, ((sign, term), ...)).
Part = tuple[str, tuple[tuple[int, Expr], ...]]


@attrs.frozen
class GjtRingAggregate:
    """How an aggregate reads the ring payload of a GJT guarded by its GROUP BY variables."""

    node: GeneralizedJoinTree
    plan: GjtPlan
    #: the GROUP BY variables, in GROUP BY order
    group: tuple[str, ...]
    #: slot i: ("sum" | "non-null", the parts lifted into it, one per atom)
    lifts: tuple[tuple[str, tuple[Part, ...]], ...]
    #: per aggregate: (function, sum slot or None, count slot or None for the payload's row count)
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


def _terms(expr: Expr) -> list[tuple[int, Expr]]:
    """``expr`` as signed terms of its top-level ``+`` and ``-``."""
    match expr:
        case Call(op="+", args=(left, right)):
            return _terms(left) + _terms(right)
        case Call(op="-", args=(left, right)):
            return _terms(left) + [(-sign, term) for sign, term in _terms(right)]
    return [(1, expr)]


def _parts(argument: Expr) -> tuple[Part, ...] | str:
    """The argument's terms grouped by the one atom each reads, or why it cannot be split so; an
    argument over one atom is its own one term."""
    aliases = {c.table for c in columns(argument)}
    if len(aliases) == 1:
        return ((aliases.pop(), ((1, argument),)),)
    parts: dict[str, list[tuple[int, Expr]]] = {}
    for sign, term in _terms(argument):
        aliases = {c.table for c in columns(term)}
        if len(aliases) != 1:
            return (f"a term of an aggregate argument reads {'no atom' if not aliases else 'two atoms'} "
                    "(a product across atoms needs the cofactor ring)")
        parts.setdefault(aliases.pop(), []).append((sign, term))
    return tuple((alias, tuple(terms)) for alias, terms in parts.items())


def gjt_ring_aggregate(group_by: tuple[NamedExpr, ...], aggregates: tuple[NamedExpr, ...],
                       node: GeneralizedJoinTree, catalog: Catalog) -> GjtRingAggregate | str:
    """The ring-payload reading of ``aggregates`` grouped by ``group_by`` over ``node``, or why not."""
    if not all(isinstance(g.expr, Column) for g in group_by):
        return "a GROUP BY key is not a column"
    tables = {a.alias: a.table for a in node.atoms}
    lifts: dict[tuple[str, tuple[Part, ...]], int] = {}
    reads = []
    for item in aggregates:
        call = item.expr
        if not isinstance(call, AggregateCall) or call.func not in ("sum", "count", "avg") or call.distinct:
            return f"{getattr(call, 'func', '?').upper()}{' DISTINCT' if getattr(call, 'distinct', False) else ''} is not read off a SumRing payload"
        if call.arg is None:
            reads.append((call.func, None, None))
            continue
        parts = _parts(call.arg)
        if isinstance(parts, str):
            return parts
        if len(parts) == 1:
            count = lifts.setdefault(("non-null", ((parts[0][0], ((1, call.arg),)),)), len(lifts))
        else:
            nullable = sorted(str(c) for c in columns(call.arg) if catalog.table(tables[c.table]).column(c.name).nullable)
            if nullable:
                return (f"{call.func.upper()}'s argument spans atoms and {', '.join(nullable)} may be NULL (one atom's "
                        "NULL must void the others' parts: a product the sum ring does not hold)")
            count = None
        total = None if call.func == "count" else lifts.setdefault(("sum", parts), len(lifts))
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
