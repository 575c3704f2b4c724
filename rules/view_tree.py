"""View trees with ring payloads for hierarchical aggregate joins (Olteanu §4.1, §4.4; F-IVM).

A GROUP BY of SUM/COUNT/AVG over a natural join whose query, or whose Σ-reduct (Def. 4.9), is
hierarchical is maintained by a view tree over a variable order derived here: the candidates of
``planner/ir/variable_orders.py``, each with its estimated state and per-update work from catalog
statistics, the cheapest chosen (least update work, then least state), or the order the user
forced (``variable_order``). For a q-hierarchical query (or reduct) the canonical order gives O(1)
update time and constant enumeration delay (Thm 4.1, Thm 4.11); a hierarchical one with a free
variable below a bound one keeps free variables on top and probes (the cost says how much).

Preconditions: runs after ``ChooseForeignKeyJoinTree`` (AJU's live tuples already give O(λ) for
foreign-key joins, so only what it refused arrives here as a ``JoinGraph``) and before the binary
fallback. The join must be natural: no condition other than equalities, no outer join, no view
atom; group keys are columns; aggregates are SUM/COUNT/AVG (not DISTINCT) of a column, of a
product of two columns that Spark computes exactly per row (DECIMAL without scale reduction, or
floating point: no integer product, whose per-row overflow Spark checks), or COUNT(*); join and aggregated columns are NOT NULL in the catalog (a
view tree matches equal values, and SQL never matches NULL; a NULL summand has no lift).
"""

from __future__ import annotations

import attrs

from catalog.schema import Catalog
from catalog.types import INTEGRAL, DecimalType
from planner.ir.expressions import AggregateCall, Call, Column
from planner.ir.fd_reduct import closure_function
from planner.ir.gcq import Gcq
from planner.ir.join_query import NotAJoinQuery, join_query
from planner.ir.logical import Aggregate, LogicalPlan
from planner.ir.maintenance import Atom, JoinGraph
from planner.ir.notation import print_expr
from planner.ir.query_classes import QueryClasses, classify_with_dependencies
from planner.ir.variable_orders import (
    DEFAULT_ROWS,
    OrderCost,
    candidate_orders,
    components,
    estimate,
    forced_order,
)
from planner.ir.view_tree_plan import ViewTreeAggregate, product_columns, summed_columns
from planner.optimizer.context import OptimizerContext
from planner.optimizer.executor import Rule


class ChooseViewTree(Rule):
    """Replace ``Aggregate(JoinGraph)`` of a hierarchical natural join by a ``ViewTreeAggregate``.

    R(A,B)·S(A,C,E)·T(A,C,D) grouped by A is q-hierarchical; B is read by nothing, so it is projected
    away (a bag: multiplicities are the ring's count). The canonical order is A(C(E, D)), a product
    of two columns asks for the cofactor ring, and every candidate carries its estimated cost:

    >>> from catalog.ddl import catalog_from_ddl
    >>> from planner.ir.notation import parse_plan
    >>> catalog = catalog_from_ddl('''
    ... CREATE TABLE r (a INT NOT NULL, b INT NOT NULL);
    ... CREATE TABLE s (a INT NOT NULL, c INT NOT NULL, e INT NOT NULL);
    ... CREATE TABLE t (a INT NOT NULL, c INT NOT NULL, d INT NOT NULL);''')
    >>> plan = parse_plan('''
    ... Aggregate group_by=[r.a AS a] aggregates=[sum(s.e) AS se, sum(s.e * t.d) AS sed, count(*) AS n]
    ...   JoinGraph join_classes=[[r.a, s.a, t.a], [s.c, t.c]]
    ...     Atom table=r alias=r columns=[a, b]
    ...     Atom table=s alias=s columns=[a, c, e]
    ...     Atom table=t alias=t columns=[a, c, d]''')
    >>> node = ChooseViewTree().apply(plan, OptimizerContext(catalog))
    >>> node.order, node.ring_kind, node.lifted
    ('r.a(s.c(s.e, t.d))', 'cofactor', ('s.e', 't.d'))
    >>> node.candidates[0], len(node.candidates)
    (OrderCost(order='r.a(s.c(s.e, t.d))', state=3221.0, update=2.33), 5)

    Paper: Olteanu PODS'24 §4.1 (view trees, Thm 4.1), §4.4 (Σ-reducts, Thm 4.11).
    """

    def rewrite(self, node: LogicalPlan, ctx: OptimizerContext) -> LogicalPlan:
        match node:
            # γ_{F; ⊕}(R1 ⋈ … ⋈ Rn) = Σ_{bound} Π_i Ri · Π_x lift(x), grouped by F, one view per variable (§4.1)
            case Aggregate(child=JoinGraph() as graph) if len(graph.atoms) > 1:
                why = ("join strategy forced to binary (the materializing fallback, to compare)"
                       if ctx.join_strategy == "binary" else _unsupported(node, ctx.catalog))
                if why is None:
                    return _view_tree(node, ctx)
                ctx.refuse(self.name, why)
        return node


