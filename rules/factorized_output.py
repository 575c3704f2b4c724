"""Factorized output: a projection of a q-hierarchical natural join kept on a view tree (Olteanu Ex. 4.4).

A ``SELECT`` of columns or expressions of them (no aggregate) over a natural equi-join whose query,
or whose Σ-reduct by keys and declared FDs (Def. 4.9, Thm 4.11), is q-hierarchical for its free
variables (the columns the select list reads) is maintained by a view tree over the count ring: one view per variable, the free
variables on top, O(1) work per single-tuple update (Thm 4.1), and the result never materialized:
it is enumerated from the views with constant delay, each free tuple with its payload, the number
of join rows it stands for, which is exactly SQL's bag multiplicity of the projected row. A
``SELECT DISTINCT`` of exactly those columns counts each free tuple once. A hierarchical query that
is not q-hierarchical (a free variable below a bound one, Ex. 4.3's ``Q(X) = R(X,Y)·S(Y)``) has no
such guarantee and is refused with the witness; a join with other conditions (or an outer join, a
view) is another strategy's shape and left alone without a word (unless a view tree is forced).

Preconditions: runs after ``ChooseForeignKeyJoinTree`` (joins along foreign keys keep AJU's live
tuples: O(λ) and no intermediate views) and after ``ChooseViewTree`` (a ring aggregate reads its
payload off the tree instead of enumerating the join), before the generalized join tree and the
binary fallback. Join columns may be NULL: a NULL never joins, so the atoms drop such rows first.

``join_strategy="view-tree"`` (to compare) also takes an aggregate ``ChooseViewTree`` refused: the
tree then enumerates the GROUP BY and argument columns (they must be q-hierarchical as free
variables) into the ordinary aggregate above it.
"""

from __future__ import annotations

import attrs

from catalog.types import BOOLEAN
from planner.ir.expressions import Call, Column, columns, conjunction
from planner.ir.join_query import NotAJoinQuery
from planner.ir.logical import Aggregate, Distinct, LogicalPlan, NamedExpr, Project
from planner.ir.maintenance import Atom, JoinGraph
from planner.ir.view_tree_plan import FactorizedViewTree, class_variables
from planner.optimizer.context import OptimizerContext
from planner.optimizer.executor import Rule
from rules.view_tree import choose_order, classes_of, shape_problem


