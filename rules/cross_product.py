"""Split a global aggregate over a cross product of relations into one aggregate per relation.

When relations are joined by no condition and each condition mentions one relation (RPAI §4.3's
multi-relation form, PSP: ``b.volume > 0.0001·Σ bids.volume AND a.volume > 0.0001·Σ asks.volume``),
``Σ_{(a,b) ∈ A'×B'} f`` with ``f = Σ_k c_k·Π_R g_k,R`` is ``Σ_k c_k·Π_R (Σ_{R'} g_k,R)``, with a
factor 1 summing to |R'|. Each relation's filtered sums are a one-row aggregate query, maintained by
the best strategy for it (an index per nested condition), so the product is never materialized.
"""

from __future__ import annotations

from planner.ir.cross_product import CrossProductAggregate, ProductTerm
from planner.ir.expressions import AggregateCall, Call, Expr, Literal, columns, deep_columns
from planner.ir.logical import Aggregate, LogicalPlan, NamedExpr
from planner.ir.maintenance import Atom, JoinGraph
from planner.ir.notation import print_expr
from planner.optimizer.context import OptimizerContext
from planner.optimizer.executor import Rule


class NotSeparable(Exception):
    pass


def separate(expr: Expr, aliases: set[str]) -> list[tuple[float, dict[str, Expr]]]:
    """``expr`` as a sum of monomials ``coefficient × Π_alias factor`` (factors read one relation)."""
    match expr:
        # a constant c is the monomial c × Π ∅
        case Literal(value=value, type=("int" | "float")):
            return [(value, {})]
        # Σ(a + b) = Σ(a) ∪ Σ(b): the monomials of both terms
        case Call(op="+", args=(left, right)):
            return separate(left, aliases) + separate(right, aliases)
        # a - b = a + (-1)·b: b's monomials with their coefficients negated
        case Call(op="-", args=(left, right)):
            return separate(left, aliases) + [(-c, f) for c, f in separate(right, aliases)]
        # -a = (-1)·a
        case Call(op="neg", args=(arg,)):
            return [(-c, f) for c, f in separate(arg, aliases)]
        # (Σ_i c_i·f_i)(Σ_j d_j·g_j) = Σ_ij c_i d_j·(f_i g_j): distributivity, factors of one relation multiplied
        case Call(op="*", args=(left, right)):
            product = []
            for lc, lf in separate(left, aliases):
                for rc, rf in separate(right, aliases):
                    factors = dict(lf)
                    for alias, factor in rf.items():
                        factors[alias] = Call("*", (factors[alias], factor)) if alias in factors else factor
                    product.append((lc * rc, factors))
            return product
    tables = {c.table for c in columns(expr)}
    if len(tables) == 1 and tables <= aliases:
        return [(1, {tables.pop(): expr})]
    raise NotSeparable(f"{print_expr(expr)} mixes relations in a way that is not a sum of products")