def _unsupported(node: Aggregate, catalog: Catalog) -> str | None:
    """Why the view tree cannot take ``node`` (None: it can)."""
    graph: JoinGraph = node.child
    if graph.preserved or graph.conditions or not all(isinstance(a, Atom) for a in graph.atoms):
        return "the join is not a natural join of base tables (a condition, an outer join or a view remains)"
    if not all(isinstance(g.expr, Column) for g in node.group_by):
        return "a GROUP BY key is not a column"
    for item in node.aggregates:
        call: AggregateCall = item.expr
        if call.func not in ("sum", "count", "avg") or call.distinct:
            return f"{call.func.upper()}{' DISTINCT' if call.distinct else ''} is not a ring aggregate"
        if call.arg is not None and product_columns(call.arg) is None:
            return "an aggregate argument is neither a column nor a product of two columns"
        if call.func != "count" and len(product_columns(call.arg) or ()) == 2 and (why := _inexact_product(call.arg)):
            return why
    nullable = [f"{c}" for c in _read_columns(node) if catalog.table(_table(graph, c.table)).column(c.name).nullable]
    if nullable:
        return f"{', '.join(sorted(nullable))} may be NULL (declare NOT NULL: a view tree would match NULL join values)"
    classes = classes_of(node, catalog)
    if isinstance(classes, NotAJoinQuery):
        return classes.reason
    if "hierarchical" not in classes.maintained.classes:
        return f"not hierarchical: {classes.maintained.witnesses['hierarchical']}"
    free = set(_free_variables(node))
    lifted = {_variable(node, c) for item in node.aggregates for c in summed_columns(item.expr)}
    if free & lifted:
        return "an aggregate sums a GROUP BY column"
    return shape_problem(classes)


def shape_problem(classes: QueryClasses) -> str | None:
    """Why the atoms of a classified join cannot hang in a view tree (None: they can)."""
    atoms = _atom_variables(classes.original.query)
    if any(len(set(vs)) != len(vs) or not vs for vs in atoms.values()):
        return "an atom equates two of its own columns or reads no column"
    if len(components({a: frozenset(vs) for a, vs in atoms.items()})) > 1:
        return "the relations are not all connected by equalities (a cross product: left to the strategies for it)"
    return None


def _inexact_product(product: Call) -> str | None:
    """Why Spark's per-row ``x * y`` is not what a factorized Σxy computes (None: it is). The view tree
    never sees one row's product: an integer product that overflows (Spark raises) or a DECIMAL
    product whose scale Spark reduces (it rounds each row) would silently differ."""
    if product.dtype in INTEGRAL:
        return f"{print_expr(product)} is an integer product: Spark checks each row's product for overflow"
    if isinstance(product.dtype, DecimalType):
        scales = sum(c.dtype.scale if isinstance(c.dtype, DecimalType) else 0 for c in product.args)
        if product.dtype.scale != scales:
            return f"{print_expr(product)} is a DECIMAL product Spark rounds per row (scale {product.dtype.scale} < {scales})"
    return None


