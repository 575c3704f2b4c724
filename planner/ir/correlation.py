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

from collections.abc import Iterator

import attrs

from planner.ir.expressions import Call, Column, Expr, Subquery, columns, conjunction, conjuncts, walk
from planner.ir.logical import Filter, LogicalPlan, Scan, SetOperation, SubqueryAlias
from planner.ir.maintenance import Atom, ViewAtom


def own_relations(plan: LogicalPlan) -> set[str]:
    """The relations ``plan``'s own expressions may name: its tables, and its derived tables and views by
    their alias (a filter on a derived table's column, TPC-H Q18's ``where sum_qty > 300``, is local,
    not a correlation), not the relations inside those, or a set operation's, which are scopes of their own."""
    return _scope(plan)[0]


def is_uncorrelated(plan: LogicalPlan) -> bool:
    """Whether ``plan`` reads nothing of a query around it: every column it reads is bound by a relation
    in scope, where each derived table, view and set-operation branch is a scope seeing its own
    relations and those of the scopes around it (SQL's name resolution). A branch of ``(SELECT o.x
    FROM orders o UNION ALL SELECT l.y FROM lineitem l WHERE l.k = o.k)`` that reads ``o.k`` reads the
    outer query's ``o``, whatever the other branch calls its own relation."""
    return next(_unbound(plan, frozenset(), ()), None) is None


def hidden_correlation(plan: LogicalPlan) -> str | None:
    """Where ``plan`` reads a query around it from inside one of its derived tables or set-operation
    branches (not from its own WHERE), in SQL's words for a refusal; None when it does not."""
    for column, places in _unbound(plan, frozenset(), ()):
        if not places:
            continue
        where = " of ".join(f"a {p.kind.replace('_', ' ').upper()} branch" if isinstance(p, SetOperation)
                            else f"the derived table {p.alias}" for p in reversed(places))
        # the same alias naming a relation of another scope inside: a likely slip, said so
        reused = any(isinstance(n, Scan | SubqueryAlias) and n.alias == column.table for n in plan.walk())
        return (f"reads the outer query's {column.table}.{column.name} inside {where}"
                + (f" (the subquery's own {column.table} is in another scope, which that one does not see)"
                   if reused else ""))
    return None


def _scope(plan: LogicalPlan) -> tuple[set[str], list[LogicalPlan], list[tuple[LogicalPlan, LogicalPlan]]]:
    """(the aliases ``plan``'s scope binds, its nodes, the plans below it that are scopes of their own,
    each with the derived table, view or set operation holding it)."""
    aliases, nodes, inner, stack = set(), [], [], [plan]
    while stack:
        node = stack.pop()
        if isinstance(node, SetOperation):  # each branch is a query of its own
            inner.extend((node, branch) for branch in node.children)
            continue
        nodes.append(node)
        if isinstance(node, Scan | Atom | ViewAtom | SubqueryAlias):
            aliases.add(node.alias)
        if isinstance(node, SubqueryAlias | ViewAtom):
            inner.extend((node, child) for child in node.children)
        else:
            stack.extend(node.children)
    return aliases, nodes, inner


def _unbound(plan: LogicalPlan, enclosing: frozenset[str],
             places: tuple[LogicalPlan, ...]) -> Iterator[tuple[Column, tuple[LogicalPlan, ...]]]:
    """Each column no scope binds, with the derived tables and set operations it is read inside."""
    aliases, nodes, inner = _scope(plan)
    visible = enclosing | aliases
    for node in nodes:
        for expr in node.expressions():
            for e in walk(expr):
                if isinstance(e, Subquery):
                    yield from _unbound(e.plan, visible, places)
                elif isinstance(e, Column) and e.table is not None and e.table not in visible:
                    yield e, places
    for container, below in inner:
        yield from _unbound(below, visible, (*places, container))


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
    inner = own_relations(plan)
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
