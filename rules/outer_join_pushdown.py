"""Selections through outer joins: the standard outer-join simplifications (Galindo-Legaria &
Rosenthal, "Outerjoin simplification and reordering"), so that as much as possible is a join graph
the strongest strategies take, and what stays an outer join keeps less state.

Laws, for ``L ⟕_c R`` (mirrored for ``⟖``; ``⟗`` is ``⟕`` and ``⟖`` at once):

- a WHERE conjunct on the preserved side only filters that side: σ_p(L ⟕_c R) = σ_p(L) ⟕_c R;
- an ON conjunct on the null-supplying side only filters that side: L ⟕_{c ∧ p} R = L ⟕_c σ_p(R)
  (an R row failing p matches nothing, which is what a missing row does);
- a WHERE conjunct that no padded row passes (null-rejecting on R: a comparison of a bare R column,
  ``r.x IS NOT NULL``) drops every padded row: σ_p(L ⟕_c R) = σ_p(L ⋈_c R).

Conjuncts that read both sides, or test the padding (``r.x IS NULL``, ``coalesce(r.x, 0) > 1``,
an OR), stay above the join: ``MaintainOuterJoin`` applies them to its result rows.
"""

from __future__ import annotations

import attrs

from planner.ir.expressions import Call, Column, Expr, columns, conjunction, conjuncts, contains_subquery
from planner.ir.logical import Filter, Join, LogicalPlan
from planner.optimizer.context import OptimizerContext
from planner.optimizer.executor import Rule

#: Comparisons that are NULL (so not true) when an argument is NULL.
_STRICT = ("=", "<>", "<", "<=", ">", ">=")
#: kind → (the left side is preserved, the right side is preserved); inner and cross preserve neither.
_PRESERVES = {"left": (True, False), "right": (False, True), "full": (True, True),
              "inner": (False, False), "cross": (False, False)}
#: what a join becomes once a WHERE rejects the padded rows of the (left, right) side
_REJECTED = {("left", 1): "inner", ("right", 0): "inner", ("full", 0): "left", ("full", 1): "right"}


def _aliases(plan: LogicalPlan) -> frozenset[str]:
    return frozenset(c.table for c in plan.output)


def _reads_only(expr: Expr, aliases: frozenset[str]) -> bool:
    tables = {c.table for c in columns(expr)}
    return bool(tables) and tables <= aliases and not contains_subquery(expr)


def _rejects_padding(expr: Expr, aliases: frozenset[str]) -> bool:
    """Whether ``expr`` is never true on a row whose ``aliases`` columns are all NULL: a strict
    comparison with a bare column of theirs, or ``IS NOT NULL`` of one."""
    match expr:
        # a strict comparison with a NULL operand is NULL, never true: it rejects the padding
        case Call(op, args) if op in _STRICT:
            return any(isinstance(a, Column) and a.table in aliases for a in args) and not contains_subquery(expr)
        # c IS NOT NULL is false where c is padded with NULL
        case Call("is not null", (Column(table=table),)):
            return table in aliases
    return False


def _filtered(plan: LogicalPlan, parts: list[Expr]) -> LogicalPlan:
    return Filter(conjunction(parts), plan) if parts else plan


class PushSelectionsThroughOuterJoins(Rule):
    """Move WHERE conjuncts into the side they filter, ON conjuncts into the null-supplying side, and
    turn an outer join whose padded rows a WHERE rejects into the join that keeps the rest.

    Preconditions: none (pure algebra; see the module's laws).

    >>> from planner.optimizer.testing import assert_rewrite
    >>> assert_rewrite(PushSelectionsThroughOuterJoins(), '''
    ... Filter condition=c.city = 'rome' and (o.amount > 5 or o.amount is null)
    ...   Join[left] condition=o.cust = c.id and o.amount < 9
    ...     Scan table=customers alias=c columns=[id, city]
    ...     Scan table=orders alias=o columns=[cust, amount]
    ... ''', '''
    ... Filter condition=o.amount > 5 or o.amount is null
    ...   Join[left] condition=o.cust = c.id
    ...     Filter condition=c.city = 'rome'
    ...       Scan table=customers alias=c columns=[id, city]
    ...     Filter condition=o.amount < 9
    ...       Scan table=orders alias=o columns=[cust, amount]
    ... ''', None)

    A WHERE no padded row passes makes the LEFT JOIN an inner join:

    >>> assert_rewrite(PushSelectionsThroughOuterJoins(), '''
    ... Filter condition=o.amount > 5
    ...   Join[left] condition=o.cust = c.id
    ...     Scan table=customers alias=c columns=[id, city]
    ...     Scan table=orders alias=o columns=[cust, amount]
    ... ''', '''
    ... Join[inner] condition=o.cust = c.id
    ...   Scan table=customers alias=c columns=[id, city]
    ...   Filter condition=o.amount > 5
    ...     Scan table=orders alias=o columns=[cust, amount]
    ... ''', None)

    Paper: Galindo-Legaria & Rosenthal (1997), outerjoin simplification.
    """

    def rewrite(self, node: LogicalPlan, ctx: OptimizerContext) -> LogicalPlan:
        match node:
            # σ_p(L ⟕ R) = σ_p(L) ⟕ R when refs(p) ⊆ out(L); σ_p(L ⟕ R) = σ_p(L ⋈ R) when p rejects R's padding
            case Filter(condition=cond, child=Join(kind=kind) as join) if kind in _PRESERVES and _outer(join):
                return _push_where(cond, join) or node
            # L ⟕_{c ∧ p} R = L ⟕_c σ_p(R): p reads only the null-supplying side (some of c stays)
            case Join(kind=("left" | "right") as kind, condition=cond, left=left, right=right) if cond is not None:
                aliases = _aliases(right if kind == "left" else left)
                moved = [p for p in conjuncts(cond) if _reads_only(p, aliases)]
                if not moved or len(moved) == len(conjuncts(cond)):
                    return node
                kept = conjunction([p for p in conjuncts(cond) if p not in moved])
                if kind == "left":
                    return attrs.evolve(node, condition=kept, right=_filtered(right, moved))
                return attrs.evolve(node, condition=kept, left=_filtered(left, moved))
        return node


def _outer(plan: LogicalPlan) -> bool:
    """Whether ``plan`` holds an outer join (an inner join of plain sides is FlattenInnerJoins' work)."""
    return any(isinstance(n, Join) and n.kind in ("left", "right", "full") for n in plan.walk())


def _push_where(cond: Expr, join: Join) -> LogicalPlan | None:
    """σ_cond(join) with the conjuncts that filter one side pushed into it and the padding a
    conjunct rejects turned into the join that keeps the rest (the module's laws); None: no change."""
    sides = (_aliases(join.left), _aliases(join.right))
    kind = join.kind
    for part in conjuncts(cond):
        for side in (0, 1):
            if _rejects_padding(part, sides[side]):
                kind = _REJECTED.get((kind, side), kind)
    preserves = _PRESERVES[kind]
    pushed: tuple[list[Expr], list[Expr]] = ([], [])
    kept: list[Expr] = []
    for part in conjuncts(cond):
        # σ_p(L ⟕ R) = σ_p(L) ⟕ R for p on L: the rows of a side no other side pads are filtered alike
        side = next((s for s in (0, 1) if not preserves[1 - s] and _reads_only(part, sides[s])), None)
        (kept if side is None else pushed[side]).append(part)
    if kind == join.kind and not pushed[0] and not pushed[1]:
        return None
    new = attrs.evolve(join, kind=kind, left=_filtered(join.left, pushed[0]), right=_filtered(join.right, pushed[1]))
    return _filtered(new, kept)