def _table(graph: JoinGraph, alias: str) -> str:
    return next(a.table for a in graph.atoms if a.alias == alias)


def _read_columns(node: Aggregate) -> set[Column]:
    """Join columns (in a class of two or more) and aggregated columns (COUNT's too: NULLs do not count)."""
    graph: JoinGraph = node.child
    read = {c for cls in graph.join_classes if len(cls) > 1 for c in cls}
    return read | {c for item in node.aggregates for c in product_columns(item.expr.arg) or ()}


def _variable(node: Aggregate, column: Column) -> str:
    for cls in node.child.join_classes:
        if column in cls:
            return str(min(cls, key=str))
    return str(column)


def _free_variables(node: Aggregate) -> tuple[str, ...]:
    return tuple(dict.fromkeys(_variable(node, g.expr) for g in node.group_by))


def classes_of(node: LogicalPlan, catalog: Catalog) -> QueryClasses | NotAJoinQuery:
    """The classes of the natural join under ``node`` (free: its GROUP BY or projected columns)."""
    found = join_query(node)
    if isinstance(found, NotAJoinQuery):
        return found
    if found.conditions or found.query.predicates:
        return NotAJoinQuery("a condition other than an equality joins the atoms")
    return classify_with_dependencies(found.query, catalog, found.conditions)


def _atom_variables(query: Gcq) -> dict[str, tuple[str, ...]]:
    return {a.alias: a.variables for a in query.atoms}


@attrs.frozen
class OrderChoice:
    """The variable order a view tree is built on: every candidate with its cost (the chosen first),
    how it was chosen, the static atoms, and the free variables (those given, then what the
    Σ-reduct adds: variables they determine, one value per free tuple under the FDs)."""

    costs: tuple[OrderCost, ...]
    chosen_by: str
    static: tuple[str, ...]
    free: tuple[str, ...]
    fds: tuple[str, ...]


def choose_order(classes: QueryClasses, graph: JoinGraph, free: tuple[str, ...], ctx: OptimizerContext) -> OrderChoice:
    """The order forced by ``ctx.variable_order``, else the cheapest candidate (least update work, then state)."""
    maintained = classes.maintained.query  # the Σ-reduct when it is what holds the class
    own = {a.alias: a.var_set for a in classes.original.query.atoms}
    rows = {a.alias: ctx.catalog.table(a.table).rows or DEFAULT_ROWS for a in graph.atoms}
    static = frozenset(a.alias for a in graph.atoms if ctx.catalog.table(a.table).static)
    determined = closure_function(classes.original.query, ctx.catalog)
    if ctx.variable_order is not None:
        forest = forced_order(maintained, ctx.variable_order)
        costs = [estimate(maintained, forest, rows, static, own, determined)]
        chosen_by = "forced"
    else:
        costs = [estimate(maintained, order, rows, static, own, determined) for order in candidate_orders(maintained)]
        costs.sort(key=lambda c: (c.update, c.state))
        chosen_by = "cost"
    added = tuple(sorted(set(maintained.output or ()) - set(free)))
    return OrderChoice(tuple(costs), chosen_by, tuple(sorted(static)), free + added,
                       tuple(map(str, classes.fd_reduct or ())))


def _view_tree(node: Aggregate, ctx: OptimizerContext) -> ViewTreeAggregate:
    classes = classes_of(node, ctx.catalog)
    graph: JoinGraph = node.child
    choice = choose_order(classes, graph, _free_variables(node), ctx)
    return ViewTreeAggregate(node.group_by, node.aggregates, graph.join_classes, choice.costs[0].order, choice.costs,
                             choice.free, graph.atoms, choice.fds, choice.chosen_by, choice.static)
