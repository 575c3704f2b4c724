"""Recognise correlated nested aggregates and choose their index (RPAI §4.1, §4.3; else §4.2).

The shape (RPAI §4.1): an aggregate over the outer rows whose WHERE compares a *value* v with a
correlated scalar aggregate q, ``v θ q``. Which index maintains it depends on q's correlation:

- **rpai_tree** (§2.2.3, §3): q is SUM/COUNT over the outer relation itself, correlated by one
  inequality on one column (VWAP: ``b2.price <= b.price``), and v is a constant or uncorrelated
  aggregate. q grows monotonically along that column, so an insert shifts a *range* of q values:
  an RPAI tree keyed by q does it in O(log n).
- **pai_map** (§2.1.3): q is correlated by equalities only and v is uncorrelated. An insert moves
  one group's q value: a PAI map keyed by q moves that group's partial aggregate in O(1)
  (an RPAI tree when θ is an inequality, for the range sum).
- **per_key_index** (TPC-H Q17): q is correlated by equalities and v reads the outer row. Each
  correlation key keeps its outer rows in an RPAI tree keyed by v; its contribution is one range sum.
  This is AJU Theorem 15's join-select-aggregate (query (4)), the tree's nodes holding partial sums.
- **general** (§4.2): any other single-level shape over one outer relation: free, bound and result
  maps, O(n) per update instead of recomputation's O(n²). A subquery nested two levels whose lowest
  level reads the outer row (NQ2) joins it as a ``ParameterizedAggregate``; an uncorrelated subquery
  of any shape (NQ1) is maintained as its own query feeding one value.

The index strategies need exactly one nested comparison; the general one takes several over one
outer relation. GROUP BY on the outer aggregate keeps one index per group.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from planner.ir.expressions import (
    FLIPPED,
    AggregateCall,
    Call,
    Column,
    Expr,
    Subquery,
    columns,
    conjunction,
    conjuncts,
    contains_subquery,
    deep_columns,
    transform,
)
from planner.ir.logical import Aggregate, Filter, LogicalPlan, Project, Scan
from planner.ir.maintenance import (
    Atom,
    Correlation,
    JoinGraph,
    NestedAggregate,
    ParameterizedAggregate,
    SubqueryAggregate,
    fed_as_number,
)
from planner.ir.notation import print_expr
from planner.optimizer.context import OptimizerContext
from planner.optimizer.executor import Rule

RING = ("sum", "count", "avg")
INEQUALITIES = ("<", "<=", ">", ">=")


class NotRecognized(Exception):
    """Why a nested aggregate is outside what the rule handles (shown by EXPLAIN)."""


def subquery_aggregate(subquery: Subquery, outer_aliases: set[str]) -> SubqueryAggregate:
    """Read ``(SELECT f(agg) FROM t [WHERE ...])`` into a ``SubqueryAggregate``."""
    match subquery.plan:
        # (SELECT f(agg(x)) FROM t ...) is one value per outer row: f over one ring aggregate
        case Project(items=(item,), child=Aggregate(group_by=(), aggregates=(agg,), child=inner)):
            pass
        # a grouped subquery or a bare column is no one value per outer row of a ring aggregate
        case _:
            raise NotRecognized("the subquery is not a single scalar aggregate over one relation")
    call = agg.expr
    if not isinstance(call, AggregateCall) or call.func not in RING or call.distinct:
        raise NotRecognized(f"the subquery's aggregate {print_expr(call)} is not a SUM, COUNT or AVG without DISTINCT, "
                            "the aggregates whose index of sums a delete updates")
    match inner:
        # σ_p(t): the aggregate reads t's rows passing p
        case Filter(condition=condition, child=Scan() as scan):
            pass
        # t = σ_true(t)
        case Scan() as scan:
            condition = None
        # a join or a nested subquery under the aggregate: no index of one relation's sums
        case _:
            raise NotRecognized("the subquery reads more than one relation or nests another subquery")
    where, correlating, correlations = [], [], []
    for part in conjuncts(condition):
        if contains_subquery(part):
            raise NotRecognized("the subquery nests another subquery")
        if all(c.table == scan.alias for c in columns(part)):
            where.append(part)
            continue
        correlating.append(part)
        match part:
            # inner θ outer = outer θ' inner: a correlation kept as inner θ outer
            case Call(op=op, args=(Column() as a, Column() as b)) if op in FLIPPED and op != "<>":
                if a.table == scan.alias and b.table in outer_aliases:
                    correlations.append(Correlation(a, op, b))
                elif b.table == scan.alias and a.table in outer_aliases:
                    correlations.append(Correlation(b, FLIPPED[op], a))
    if len(correlations) != len(correlating):
        correlations = []  # some conjunct is not ``inner op outer``: only the general algorithm applies
    value = transform(item.expr, lambda e: Column(None, "_agg") if e == Column(None, agg.name) else e)
    return SubqueryAggregate(scan.table, scan.alias, call.func, call.arg, conjunction(where),
                             conjunction(correlating), tuple(correlations), value)


def parameterized_aggregate(subquery: Subquery, hoist: Callable[[Subquery], Column]) -> ParameterizedAggregate:
    """Read a subquery nested two levels (NQ2's middle level) into a ``ParameterizedAggregate``.

    Its one nested comparison must be ``parameter op q``: q correlated to this level's relation by one
    inequality on one column (the VWAP shape, an RPAI tree), and the parameter built from constants
    and subqueries that read only the outer query, which ``hoist`` makes the enclosing query's own.
    """
    match subquery.plan:
        # a middle level γ(σ_p(t)) whose p holds the innermost subquery: one comparison parameter θ q
        case Project(child=Aggregate(child=Filter(condition=condition, child=Scan() as scan)) as aggregate):
            pass
        # any other shape of the middle level has no RPAI index
        case _:
            raise NotRecognized("a subquery nested two levels must be a scalar aggregate over one relation")
    nested = [c for c in conjuncts(condition) if contains_subquery(c)]
    plain = [c for c in conjuncts(condition) if not contains_subquery(c)]
    if len(nested) != 1:
        raise NotRecognized("a subquery nested two levels must compare exactly one value with a subquery")
    if any(c.table != scan.alias for part in plain for c in columns(part)):
        raise NotRecognized("a subquery nested two levels may read the outer query only through its own subqueries")
    flat = attrs.evolve(subquery, plan=attrs.evolve(
        subquery.plan, child=attrs.evolve(aggregate, child=attrs.evolve(aggregate.child, condition=conjunction(plain))
                                          if plain else scan)))
    middle = subquery_aggregate(flat, set())
    prefixes: list[SubqueryAggregate] = []

    def placeholder(e: Expr) -> Expr:
        if not isinstance(e, Subquery):
            return e
        if scan.alias in {c.table for c in deep_columns(e)}:
            prefixes.append(subquery_aggregate(e, {scan.alias}))
            return Column(None, "_q")
        return hoist(e)

    match transform(nested[0], placeholder):
        # parameter θ q, as written
        case Call(op=op, args=(parameter, Column(table=None, name="_q"))) if op in FLIPPED and op != "<>":
            pass
        # q θ parameter = parameter θ' q (θ' the flipped comparison)
        case Call(op=op, args=(Column(table=None, name="_q"), parameter)) if op in FLIPPED and op != "<>":
            op = FLIPPED[op]
        # a comparison that is not parameter θ q (<> included: no range of the prefix sums) has no index
        case _:
            raise NotRecognized("a subquery nested two levels must compare a parameter with one correlated aggregate")
    prefix = prefixes[0] if len(prefixes) == 1 else None
    (correlation,) = prefix.correlations if prefix is not None and len(prefix.correlations) == 1 else (None,)
    if not (
        correlation is not None and correlation.op in INEQUALITIES and correlation.inner.name == correlation.outer.name
        and prefix.table == scan.table and prefix.func in ("sum", "count") and prefix.value == Column(None, "_agg")
        and prefix.where == _retarget(middle.where, scan.alias, prefix.alias)
        and not any(c.table is not None or c.name == "_q" for c in columns(parameter))
    ):
        raise NotRecognized("a subquery nested two levels is maintained only in the VWAP shape: a SUM/COUNT over "
                            "the same rows correlated by one inequality on one column, compared with a parameter "
                            "that reads the outer query only through subqueries")
    return ParameterizedAggregate(middle, parameter, op, prefix)


def choose_strategy(predicate: Expr, subqueries: list[SubqueryAggregate], outer: JoinGraph) -> str:
    """The strongest strategy whose preconditions hold (module docstring); "general" otherwise."""
    single_atom = len(outer.atoms) == 1 and isinstance(outer.atoms[0], Atom)
    correlated = [i for i, q in enumerate(subqueries) if q.correlation is not None]
    match predicate:
        # v θ s, s uncorrelated and v over outer columns: one threshold s, the outer rows ordered by v
        case Call(args=(value, Column(table=None, name=name))) if (
            not correlated and any(c.table is not None for c in columns(value))
            and not any(c.table is None for c in columns(value))
        ):
            return "per_key_index"  # a global threshold: one key, the outer rows indexed by v
        # v θ s_k, s_k correlated: per correlation key (=), or a prefix sum along one inequality (RPAI)
        case Call(op=op, args=(value, Column(table=None, name=name))) if (
            len(correlated) == 1 and name == f"_s{correlated[0]}" and subqueries[correlated[0]].correlations
            and not any(c.name in {f"_s{i}" for i in correlated} for c in columns(value))
        ):
            q = subqueries[correlated[0]]
            value_reads_outer = any(c.table is not None for c in columns(value))
            value_reads_subqueries = any(c.table is None for c in columns(value))
            kinds = {c.op for c in q.correlations}
            if kinds == {"="} and not value_reads_outer:
                return "pai_map"
            if kinds == {"="} and not value_reads_subqueries:
                return "per_key_index"
            (correlation,) = q.correlations if len(q.correlations) == 1 else (None,)
            if (
                single_atom and correlation is not None and correlation.op in INEQUALITIES
                and q.func in ("sum", "count") and q.value == Column(None, "_agg") and op != "="
                and not value_reads_outer and outer.atoms[0].table == q.table
                and correlation.inner.name == correlation.outer.name
                and outer.atoms[0].predicate == _retarget(q.where, q.alias, outer.atoms[0].alias)
            ):
                return "rpai_tree"
    return general_strategy(outer)


def general_strategy(outer: JoinGraph) -> str:
    """RPAI's general algorithm, which takes any nested predicate over one outer relation."""
    if not (len(outer.atoms) == 1 and isinstance(outer.atoms[0], Atom)):
        raise NotRecognized("the general algorithm (RPAI §4.2) is implemented for one outer relation only")
    return "general"


def _normalize_comparison(predicate: Expr, subqueries: list[SubqueryAggregate]):
    """Write a single comparison as ``v θ _s<k>`` with the correlated aggregate (or, when there is
    none, the one uncorrelated aggregate compared with outer columns) alone on the right: the form
    the index strategies read. Arithmetic around that aggregate moves into its ``value``."""
    match predicate:
        # a θ b = b θ' a: either side may hold the aggregate moved to the right
        case Call(op=op, args=(left, right)) if op in FLIPPED and op != "<>":
            pass
        # <> and any non-comparison stay as written: no side to isolate
        case _:
            return predicate, subqueries
    for side, other, θ in ((right, left, op), (left, right, FLIPPED[op])):
        used = {c.name for c in columns(side) if c.table is None}
        if len(used) != 1 or any(c.table is not None for c in columns(side)):
            continue
        k = int(next(iter(used))[2:])
        if any(c.table is None for c in columns(other)) and subqueries[k].correlation is None:
            continue  # both sides uncorrelated aggregates: not an index form
        if subqueries[k].correlation is None and not any(c.table is not None for c in columns(other)):
            continue
        q = subqueries[k]
        value = transform(side, lambda e, k=k, q=q: q.value if e == Column(None, f"_s{k}") else e)
        subqueries = [*subqueries[:k], attrs.evolve(q, value=value), *subqueries[k + 1 :]]
        return Call(θ, (other, Column(None, f"_s{k}"))), subqueries
    return predicate, subqueries


def _nests_subquery(subquery: Subquery) -> bool:
    return any(contains_subquery(e) for node in subquery.plan.walk() for e in node.expressions())


def _retarget(expr: Expr | None, old: str, new: str) -> Expr | None:
    if expr is None:
        return None
    return transform(expr, lambda e: Column(new, e.name) if isinstance(e, Column) and e.table == old else e)


class RecognizeCorrelatedNestedAggregate(Rule):
    """Rewrite ``γ_agg(σ_{v θ q}(outer))`` with a correlated scalar aggregate q into ``NestedAggregate``.

    Preconditions: normalization has run (the nested comparison is a join-graph condition).

    >>> from planner.optimizer.testing import assert_rewrite
    >>> assert_rewrite(RecognizeCorrelatedNestedAggregate(), '''
    ... Aggregate group_by=[] aggregates=[sum(b.price * b.volume) AS _a0]
    ...   JoinGraph conditions=[0.75 * scalar{
    ...       Project items=[_a0 AS _c0]
    ...         Aggregate group_by=[] aggregates=[sum(b1.volume) AS _a0]
    ...           Scan table=bids alias=b1 columns=[volume, price]
    ...     } < scalar{
    ...       Project items=[_a0 AS _c0]
    ...         Aggregate group_by=[] aggregates=[sum(b2.volume) AS _a0]
    ...           Filter condition=b2.price <= b.price
    ...             Scan table=bids alias=b2 columns=[volume, price]
    ...     }]
    ...     Atom table=bids alias=b columns=[volume, price]
    ... ''', '''
    ... NestedAggregate[rpai_tree] group_by=[] aggregates=[sum(b.price * b.volume) AS _a0] predicate=0.75 * _s0 < _s1
    ...     subqueries=[SubqueryAggregate(table=bids, alias=b1, func=sum, argument=b1.volume, correlations=[], value=(_agg)),
    ...       SubqueryAggregate(table=bids, alias=b2, func=sum, argument=b2.volume, correlation=b2.price <= b.price,
    ...         correlations=[Correlation(inner=b2.price, op='<=', outer=b.price)], value=(_agg))]
    ...   JoinGraph
    ...     Atom table=bids alias=b columns=[volume, price]
    ... ''', OptimizerContext(None))

    Paper: RPAI §4.1 (grammar, free/bound columns), §4.3 (when aggregate indexes apply).
    """

    def rewrite(self, node: LogicalPlan, ctx: OptimizerContext) -> LogicalPlan:
        match node:
            # γ(σ_{v θ q}(R)) with q correlated: maintained by an index on q's values (RPAI §4.3)
            case Aggregate(group_by=group_by, aggregates=aggregates, child=JoinGraph() as graph):
                nested = [c for c in graph.conditions if contains_subquery(c)]
                if not nested:
                    return node
                try:
                    forced = ctx.nested_strategy if ctx is not None else None
                    return self._rewrite(group_by, aggregates, graph, nested, forced)
                except NotRecognized as reason:
                    ctx.refuse(self.name, str(reason))
        return node


    def _rewrite(self, group_by, aggregates, graph: JoinGraph, nested: list[Expr], forced: str | None) -> LogicalPlan:
        for item in aggregates:
            if not (isinstance(item.expr, AggregateCall) and item.expr.func in RING and not item.expr.distinct):
                raise NotRecognized("the outer aggregates must be SUM, COUNT or AVG")
        outer_aliases = {a.alias for a in graph.atoms if isinstance(a, Atom)}
        subqueries: list[SubqueryAggregate] = []

        feeds: list[LogicalPlan] = []

        def added(subquery: SubqueryAggregate | ParameterizedAggregate) -> Column:
            subqueries.append(subquery)
            return Column(None, f"_s{len(subqueries) - 1}")

        def hoist(e: Subquery) -> Column:
            """A subquery that reads only this level's outer rows (also from two levels down) is its own."""
            return added(subquery_aggregate(e, outer_aliases))

        def placeholder(e: Expr) -> Expr:
            if not isinstance(e, Subquery):
                return e
            if e.kind != "scalar":
                raise NotRecognized(f"{e.kind.upper()} subqueries are not maintained by nested-aggregate indexes")
            try:
                return hoist(e)
            except NotRecognized:
                if not {c.table for c in deep_columns(e)} & outer_aliases:
                    if not fed_as_number(e.dtype):
                        raise NotRecognized(f"an uncorrelated scalar subquery of type {e.dtype} feeds no aggregate "
                                            "index (its value is kept as a sum of changes: numbers, dates and "
                                            "timestamps only); it is compared as a threshold instead") from None
                    # an uncorrelated subquery of any shape: its own maintained query feeds its value
                    feeds.append(e.plan)
                    return added(SubqueryAggregate("", f"_feed{len(feeds) - 1}", "value", None, None, None, (),
                                                   Column(None, "_agg")))
                if not _nests_subquery(e):
                    raise
                return added(parameterized_aggregate(e, hoist))

        predicate = conjunction([transform(c, placeholder) for c in nested])
        remaining = attrs.evolve(graph, conditions=tuple(c for c in graph.conditions if c not in nested))
        if any(isinstance(q, ParameterizedAggregate) for q in subqueries):
            # the paper's NQ2: "we have to rely on the general algorithm for the outermost query"
            strategy = general_strategy(remaining)
        else:
            predicate, subqueries = _normalize_comparison(predicate, subqueries)
            strategy = choose_strategy(predicate, subqueries, remaining)
        if forced is not None and forced != strategy:
            if forced != "general":
                raise NotRecognized(f"strategy {forced} was forced but its preconditions do not hold")
            strategy = "general"  # every shape the index strategies take, the general algorithm takes too
        return NestedAggregate(strategy, group_by, aggregates, predicate, tuple(subqueries), remaining, tuple(feeds))
