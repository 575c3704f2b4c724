"""The conjunctive query of a normalized plan, as the hypergraph classes (Olteanu §4) read it.

Normalization leaves a query as ``Limit? Sort? Project? (Filter? Aggregate)? JoinGraph``: one join
block of atoms under at most one GROUP BY. Its conjunctive query is the GCQ of that block
(``gcq_build.from_join_graph``) whose free variables are the GROUP BY columns (or the projected
columns when there is no aggregate) and whose atoms keep only the columns the query uses: a column
read only by an atom's pushed selection is projected away with the selection, which changes no
class (it is a bound variable of one atom). A condition over several atoms that is neither an
equality nor an inequality between two columns (Q7's ``OR`` over two nations) becomes a pseudo-atom
``θi`` over its variables: conservative, since a hyperedge can only make a class fail.

Anything else (a subquery, an outer join, a view in the join block, a set operation, an aggregate
over an aggregate) is outside the survey's conjunctive queries; the reader returns the reason.
"""

from __future__ import annotations

import attrs

from planner.ir.expressions import Call, Column, Expr, columns, contains_subquery
from planner.ir.gcq import Atom, Gcq
from planner.ir.gcq_build import from_join_graph
from planner.ir.logical import Aggregate, Distinct, Filter, Limit, LogicalPlan, Project, Sort
from planner.ir.maintenance import Atom as PlanAtom
from planner.ir.maintenance import JoinGraph
from planner.ir.notation_printer import print_expr

PSEUDO_ATOM = "θ"


def is_condition_atom(atom: Atom) -> bool:
    """A pseudo-atom this reader made for a condition (it reads no table)."""
    return not atom.table and atom.alias.startswith(PSEUDO_ATOM)


@attrs.frozen
class JoinQuery:
    """The query's GCQ; ``conditions`` maps each pseudo-atom alias to the condition it stands for."""

    query: Gcq
    conditions: tuple[tuple[str, str], ...] = ()


@attrs.frozen
class NotAJoinQuery:
    reason: str


def join_query(plan: LogicalPlan) -> JoinQuery | NotAJoinQuery:
    """The conjunctive query of a normalized ``plan``, or why it has none."""
    for node in plan.walk():
        if any(contains_subquery(e) for e in node.expressions()):
            return NotAJoinQuery("a subquery remains in the plan: the classes are defined for conjunctive queries")
    parent, block = _join_block(plan)
    if isinstance(block, NotAJoinQuery):
        return block
    graph = block if isinstance(block, JoinGraph) else JoinGraph((block,))
    if graph.preserved:
        return NotAJoinQuery(f"outer join (preserving {', '.join(graph.preserved)}): not a conjunctive query")
    views = [type(a).__name__ for a in graph.atoms if not isinstance(a, PlanAtom)]
    if views:
        return NotAJoinQuery(f"the join block holds a {views[0]} (a decorrelated subquery or view), not a base table")
    free, used = _free_and_used(parent)
    used |= {c for cls in graph.join_classes for c in cls} | {c for e in graph.conditions for c in columns(e)}
    kept, other = _split_conditions(graph.conditions)
    atoms = graph.atoms if free is None else tuple(
        attrs.evolve(a, columns=tuple(c for c in a.columns if Column(a.alias, c) in used)) for a in graph.atoms
    )
    query = from_join_graph(attrs.evolve(graph, atoms=atoms, conditions=kept), output=free)
    return _with_pseudo_atoms(query, other)


def _join_block(plan: LogicalPlan) -> tuple[LogicalPlan | None, LogicalPlan | NotAJoinQuery]:
    """The node right above the join block (None: the block is the root) and the block."""
    parent, node, aggregates = None, plan, 0
    while True:
        match node:
            case JoinGraph() | PlanAtom():
                return parent, node
            case Aggregate():
                aggregates += 1
                if aggregates > 1:
                    return parent, NotAJoinQuery("an aggregate over an aggregate: the classes are for one join block")
            case Limit() | Sort() | Distinct() | Project():
                pass
            case Filter(child=Aggregate()):
                pass  # HAVING reads the aggregate's output, not the join's variables
            case _:
                return parent, NotAJoinQuery(f"{node.node_name} above or in the join block: not a conjunctive query")
        parent, node = node, node.children[0]


def _free_and_used(parent: LogicalPlan | None) -> tuple[set[Column] | None, set[Column]]:
    """Free columns (GROUP BY, or the projection; None: every column) and every column read above the block."""
    match parent:
        case Aggregate(group_by=group_by, aggregates=aggregates):
            free = {c for item in group_by for c in columns(item.expr)}
            return free, free | {c for item in aggregates for c in columns(item.expr)}
        case Project(items=items):
            free = {c for item in items for c in columns(item.expr)}
            return free, set(free)
    return None, set()


def _is_gcq_predicate(part: Expr) -> bool:
    """What ``gcq_build`` folds: an equality or inequality between columns, a BETWEEN of columns, a one-atom filter."""
    if len({c.table for c in columns(part)}) <= 1:
        return True
    return isinstance(part, Call) and part.op in ("=", "<", "<=", ">", ">=", "between") and all(
        isinstance(a, Column) for a in part.args
    )


def _split_conditions(conditions: tuple[Expr, ...]) -> tuple[tuple[Expr, ...], tuple[Expr, ...]]:
    return (tuple(c for c in conditions if _is_gcq_predicate(c)),
            tuple(c for c in conditions if not _is_gcq_predicate(c)))


def _with_pseudo_atoms(query: Gcq, conditions: tuple[Expr, ...]) -> JoinQuery:
    if not conditions:
        return JoinQuery(query)
    variable = {(a.alias, c): v for a in query.atoms for c, v in zip(a.columns, a.variables, strict=True)}
    pseudo, shown = [], []
    for i, condition in enumerate(conditions, start=1):
        alias = f"{PSEUDO_ATOM}{i}"
        names = sorted({variable[(c.table, c.name)] for c in columns(condition)})
        pseudo.append(Atom(alias, tuple(names)))
        shown.append((alias, print_expr(condition)))
    return JoinQuery(attrs.evolve(query, atoms=query.atoms + tuple(pseudo)), tuple(shown))
