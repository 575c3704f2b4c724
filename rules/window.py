"""Window functions maintained per partition, and the top-N-per-group pattern (Flink's Top-N).

A ``Window`` becomes a ``MaintainedWindow``: its rows kept per partition in window order, so a change
re-reads only the run of rows whose window values it can alter (operators/stages/window.py). The
strategy names that run's length (planner/ir/window.py, ``WINDOW_COSTS``).

The top-N pattern is a derived table computing a rank, filtered on it outside:
``SELECT ... FROM (SELECT ..., ROW_NUMBER() OVER (PARTITION BY p ORDER BY o) AS rn FROM t) x WHERE rn <= k``.
Ranks never decrease along the window order, so only the rows ranked at most k can pass: the window
emits only them (``rank_limit``), and a change below the top N costs O(log n). The filter stays
above, so ``rn = 1`` and ``rn < k`` keep their exact meaning.
"""

from __future__ import annotations

import attrs

from planner.ir.expressions import FLIPPED, Call, Column, Expr, Literal, conjuncts
from planner.ir.logical import Filter, LogicalPlan, NamedExpr, Project, SubqueryAlias
from planner.ir.window import RANKING, MaintainedWindow, Window, function_name, strategy_of
from planner.optimizer.context import OptimizerContext
from planner.optimizer.executor import Rule

#: The largest rank a comparison ``rank op k`` lets through.
_LIMIT = {"<=": lambda k: k, "<": lambda k: k - 1, "=": lambda k: k}


class MaintainWindow(Rule):
    """``Window(spec, Q)`` → ``MaintainedWindow(strategy, spec, Q)``, bounded by an outer rank filter.

    >>> from planner.optimizer.testing import assert_rewrite
    >>> assert_rewrite(MaintainWindow(), '''
    ... Filter condition=x.rn <= 3
    ...   SubqueryAlias alias=x
    ...     Project items=[t.a AS a, _w0 AS rn]
    ...       Window partition_by=[t.p] order_by=[t.a DESC] nulls_first=[False] frame=WindowFrame(unit=rows)
    ...           functions=[row_number() AS _w0]
    ...         Scan table=t alias=t columns=[p, a]
    ... ''', '''
    ... Filter condition=x.rn <= 3
    ...   SubqueryAlias alias=x
    ...     Project items=[t.a AS a, _w0 AS rn]
    ...       MaintainedWindow[top_n] partition_by=[t.p] order_by=[t.a DESC] nulls_first=[False] frame=WindowFrame(unit=rows) functions=[row_number() AS _w0]
    ...           rank_limit=3 ranked=_w0
    ...         Scan table=t alias=t columns=[p, a]
    ... ''', None)

    Law: σ_{r ≤ k}(W) = σ_{r ≤ k}(W restricted to the rows with r ≤ k), for a ranking column r.
    """

    def rewrite(self, node: LogicalPlan, ctx: OptimizerContext) -> LogicalPlan:
        match node:
            # W = the window computed per partition, kept by the strategy its functions and frame allow
            case Window(partition_by, order_by, nulls_first, frame, functions, child):
                return MaintainedWindow(strategy_of(functions, frame, None), partition_by, order_by, nulls_first,
                                        frame, functions, child)
            # σ_{x.rn ≤ k}(π(W) AS x): W emits only the rows ranked at most k (W is maintained: children first)
            case Filter(condition, SubqueryAlias(alias, Project(items, MaintainedWindow() as window) as project)) \
                    if window.rank_limit is None and (found := _rank_limit(condition, alias, items, window)):
                ranked, limit = found
                bounded = attrs.evolve(window, rank_limit=limit, ranked=ranked,
                                       strategy=strategy_of(window.functions, window.frame, limit))
                return Filter(condition, SubqueryAlias(alias, Project(project.items, bounded)))
        return node


def _rank_limit(condition: Expr, alias: str, items: tuple[NamedExpr, ...],
                window: MaintainedWindow) -> tuple[str, int] | None:
    """(the ranking function's column, the largest rank the condition lets through), if a conjunct
    compares a ranking column of ``window`` with an integer constant; the tightest such bound."""
    ranking = {f.name for f in window.functions if function_name(f.expr) in RANKING}
    read_as = {Column(alias, item.name): item.expr.name for item in items
               if isinstance(item.expr, Column) and item.expr.table is None and item.expr.name in ranking}
    found: tuple[str, int] | None = None
    for conjunct in conjuncts(condition):
        match conjunct:
            # rank θ k, as written
            case Call(op, (Column() as column, Literal(value=int() as k))) if op in _LIMIT:
                pass
            # k θ rank = rank θ' k (θ' the flipped comparison)
            case Call(op, (Literal(value=int() as k), Column() as column)) if FLIPPED.get(op) in _LIMIT:
                op = FLIPPED[op]
            # any other conjunct bounds no rank: a filter above the top-k
            case _:
                continue
        name = read_as.get(column)
        if name is not None and (found is None or _LIMIT[op](k) < found[1]):
            found = (name, max(_LIMIT[op](k), 0))
    return found