class ChooseFactorizedViewTree(Rule):
    """Replace the natural join under a projection by a ``FactorizedViewTree`` when q-hierarchical.

    Q(A, B, C) = R(A, B)·S(A, C) is q-hierarchical: A is in every atom and free. S's nullable join
    column gets ``IS NOT NULL``; the tree keeps the join factorized as Ex. 4.4 does:

    >>> from catalog.ddl import catalog_from_ddl
    >>> from planner.ir.notation import parse_plan, print_expr
    >>> catalog = catalog_from_ddl("CREATE TABLE r (a INT NOT NULL, b INT); CREATE TABLE s (a INT, c INT)")
    >>> tree = ChooseFactorizedViewTree().apply(parse_plan('''
    ... Project items=[r.a AS a, r.b AS b, s.c AS c]
    ...   JoinGraph join_classes=[[r.a, s.a]]
    ...     Atom table=r alias=r columns=[a, b]
    ...     Atom table=s alias=s columns=[a, c]'''), OptimizerContext(catalog)).child
    >>> tree.order, tree.free, print_expr(tree.atoms[1].predicate)
    ('r.a(r.b, s.c)', ('r.a', 'r.b', 's.c'), 's.a is not null')

    Paper: Olteanu PODS'24 §4.1 (Def. 4.2, Thm 4.1, Ex. 4.4), §4.4 (Def. 4.9, Thm 4.11).
    """

    def rewrite(self, node: LogicalPlan, ctx: OptimizerContext) -> LogicalPlan:
        match node:
            # π_F(R1 ⋈ … ⋈ Rn) = the free tuples of a count-ring view tree, each with its multiplicity (Ex. 4.4)
            case Project(items=items, child=JoinGraph() as graph) if len(graph.atoms) > 1:
                output = _columns_of(item.expr for item in items)
                tree = self._choose(graph, output, ctx)
                return node if tree is None else attrs.evolve(node, child=tree)
            # δ(π_F(Q)) = the free tuples of positive multiplicity, once each, when F is exactly the select list
            case Distinct(child=Project(items=items, child=FactorizedViewTree(once_each=False) as tree)) if (
                all(isinstance(i.expr, Column) for i in items) and {i.expr for i in items} == set(tree.output)
            ):
                return Project(items, attrs.evolve(tree, once_each=True))
            # forced: γ_{G; f(X)}(R1 ⋈ … ⋈ Rn) = γ_{G; f(X)}(π_{G ∪ X} of the tree's enumerated changes)
            case Aggregate(child=JoinGraph() as graph) if ctx.join_strategy == "view-tree" and len(graph.atoms) > 1:
                output = _columns_of([*(g.expr for g in node.group_by), *(a.expr for a in node.aggregates)])
                tree = self._choose(graph, output, ctx)
                return node if tree is None else attrs.evolve(node, child=tree)
        return node


    def _choose(self, graph: JoinGraph, output: tuple[Column, ...], ctx: OptimizerContext) -> FactorizedViewTree | None:
        if graph.preserved or graph.conditions or not all(isinstance(a, Atom) for a in graph.atoms):
            if ctx.join_strategy == "view-tree":  # else another strategy's shape: nothing to say
                ctx.refuse(self.name, "the join is not a natural join of base tables (a condition, an outer join "
                                      "or a view remains)")
            return None
        if ctx.join_strategy == "binary":
            ctx.refuse(self.name, "join strategy forced to binary (the materializing fallback, to compare)")
            return None
        classes = classes_of(Project(tuple(NamedExpr(str(c), c) for c in output), graph), ctx.catalog)
        if isinstance(classes, NotAJoinQuery):
            ctx.refuse(self.name, classes.reason)
            return None
        maintained = classes.maintained
        if "q-hierarchical" not in maintained.classes:
            of = " (nor its Σ-reduct)" if classes.reduct_classes is not None else ""
            witness = maintained.witnesses["hierarchical" if "hierarchical" not in maintained.classes else "q-hierarchical"]
            ctx.refuse(self.name, f"not q-hierarchical for its output{of}: {witness}")
            return None
        if why := shape_problem(classes):
            ctx.refuse(self.name, why)
            return None
        variable = class_variables(graph.join_classes)
        free = tuple(dict.fromkeys(variable.get(c, str(c)) for c in output))
        choice = choose_order(classes, graph, free, ctx)
        reduct = f" (its Σ-reduct by {'; '.join(choice.fds)}, Thm 4.11)" if choice.fds else ""
        ctx.decide(self.name, f"a natural join q-hierarchical for its output{reduct}: O(1) per single-tuple update "
                              "and the result enumerated from the view tree with constant delay (Thm 4.1, Ex. 4.4)")
        return FactorizedViewTree(_without_null_joins(graph, ctx), graph.join_classes, output, choice.costs[0].order,
                                  choice.costs, choice.free, choice.fds, choice.chosen_by, choice.static)


def _columns_of(exprs) -> tuple[Column, ...]:
    """The columns the expressions read, in a stable order (the plan prints the same every run)."""
    return tuple(dict.fromkeys(c for e in exprs for c in sorted(columns(e), key=str)))


def _without_null_joins(graph: JoinGraph, ctx: OptimizerContext) -> tuple[Atom, ...]:
    """The atoms with ``c IS NOT NULL`` for each nullable join column c: R ⋈_{c=d} S = σ_{c IS NOT NULL}(R) ⋈_{c=d} S."""
    joined = {c for cls in graph.join_classes if len(cls) > 1 for c in cls}
    atoms = []
    for atom in graph.atoms:
        table = ctx.catalog.table(atom.table)
        tests = [Call("is not null", (c,), BOOLEAN) for c in (Column(atom.alias, n) for n in atom.columns)
                 if c in joined and table.column(c.name).nullable]
        if tests:
            atom = attrs.evolve(atom, predicate=conjunction([*([atom.predicate] if atom.predicate else []), *tests]))
        atoms.append(atom)
    return tuple(atoms)
