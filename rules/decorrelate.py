"""Decorrelate EXISTS and IN subqueries into maintained views joined on their key (AJU §5).

``EXISTS (SELECT ... FROM S WHERE S.a = R.b AND φ(S))`` holds for the R tuples whose ``b`` is a key
of the view ``V = γ_{a; count(*)}(σ_φ(S))``: the subquery becomes an atom V joined on its key, which
is a foreign-key join (every R tuple joins at most one V tuple), maintained with live tuples like any
other. ``x IN (SELECT e FROM S ...)`` is the same with ``e`` as the key; when the subquery already
groups by ``e`` (TPC-H Q18's ``GROUP BY l_orderkey HAVING ...``) it is the view itself. NOT EXISTS
and NOT IN become *anti* views: the outer tuple qualifies when no view row has its key.

NOT IN is NOT EXISTS only when neither side can be NULL; it is refused otherwise. Correlations
other than equalities (Q21's ``l2.l_suppkey <> l1.l_suppkey``) and scalar subqueries are left to
other rules.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeAlias

import attrs

from catalog.schema import Catalog
from planner.ir.correlation import (
    CorrelatedWhere,
    column_pair,
    hidden_correlation,
    is_uncorrelated,
    own_relations,
    split_where,
)
from planner.ir.expressions import (
    AggregateCall,
    Call,
    Column,
    Expr,
    Literal,
    Subquery,
    conjunction,
    conjuncts,
    transform,
    type_of,
)
from planner.ir.logical import (
    Aggregate,
    Filter,
    LogicalPlan,
    NamedExpr,
    Project,
    Scan,
    SetOperation,
    SubqueryAlias,
)
from planner.ir.maintenance import Atom, JoinGraph, ViewAtom
from planner.ir.notation import print_expr
from planner.optimizer.context import FreshAliases, OptimizerContext
from planner.optimizer.executor import Rule


class CannotDecorrelate(Exception):
    """Why a subquery is left as it is (shown by EXPLAIN)."""


def equality_correlation(plan: LogicalPlan, outer: set[str]) -> CorrelatedWhere:
    """The subquery's FROM/WHERE split (``planner/ir/correlation.py``); raises unless every conjunct
    that reads the outer query is a column equality."""
    split = split_where(plan, outer)
    if split.others:
        raise CannotDecorrelate(f"the subquery's correlation {print_expr(split.others[0])} is not an equality between columns")
    return split


def _groups_by(plan: LogicalPlan, item: NamedExpr) -> bool:
    """Whether ``plan`` (under the IN's Project) has one row per value of ``item`` and no outer reference."""
    grouped = plan.child if isinstance(plan, Filter) else plan
    return (
        isinstance(grouped, Aggregate)
        and len(grouped.group_by) == 1
        and item.expr == Column(None, grouped.group_by[0].name)
        and is_uncorrelated(plan)
    )


def view_for(subquery: Subquery, outer: set[str], alias: str, nullable) -> tuple[ViewAtom, list[Expr]]:
    """The view replacing ``subquery`` and the equalities joining it back.

    ``nullable(expr, plan)`` says whether a column may be NULL (NOT IN needs both sides NOT NULL).
    """
    plan = subquery.plan
    if isinstance(plan, SetOperation):
        plan = _set_operation_as_block(subquery, alias)
    if subquery.kind == "exists":
        split = equality_correlation(plan.child if isinstance(plan, Project) else plan, outer)
        if not split.keys:
            raise CannotDecorrelate("an uncorrelated EXISTS is a constant condition; it is not maintained yet")
        body, keys = split.filtered(), list(split.keys)
    elif subquery.kind == "in":
        if not (isinstance(plan, Project) and len(plan.items) == 1):
            raise CannotDecorrelate("the IN subquery must select one expression")
        (item,) = plan.items
        if subquery.negated and (nullable(subquery.operand, None) or nullable(item.expr, plan)):
            raise CannotDecorrelate("NOT IN over a column that may be NULL is not NOT EXISTS; it is not maintained")
        if _groups_by(plan.child, item) and not nullable(_group_key(plan.child), plan):
            # Already one row per value (Q18's GROUP BY ... HAVING): the subquery is the view itself
            # (a NULL group would be a key no outer NULL may meet: such a subquery takes the path below).
            view = ViewAtom(alias, (item.name,), (item.name,), subquery.negated, plan)
            return view, [Call("=", (subquery.operand, Column(alias, item.name)))]
        if (grouped := _grouped_block(plan, alias)) is not None:
            body, keys = grouped, [(Column(f"{alias}_g", item.name, type_of(item.expr)), subquery.operand)]
        else:
            split = equality_correlation(plan.child, outer)
            body, keys = split.filtered(), [(item.expr, subquery.operand), *split.keys]
    else:
        raise CannotDecorrelate(f"{subquery.kind} subqueries are not decorrelated into views")
    names = tuple(f"k{i}" for i in range(len(keys)))
    group_by = tuple(NamedExpr(name, inner) for name, (inner, _) in zip(names, keys, strict=True))
    # SQL's = is never true of a NULL: a NULL key matches no outer row, so the view leaves it out (else
    # the join along the view's key would pair it with an outer NULL, which EXISTS and IN never do)
    present = [Call("is not null", (inner,)) for inner, _ in keys if nullable(inner, subquery.plan)]
    if present:
        body = Filter(conjunction([*conjuncts(body.condition), *present]), body.child) if isinstance(body, Filter) \
            else Filter(conjunction(present), body)
    view_plan = Aggregate(group_by, (NamedExpr("_n", AggregateCall("count", None)),), body)
    view = ViewAtom(alias, names, names + ("_n",), subquery.negated, view_plan)
    joins = [Call("=", (outer_expr, Column(alias, name))) for name, (_, outer_expr) in zip(names, keys, strict=True)]
    return view, joins


def _set_operation_as_block(subquery: Subquery, alias: str) -> Project:
    """``x IN (SELECT a FROM r UNION SELECT b FROM s)`` read as ``x IN (SELECT v.a FROM (r ∪ s) v)``:
    the set operation becomes a derived table, itself a relation fed by its changes (rules/derived_rows.py),
    whose rows the IN's view counts per value. Only when no branch reads the outer query: the
    correlation of an EXISTS sits inside each branch, which no view here is grouped by."""
    plan = subquery.plan
    kind = plan.kind.replace("_", " ").upper()
    if subquery.kind != "in" or not is_uncorrelated(plan):
        raise CannotDecorrelate(f"{subquery.kind.upper()} over a {kind}, correlated inside its branches, is not "
                                "maintained; an uncorrelated IN over a set operation is")
    derived = f"{alias}_s"
    return Project(tuple(NamedExpr(c.name, Column(derived, c.name, c.dtype)) for c in plan.output),
                   SubqueryAlias(derived, plan))


def _group_key(plan: LogicalPlan) -> Expr:
    """The one GROUP BY expression of a subquery ``_groups_by`` accepted."""
    grouped = plan.child if isinstance(plan, Filter) else plan
    return grouped.group_by[0].expr


def _grouped_block(plan: Project, alias: str) -> LogicalPlan | None:
    """An uncorrelated IN subquery that groups by more than the value it selects (``SELECT o.cust ...
    GROUP BY o.id, o.cust HAVING sum(...) > 200``), as a derived table ``<alias>_g`` keyed by its
    group (a view of its own) that selects the value too: the IN's view then counts that derived
    table's rows per value, γ_{e; count}(π_{g, e}(Q)), since x IN (SELECT e FROM Q) holds exactly when
    some row of Q has e = x. None for any other subquery."""
    body = plan.child.child if isinstance(plan.child, Filter) else plan.child
    if not (isinstance(body, Aggregate) and body.group_by) or not is_uncorrelated(plan):
        return None
    (item,) = plan.items
    keys = tuple(NamedExpr(g.name, Column(None, g.name, type_of(g.expr))) for g in body.group_by)
    if item not in keys and any(k.name == item.name for k in keys):
        return None  # the value would share its name with another group column
    selected = () if item in keys else (item,)
    return SubqueryAlias(f"{alias}_g", Project(keys + selected, plan.child))


#: ``nullable(expr, plan)``: whether a column may be NULL (looked up in the join graph's atoms or ``plan``)
Nullability: TypeAlias = Callable[[Expr, LogicalPlan | None], bool]


def _nullability(graph: JoinGraph, catalog: Catalog) -> Nullability:
    """``nullable(expr, plan)``: whether the column may be NULL, looked up in the graph's atoms or ``plan``."""
    def nullable(expr: Expr, plan: LogicalPlan | None) -> bool:
        if not isinstance(expr, Column):
            return True
        relations = list(graph.atoms) + (list(plan.walk()) if plan is not None else [])
        for node in relations:
            if isinstance(node, Scan | Atom) and node.alias == expr.table:
                return catalog.table(node.table).column(expr.name).nullable
        return True

    return nullable


def _split_inequality(plan: LogicalPlan, outer: set[str]):
    """The correlation as equalities and one ``inner.b <> outer.y``: (body, equalities, (b, y)); None
    without equalities or without exactly one such ``<>``, or with any other correlation."""
    split, inner = split_where(plan, outer), own_relations(plan)
    pairs = [column_pair(part, "<>", inner, outer) for part in split.others]
    differs, rest = [p for p in pairs if p is not None], [o for o, p in zip(split.others, pairs, strict=True) if p is None]
    if len(differs) != 1 or rest or not split.keys:
        return None
    return split.filtered(), list(split.keys), differs[0]


def exists_other_views(subquery: Subquery, outer: set[str], aliases: tuple[str, str]):
    """``EXISTS (... WHERE S.a = R.x AND S.b <> R.y)`` (TPC-H Q21): some S row of key x has a b other
    than y exactly when count(a = x) − count(a = x, b = y) > 0. Both counts are views joined on their
    keys *optionally* (an absent row counts 0), and the EXISTS becomes that comparison."""
    body = subquery.plan.child if isinstance(subquery.plan, Project) else subquery.plan
    split = _split_inequality(body, outer)
    if split is None:
        return None
    body, pairs, (inner_b, outer_y) = split
    views, joins, counts = [], [], []
    for alias, keys in zip(aliases, (pairs, [*pairs, (inner_b, outer_y)]), strict=True):
        names = tuple(f"k{i}" for i in range(len(keys)))
        grouped = Aggregate(tuple(NamedExpr(n, inner) for n, (inner, _) in zip(names, keys, strict=True)),
                            (NamedExpr("_n", AggregateCall("count", None)),), body)
        views.append(ViewAtom(alias, names, names + ("_n",), False, grouped, optional=True))
        joins += [Call("=", (outer_col, Column(alias, n))) for n, (_, outer_col) in zip(names, keys, strict=True)]
        counts.append(Call("coalesce", (Column(alias, "_n"), Literal(0, "int"))))
    others = Call("-", tuple(counts))
    condition = Call("=" if subquery.negated else ">", (others, Literal(0, "int")))
    return views, joins + [condition]


def _views_in(plan: LogicalPlan) -> int:
    """How many view atoms exist: new views are numbered after them (``_v<n>`` stays unique)."""
    return sum(1 for n in plan.walk() if isinstance(n, ViewAtom))


def _relations_of(graph: JoinGraph) -> set[str]:
    return {a.alias for a in graph.atoms if isinstance(a, Atom | ViewAtom)}


class DecorrelationRule(Rule):
    """A rule that replaces subqueries by relations of its own, named ``_v<n>`` (``numbering`` says).

    It keeps ``apply`` for one fact of the whole plan: the names must be unique across it (a view's own
    plan included), so they are numbered after the relations of their kind already there, counted
    before the executor's walk; ``rewrite`` draws them from ``ctx.aliases``. Its ``rewrite`` replaces
    the join-graph conditions ``views_for`` takes, which states the rule's law.
    """

    def apply(self, plan: LogicalPlan, ctx: OptimizerContext) -> LogicalPlan:
        ctx.aliases = FreshAliases(*self.numbering(plan))
        return super().apply(plan, ctx)

    def numbering(self, plan: LogicalPlan) -> tuple[str, int]:
        """(the names' prefix, how many such relations the plan holds)."""
        return "_v", _views_in(plan)

    def rewrite(self, node: LogicalPlan, ctx: OptimizerContext) -> LogicalPlan:
        match node:
            # σ_{q ∧ c}(R1 ⋈ …) = σ_{j ∧ c}(R1 ⋈ … ⋈ V): a subquery condition q as views V joined back by j (views_for)
            case JoinGraph():
                return replace_conditions(self.name, node, ctx, self.views_for)
        return node

    def views_for(self, condition: Expr, outer: set[str], nullable: Nullability, aliases: FreshAliases) -> Replacement:
        """The views replacing one condition of a join graph of the relations ``outer`` and the conditions
        joining them back; None when the condition is not the rule's; raises ``CannotDecorrelate`` to refuse."""
        return None


#: what replaces one condition: its views and the conditions joining them back; None when not the rule's
Replacement: TypeAlias = tuple[list[ViewAtom], list[Expr]] | None


def replace_conditions(rule: str, graph: JoinGraph, ctx: OptimizerContext,
                       views_for: Callable[[Expr, set[str], Nullability, FreshAliases], Replacement]) -> JoinGraph:
    """``graph`` with each condition ``views_for`` replaces by views joined back; a ``CannotDecorrelate``
    it raises leaves the condition and is recorded as ``rule``'s refusal. ``graph`` itself when none is."""
    outer, nullable = _relations_of(graph), _nullability(graph, ctx.catalog)
    atoms, conditions, changed = list(graph.atoms), [], False
    for condition in graph.conditions:
        try:
            found = views_for(condition, outer, nullable, ctx.aliases)
        except CannotDecorrelate as reason:
            ctx.refuse(rule, str(reason))
            found = None
        if found is None:
            conditions.append(condition)
            continue
        ctx.aliases.take(len(found[0]))  # none when the condition becomes a comparison with a threshold
        atoms.extend(found[0])
        conditions.extend(found[1])
        changed = True
    return attrs.evolve(graph, atoms=tuple(atoms), conditions=tuple(conditions)) if changed else graph


class DecorrelateExistsAndIn(DecorrelationRule):
    """Replace EXISTS/IN (and NOT) conditions of a join graph by view atoms joined on their key.

    Preconditions: the join graph's conditions are conjuncts (normalization).

    >>> from catalog.tpch import tpch_catalog
    >>> from planner.optimizer.context import FreshAliases, OptimizerContext
    >>> from planner.optimizer.testing import assert_rewrite
    >>> assert_rewrite(DecorrelateExistsAndIn(), '''
    ... JoinGraph conditions=[exists{
    ...     Filter condition=l.l_orderkey = o.o_orderkey and l.l_commitdate < l.l_receiptdate
    ...       Scan table=lineitem alias=l columns=[l_orderkey, l_commitdate, l_receiptdate]
    ...   }]
    ...   Atom table=orders alias=o columns=[o_orderkey]
    ... ''', '''
    ... JoinGraph conditions=[o.o_orderkey = _v0.k0]
    ...   Atom table=orders alias=o columns=[o_orderkey]
    ...   ViewAtom alias=_v0 key=[k0] columns=[k0, _n] anti=False
    ...     Aggregate group_by=[l.l_orderkey AS k0] aggregates=[count(*) AS _n]
    ...       Filter condition=l.l_commitdate < l.l_receiptdate
    ...         Scan table=lineitem alias=l columns=[l_orderkey, l_commitdate, l_receiptdate]
    ... ''', OptimizerContext(tpch_catalog()))

    Paper: AJU §5 (subqueries as maintained aggregate views joined along a key).
    """

    def views_for(self, condition: Expr, outer: set[str], nullable: Nullability, aliases: FreshAliases) -> Replacement:
        match condition:
            # R ⋉_{a=x ∧ b≠y} S = σ_{n(x) − n(x, y) > 0}(R ⟕ γ_{a; count}(S) ⟕ γ_{a, b; count}(S)) (TPC-H Q21)
            case Subquery(kind="exists") as subquery if (
                found := exists_other_views(subquery, outer, (aliases.name(0), aliases.name(1)))
            ):
                return found
            # R ⋉ σ_{a=b}(S) = R ⋈_{b = key} γ_{a; count}(S)  (each R tuple meets at most one view row)
            case Subquery(kind=("exists" | "in")) as subquery:
                view, joins = view_for(subquery, outer, aliases.name(), nullable)
                return [view], joins
        return None


def scalar_view(subquery: Subquery, outer: set[str], alias: str,
                nullable=lambda expr, plan: True) -> tuple[ViewAtom, list[Expr]]:
    """``(SELECT f(agg(x)) FROM S WHERE S.a = R.b ...)`` → ``V = π_{k, f(agg)} γ_{a; agg}(σ_{a IS NOT NULL}(S))``
    joined on k (no k when the subquery is uncorrelated: a one-row view). ``S.a = R.b`` never holds on
    a NULL ``a``, so its rows are in no outer row's subquery: the view leaves them out (a NULL group
    would otherwise meet an outer NULL in a join-select, which compares keys as values)."""
    match subquery.plan:
        # (SELECT f(agg(x)) FROM S WHERE S.a = R.b) = V(R.b) for V = π_{a, f(agg)} γ_{a; agg}(S): one row per key
        case Project(items=(item,), child=Aggregate(group_by=(), aggregates=(agg,), child=body)):
            pass
        # any other scalar subquery (a grouped one, a bare column) has no one-row-per-key view
        case _:
            raise CannotDecorrelate("the scalar subquery is not one aggregate without GROUP BY")
    if not isinstance(agg.expr, AggregateCall) or agg.expr.func == "count":
        # over no rows COUNT gives 0, not NULL, so dropping the unmatched outer rows would be wrong
        raise CannotDecorrelate("a correlated scalar COUNT is 0 over no rows; joining its view would drop those rows")
    split = equality_correlation(body, outer)
    if (hidden := hidden_correlation(split.source)) is not None:
        raise CannotDecorrelate(f"the scalar subquery {hidden}: a correlation is maintained only as equalities in "
                                "the subquery's own WHERE")
    body, pairs = split.filtered(), split.keys
    present = [Call("is not null", (inner,)) for inner, _ in pairs if nullable(inner, subquery.plan)]
    if present:
        body = Filter(conjunction(present), body)
    # Uncorrelated: a one-row view with an empty key; an equality with it joins on the value (Q15's
    # ``total_revenue = (SELECT max(...))``), so a new maximum touches only the rows equal to it.
    names = tuple(f"k{i}" for i in range(len(pairs)))
    grouped = Aggregate(tuple(NamedExpr(n, inner) for n, (inner, _) in zip(names, pairs, strict=True)), (agg,), body)
    items = tuple(NamedExpr(n, Column(None, n)) for n in names) + (NamedExpr("_val", item.expr),)
    view = ViewAtom(alias, names, names + ("_val",), False, Project(items, grouped))
    joins = [Call("=", (outer_col, Column(alias, n))) for n, (_, outer_col) in zip(names, pairs, strict=True)]
    return view, joins


class DecorrelateScalarSubqueries(DecorrelationRule):
    """Replace a correlated scalar aggregate in a join-graph condition by a view keyed by its correlation.

    A SUM/AVG/MIN/MAX over no rows is NULL, and a comparison with NULL is not true, so joining the
    view (which has no row for that key) drops exactly the outer rows the condition would reject.
    Runs after the nested-aggregate rule, which maintains the aggregate-query forms better (RPAI).

    >>> from catalog.tpch import tpch_catalog
    >>> from planner.optimizer.context import FreshAliases, OptimizerContext
    >>> from planner.optimizer.testing import assert_rewrite
    >>> assert_rewrite(DecorrelateScalarSubqueries(), '''
    ... JoinGraph conditions=[ps.ps_supplycost = scalar{
    ...     Project items=[_a0 AS _c0]
    ...       Aggregate group_by=[] aggregates=[min(ps2.ps_supplycost) AS _a0]
    ...         Filter condition=ps2.ps_partkey = ps.ps_partkey
    ...           Scan table=partsupp alias=ps2 columns=[ps_partkey, ps_supplycost]
    ...   }]
    ...   Atom table=partsupp alias=ps columns=[ps_partkey, ps_supplycost]
    ... ''', '''
    ... JoinGraph conditions=[ps.ps_supplycost = _v0._val, ps.ps_partkey = _v0.k0]
    ...   Atom table=partsupp alias=ps columns=[ps_partkey, ps_supplycost]
    ...   ViewAtom alias=_v0 key=[k0] columns=[k0, _val] anti=False
    ...     Project items=[k0 AS k0, _a0 AS _val]
    ...       Aggregate group_by=[ps2.ps_partkey AS k0] aggregates=[min(ps2.ps_supplycost) AS _a0]
    ...         Scan table=partsupp alias=ps2 columns=[ps_partkey, ps_supplycost]
    ... ''', OptimizerContext(tpch_catalog()))

    Paper: AJU §5 (TPC-H Q2's correlated MIN as a view joined along the part key).
    """

    def rewrite(self, node: LogicalPlan, ctx: OptimizerContext) -> LogicalPlan:
        match node:
            # σ_{v θ q(r)}(R) = σ_{v θ V.val}(R ⋈_{r.b = V.k} V), V = γ_{a; agg}(S): q over no row is NULL, θ not true
            case JoinGraph():
                outer, nullable = _relations_of(node), _nullability(node, ctx.catalog)
                atoms, extra = list(node.atoms), []

                def replace(e: Expr) -> Expr:
                    if not (isinstance(e, Subquery) and e.kind == "scalar"):
                        return e
                    try:
                        view, joins = scalar_view(e, outer, ctx.aliases.name(), nullable)
                    except CannotDecorrelate as reason:
                        ctx.refuse(self.name, str(reason))
                        return e
                    ctx.aliases.take(1)
                    atoms.append(view)
                    extra.extend(joins)
                    return Column(view.alias, "_val")

                conditions = [transform(c, replace) for c in node.conditions]
                if len(atoms) > len(node.atoms):
                    return attrs.evolve(node, atoms=tuple(atoms), conditions=tuple(conditions + extra))
        return node