class DecomposeCrossProductAggregate(Rule):
    """``γ_{sum(f)}(σ_{p1}(R1) × ... × σ_{pn}(Rn))`` → per-relation sums combined by products.

    Preconditions: GROUP BY columns (if any) of one relation; no equality joins the relations; each
    condition mentions one relation.

    >>> from planner.optimizer.testing import assert_rewrite
    >>> assert_rewrite(DecomposeCrossProductAggregate(), '''
    ... Aggregate group_by=[] aggregates=[sum(a.price - b.price) AS _a0]
    ...   JoinGraph conditions=[b.volume > 10, a.volume > 20]
    ...     Atom table=bids alias=b columns=[price, volume]
    ...     Atom table=asks alias=a columns=[price, volume]
    ... ''', '''
    ... CrossProductAggregate funcs=[sum] names=[_a0]
    ...     sums=[[ProductTerm(coefficient=1, factors=[[0, _n], [1, _f0]]), ProductTerm(coefficient=-1, factors=[[0, _f0], [1, _n]])]]
    ...   Aggregate group_by=[] aggregates=[count(*) AS _n, sum(b.price) AS _f0]
    ...     JoinGraph conditions=[b.volume > 10]
    ...       Atom table=bids alias=b columns=[price, volume]
    ...   Aggregate group_by=[] aggregates=[count(*) AS _n, sum(a.price) AS _f0]
    ...     JoinGraph conditions=[a.volume > 20]
    ...       Atom table=asks alias=a columns=[price, volume]
    ... ''', None)

    Paper: RPAI §4.3 (the multi-relation form of the aggregate-index optimization).
    """

    def rewrite(self, node: LogicalPlan, ctx: OptimizerContext) -> LogicalPlan:
        match node:
            # Σ over A×B of f(a)·g(b) = (Σ_A f)(Σ_B g): the product is never built
            case Aggregate(group_by=group_by, aggregates=aggregates, child=JoinGraph() as graph) if (
                len(graph.atoms) > 1 and not graph.join_classes and all(isinstance(a, Atom) for a in graph.atoms)
            ):
                try:
                    return _decompose(group_by, aggregates, graph)
                except NotSeparable as reason:
                    ctx.refuse(self.name, str(reason))
        return node


def _own_conditions(graph: JoinGraph, alias: str) -> tuple[Expr, ...]:
    """The conditions whose outer references (correlated subqueries included) are all to ``alias``."""
    aliases = {a.alias for a in graph.atoms}
    return tuple(c for c in graph.conditions if {col.table for col in deep_columns(c)} & aliases == {alias})


def _decompose(group_by: tuple[NamedExpr, ...], aggregates: tuple[NamedExpr, ...], graph: JoinGraph) -> LogicalPlan:
    aliases = [a.alias for a in graph.atoms]
    grouped = {c.table for g in group_by for c in columns(g.expr)}
    if len(grouped) > 1:
        raise NotSeparable("the GROUP BY columns come from several relations of the cross product")
    owned = {alias: _own_conditions(graph, alias) for alias in aliases}
    if sum(len(c) for c in owned.values()) != len(graph.conditions):
        raise NotSeparable("a condition mentions several relations of the cross product")
    factors: dict[str, list[Expr]] = {alias: [] for alias in aliases}
    funcs, names, sums = [], [], []
    for item in aggregates:
        call = item.expr
        if not (isinstance(call, AggregateCall) and call.func in ("sum", "count", "avg") and not call.distinct):
            raise NotSeparable("only SUM, COUNT and AVG separate over a cross product")
        if call.func == "count" and call.arg is not None:
            raise NotSeparable("COUNT(x) over a cross product is not separated (NULLs); use COUNT(*)")
        monomials = [(1, {})] if call.arg is None else separate(call.arg, set(aliases))
        terms = []
        for coefficient, parts in monomials:
            picked = []
            for index, alias in enumerate(aliases):
                factor = parts.get(alias)
                if factor is None:
                    picked.append((index, "_n"))  # Σ over the relation of 1 = its count
                    continue
                if factor not in factors[alias]:
                    factors[alias].append(factor)
                picked.append((index, f"_f{factors[alias].index(factor)}"))
            terms.append(ProductTerm(coefficient, tuple(picked)))
        funcs.append(call.func)
        names.append(item.name)
        sums.append(tuple(terms))
    parts = []
    for atom in graph.atoms:
        items = (NamedExpr("_n", AggregateCall("count", None)),) + tuple(
            NamedExpr(f"_f{i}", AggregateCall("sum", factor)) for i, factor in enumerate(factors[atom.alias]))
        keys = group_by if atom.alias in grouped else ()
        parts.append(Aggregate(keys, items, JoinGraph((atom,), owned[atom.alias])))
    grouped_part = aliases.index(next(iter(grouped))) if grouped else -1
    return CrossProductAggregate(tuple(funcs), tuple(names), tuple(sums), tuple(parts),
                                 tuple(g.name for g in group_by), grouped_part)
