"""Say why a plan has no maintenance plan: the first operator no strategy covered, and the reason.

The optimizer leaves logical nodes it could not rewrite in place; this module names the deepest
such node (the real obstacle: its parents fail only because of it) in the user's terms.
"""

from __future__ import annotations

from planner.ir.correlation import hidden_correlation
from planner.ir.expressions import Subquery, contains_subquery, walk
from planner.ir.logical import (
    Aggregate,
    Distinct,
    Filter,
    Join,
    Limit,
    LogicalPlan,
    Project,
    SubqueryAlias,
)
from planner.ir.maintenance import Atom, GroupAggregate, JoinGraph, RingAggregate, ViewAtom
from planner.ir.outer_join import OuterJoin
from planner.optimizer.context import OptimizerContext


def _reason(node: LogicalPlan, ctx: OptimizerContext) -> str:
    refusals = ctx.refusals
    match node:
        # a subquery left in a join's conditions: every decorrelating rule declined it (their refusals say why)
        case JoinGraph(conditions=conds) if any(contains_subquery(c) for c in conds):
            reasons = [f"{label}: {refusals[rule]}" for rule, label in (
                ("DecorrelateNullAwareNotIn", "as a null-aware NOT IN"),
                ("DecorrelateInequalityCorrelation", "as an EXISTS/IN correlated by an inequality"),
                ("DecorrelateExistsAndIn", "as an EXISTS/IN view"),
                ("RecognizeCorrelatedNestedAggregate", "as a nested aggregate"),
                ("DecorrelateScalarSubqueries", "as a scalar subquery's view"),
            ) if rule in refusals]
            return "a WHERE condition holds a subquery that no rule maintains" + (
                f" ({'; '.join(reasons)})" if reasons else " (it is none of the kinds maintained: EXISTS/IN correlated by equalities and at most one inequality, a correlated aggregate compared with a column, an uncorrelated scalar compared with a value)")
        # a join graph left standing: no join strategy (FK tree, GJT, change propagation) replaced it
        case JoinGraph():
            why = refusals.get("ChooseForeignKeyJoinTree", "no join strategy applies")
            if "ChooseGeneralizedJoinTree" in refusals:
                why += f"; nor a generalized join tree: {refusals['ChooseGeneralizedJoinTree']}"
            if "ChooseChangePropagationJoin" in refusals:
                why += f"; and the general fallback does not apply either: {refusals['ChooseChangePropagationJoin']}"
            aliases = ", ".join(a.alias for a in node.atoms if isinstance(a, Atom | ViewAtom))
            return f"the join of {aliases} cannot be maintained: {why}"
        # L ⋈ R is maintained once L and R are: a binary join left over has a side nothing maintains
        case Join(kind=kind):
            return (f"a {kind} join is maintained once each side is (a relation, a join, a derived table or view); "
                    "here a side is not")
        # γ(Q) left as an Aggregate: MaintainRingAggregate declined it
        case Aggregate():
            return refusals.get("MaintainRingAggregate", "GROUP BY over this input is not maintained yet")
        # δ(Q) is maintained as a count per row of π(Q) only when Q is a join or an aggregate
        case Distinct(child=child):
            below = child.child if isinstance(child, Project) else child
            return (f"SELECT DISTINCT is maintained over the select list of a join or an aggregate (a count per "
                    f"row), not over {below.node_name}")
        # ρ_a(Q) left as an alias: Q was neither inlined nor maintained as a view
        case SubqueryAlias(alias=alias):
            return (f"the derived table or WITH view {alias} sorts, limits or aggregates, so it cannot be inlined, "
                    "and it is none of the kinds maintained as a view: a grouped select list keyed by its group, "
                    "window functions, a set operation")
        # limit_k(Q) without an order is not a function of Q's rows (any k rows are an answer)
        case Limit():
            return "LIMIT without ORDER BY is not deterministic; add ORDER BY"
        # σ_p(L ⟕ R) with a subquery in p: its decorrelation over the outer join was declined
        case Filter(condition=cond) if contains_subquery(cond) and "JoinSubqueriesOverOuterJoins" in refusals:
            return f"a WHERE subquery over an outer join: {refusals['JoinSubqueriesOverOuterJoins']}"
        # σ_p(Q) with a subquery in p is maintained only as a comparison with an uncorrelated scalar
        case Filter(condition=cond, child=child) if contains_subquery(cond):
            clause = "HAVING" if isinstance(child, RingAggregate | GroupAggregate) else "a condition"
            return (f"{clause} with a subquery is maintained only as a comparison (<, <=, =, <>, >=, >) with an "
                    "uncorrelated scalar subquery (a threshold, as Q11's); this one is correlated or is not a "
                    "scalar comparison")
        # σ_p(Q) is maintained as a selection on one relation or as a HAVING; this one is neither
        case Filter():
            return "this filter is neither a selection on one relation nor a HAVING, the filters maintained"
    return f"no incremental operator implements {node.node_name}"


def _subquery_reason(node: LogicalPlan) -> str:
    """Why a subquery held by a maintained operator (a select list, a sort key) is not maintained."""
    clause = {"Project": "the SELECT list", "Sort": "ORDER BY", "TopK": "ORDER BY"}.get(node.node_name, "this operator")
    hidden = [why for e in node.expressions() for q in walk(e) if isinstance(q, Subquery)
              if (why := hidden_correlation(q.plan)) is not None]
    if hidden:
        return f"{clause} holds a subquery that {hidden[0]}: a correlation is maintained only in the subquery's own WHERE"
    return (f"{clause} holds a subquery, which is maintained only in WHERE or HAVING (EXISTS/IN, a comparison with "
            "a correlated aggregate, or a comparison with an uncorrelated scalar as a one-row view) and, in a "
            "select list, as an uncorrelated scalar, without GROUP BY an aggregate correlated by equalities, and "
            "an EXISTS / IN correlated by equalities (in a grouped block: inside an aggregate's argument); "
            "this one is none of these")


def why_unsupported(plan: LogicalPlan, ctx: OptimizerContext) -> str | None:
    """One sentence naming the deepest unmaintained operator and why it is unmaintained; else the
    deepest maintained operator still holding a subquery; None when every operator is maintained
    (then the lowering's own error names what it could not build)."""
    deepest: LogicalPlan | None = None
    holder: LogicalPlan | None = None
    # a derived table kept whole as an outer join's side, or read as a relation (a view without a key): its
    # plan is maintained, its alias re-qualifies it
    sides = {id(side) for node in plan.walk() if isinstance(node, OuterJoin | ViewAtom) for side in node.children
             if isinstance(side, SubqueryAlias)}
    for node in plan.walk():
        if not node.maintained and id(node) not in sides:
            deepest = node
        elif any(contains_subquery(e) for e in node.expressions()):
            holder = node
    if deepest is not None:
        return f"{deepest.node_name}: {_reason(deepest, ctx)}"
    if holder is not None:
        return f"{holder.node_name}: {_subquery_reason(holder)}"
    return None
