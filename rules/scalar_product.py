"""An uncorrelated scalar subquery in a select list becomes a product with its one-row view.

``π_{f(r, q)}(Q)`` with q an uncorrelated scalar subquery (``SUM(x) / (SELECT SUM(x) FROM t)``): q is
one value of the database state, not of the row, so the projection reads it from the product of Q's
rows with q's result, a relation of one row (none: q is NULL; more than one is Spark's run-time
error, raised by the subquery's one-row stage): π_{f(r, q)}(Q) = π_{f(r, s)}(Q × ρ_s(q)). The
subquery is maintained like any query (a global aggregate: O(1) per change); a row of Q costs O(1);
a change of q changes every row of the result, O(|Q|), which no plan avoids since every row shows q.
"""

from __future__ import annotations

from planner.ir.correlation import is_uncorrelated
from planner.ir.expressions import Column, Expr, Subquery, transform
from planner.ir.logical import LogicalPlan, NamedExpr, Project
from planner.ir.scalar_product import ScalarProduct
from planner.optimizer.context import OptimizerContext
from planner.optimizer.executor import Rule


class MaintainScalarProduct(Rule):
    """Rewrite ``Project(f(q), Q)`` with q an uncorrelated scalar subquery into
    ``Project(f(_s0), ScalarProduct([_s0], Q, [q's plan]))``.

    >>> from planner.optimizer.testing import assert_rewrite
    >>> assert_rewrite(MaintainScalarProduct(), '''
    ... Project items=[k AS k, _a0 / scalar{
    ...     Project items=[_a0 AS _c0]
    ...       Aggregate group_by=[] aggregates=[sum(t2.x) AS _a0]
    ...         Scan table=t alias=t2 columns=[x]
    ...   } AS share]
    ...   Aggregate group_by=[t.k AS k] aggregates=[sum(t.x) AS _a0]
    ...     Scan table=t alias=t columns=[k, x]
    ... ''', '''
    ... Project items=[k AS k, _a0 / _s0 AS share]
    ...   ScalarProduct names=[_s0]
    ...     Aggregate group_by=[t.k AS k] aggregates=[sum(t.x) AS _a0]
    ...       Scan table=t alias=t columns=[k, x]
    ...     Project items=[_a0 AS _c0]
    ...       Aggregate group_by=[] aggregates=[sum(t2.x) AS _a0]
    ...         Scan table=t alias=t2 columns=[x]
    ... ''', None)

    Law: π_{f(r, q)}(Q) = π_{f(r, s)}(Q × ρ_s(q)) for q uncorrelated, of at most one row (NULL if none).
    """

    def rewrite(self, node: LogicalPlan, ctx: OptimizerContext) -> LogicalPlan:
        match node:
            # π_{f(r, q)}(Q) = π_{f(r, s)}(Q × ρ_s(q)), q an uncorrelated scalar subquery (one row, NULL if none)
            case Project(items=items, child=child):
                taken = {c.name for c in child.output}
                found: dict[Subquery, Column] = {}

                def read(expr: Expr) -> Expr:
                    if not (isinstance(expr, Subquery) and expr.kind == "scalar" and is_uncorrelated(expr.plan)):
                        return expr
                    if expr not in found:
                        name = next(f"_s{i}" for i in range(len(taken) + 1) if f"_s{i}" not in taken)
                        taken.add(name)
                        found[expr] = Column(None, name, expr.dtype)
                    return found[expr]

                new_items = tuple(NamedExpr(item.name, transform(item.expr, read)) for item in items)
                if found:
                    return Project(new_items, ScalarProduct(tuple(c.name for c in found.values()), child,
                                                            tuple(q.plan for q in found)))
        return node
