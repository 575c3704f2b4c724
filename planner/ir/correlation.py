"""A correlated subquery's WHERE, split by what each conjunct reads of the outer query.

Every decorrelation rests on one reading of a subquery ``σ_{φ ∧ κ}(S)`` evaluated on an outer row
r: φ reads only S (the *local* part, applied to S once for every r), κ reads r. When κ is a
conjunction of column equalities ``S.a_i = r.b_i``, the subquery on r is the group ``a = b`` of one
view ``γ_a(σ_φ(S))``, joined along its key (AJU §5); what else κ holds (one inequality, Q21's ``<>``,
anything else) decides which rule takes the subquery, or that none does. The split is made here,
once: the rules (``rules/decorrelate.py``, ``rules/not_in.py``, ``rules/exists_inequality.py``,
``rules/outer_join_subqueries.py``) and the front end's LEFT JOIN forms
(``planner/sql/scalar_subqueries.py``, ``planner/sql/exists_values.py``) each read the parts they
understand and refuse, or leave, the rest.
"""

from __future__ import annotations

import attrs

from planner.ir.expressions import Call, Column, Expr, columns, conjunction, conjuncts
from planner.ir.logical import Filter, LogicalPlan, Scan, SubqueryAlias
from planner.ir.maintenance import Atom, ViewAtom


def relation_aliases(plan: LogicalPlan) -> set[str]:
    """The relations ``plan`` reads: tables, and derived tables or views by their alias (a filter on a
    derived table's column, TPC-H Q18's ``where sum_qty > 300``, is local, not a correlation)."""
    return {n.alias for n in plan.walk() if isinstance(n, Scan | Atom | ViewAtom | SubqueryAlias)}


def referenced_aliases(plan: LogicalPlan) -> set[str | None]:
    """The aliases of every column ``plan``'s expressions mention, outer references included."""
    return {c.table for node in plan.walk() for expr in node.expressions() for c in columns(expr)}


def is_uncorrelated(plan: LogicalPlan) -> bool:
    """Whether ``plan`` reads only its own relations (no outer reference)."""
    return referenced_aliases(plan) <= relation_aliases(plan) | {None}


@attrs.frozen
class CorrelatedWhere:
    """A subquery's FROM and WHERE as ``σ_{local ∧ keys ∧ others}(source)``: ``local`` reads only the
    subquery's relations, ``keys`` are its column equalities ``(inner, outer)`` with the outer query,
    and ``others`` the conjuncts that read the outer query in any other way (in the WHERE's order)."""

    source: LogicalPlan
    local: tuple[Expr, ...] = ()
    keys: tuple[tuple[Column, Column], ...] = ()
    others: tuple[Expr, ...] = ()

    def filtered(self) -> LogicalPlan:
        """σ_local(source): the subquery's rows for every outer row, before the correlation."""
        return Filter(conjunction(list(self.local)), self.source) if self.local else self.source


def split_where(plan: LogicalPlan, outer: set[str] | frozenset[str]) -> CorrelatedWhere:
    """``plan`` (``σ_p(S)`` or ``S``) split against the outer query's relations ``outer``.

    >>> from planner.ir.expressions import Literal
    >>> from planner.ir.notation import print_expr
    >>> key, local = Call("=", (Column("o", "k"), Column("l", "k"))), Call(">", (Column("l", "q"), Literal(5, "int")))
    >>> other = Call("<", (Column("l", "q"), Column("o", "q")))
    >>> split = split_where(Filter(Call("and", (Call("and", (key, local)), other)), Scan("lineitem", "l", ("k", "q"))), {"o"})
    >>> [(print_expr(i), print_expr(o)) for i, o in split.keys], [print_expr(e) for e in split.local + split.others]
    ([('l.k', 'o.k')], ['l.q > 5', 'l.q < o.q'])
    """
    if not isinstance(plan, Filter):
        return CorrelatedWhere(plan)
    inner = relation_aliases(plan)
    local, keys, others = [], [], []
    for part in conjuncts(plan.condition):
        if {c.table for c in columns(part)} <= inner:  # φ(S): reads S only (or nothing: a constant)
            local.append(part)
        elif (pair := column_pair(part, "=", inner, outer)) is not None:  # S.a = r.b: a key of the view γ_a
            keys.append(pair)
        else:
            others.append(part)
    return CorrelatedWhere(plan.child, tuple(local), tuple(keys), tuple(others))


def column_pair(part: Expr, op: str, inner: set[str], outer: set[str] | frozenset[str]) -> tuple[Column, Column] | None:
    """``(inner column, outer column)`` when ``part`` compares one of each by ``op`` (a symmetric
    operator: ``=``, ``<>``), either way round; else None."""
    match part:
        case Call(op=found, args=(Column() as a, Column() as b)) if found == op:
            if a.table in inner and b.table in outer:
                return a, b
            if b.table in inner and a.table in outer:
                return b, a
    return None
