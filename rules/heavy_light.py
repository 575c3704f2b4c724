"""Heavy/light partitioning for the triangle count (IVM^ε: Olteanu PODS'24 §3.3; Kara, Ngo, Nikolic,
Olteanu, Zhang ICDT'19).

The triangle count ``Q() = Σ R(A,B)·S(B,C)·T(C,A)`` is cyclic: no view tree maintains it in O(1),
delta queries alone cost O(N) per update, and materializing one pair's join costs O(N) too.
IVM^ε partitions each relation on its first variable into heavy and light keys at the threshold
N^ε and materializes one view per pair (a heavy part joined with the next light part), which
gives O(N^max(ε,1−ε)) amortized time per update: O(√N) at ε = ½, optimal under the OMv conjecture.

Preconditions: runs after ``ChooseViewTree`` (a Σ-reduct that is hierarchical goes there) and
before the binary fallback. The query is a global COUNT over a natural join of exactly three atoms
whose join columns form a triangle: three equalities, each between two atoms, each atom in two of
them with two distinct columns. Any table names: ``edges e1, edges e2, edges e3`` reads one edge
table three times, each atom one copy. Join columns must be NOT NULL (the stage matches equal values,
SQL never matches NULL). SUM is refused: the stage's views hold path counts, and a SUM would need a
ring payload in every view and partition (not built). ε comes from ``OptimizerContext.heavy_light_epsilon``.
"""

from __future__ import annotations

from catalog.schema import Catalog
from planner.ir.expressions import AggregateCall, Column
from planner.ir.heavy_light_plan import HeavyLightTriangleCount, amortized_bound
from planner.ir.logical import Aggregate, LogicalPlan
from planner.ir.maintenance import Atom, JoinGraph
from planner.optimizer.context import OptimizerContext
from planner.optimizer.executor import Rule


class ChooseHeavyLightTriangle(Rule):
    """Replace ``Aggregate(JoinGraph)`` of a triangle count by a ``HeavyLightTriangleCount``.

    Three copies of one edge table closing a cycle: each atom is one of R, S, T, its join columns
    ordered along the cycle (R = e1 (src, dst), then the atom e1.dst meets, and so on):

    >>> from catalog.ddl import catalog_from_ddl
    >>> from planner.ir.notation import parse_plan, print_plan
    >>> catalog = catalog_from_ddl('CREATE TABLE edges (src INT NOT NULL, dst INT NOT NULL);')
    >>> plan = parse_plan('''
    ... Aggregate group_by=[] aggregates=[count(*) AS n]
    ...   JoinGraph join_classes=[[e1.dst, e2.src], [e2.dst, e3.src], [e1.src, e3.dst]]
    ...     Atom table=edges alias=e1 columns=[src, dst]
    ...     Atom table=edges alias=e2 columns=[src, dst]
    ...     Atom table=edges alias=e3 columns=[src, dst]''')
    >>> node = ChooseHeavyLightTriangle().apply(plan, OptimizerContext(catalog))
    >>> [f"{a}, {b}" for a, b in node.edges], node.epsilon
    (['e1.src, e1.dst', 'e2.src, e2.dst', 'e3.src, e3.dst'], 0.5)

    A SUM is refused with the reason (the plan is left to the fallback):

    >>> ctx = OptimizerContext(catalog)
    >>> summed = parse_plan(print_plan(plan).replace('count(*)', 'sum(e1.src)'))
    >>> ChooseHeavyLightTriangle().apply(summed, ctx) == summed, ctx.refusals['ChooseHeavyLightTriangle'][:33]
    (True, 'SUM(e1.src) over the triangle: th')

    Paper: Olteanu PODS'24 §3.3 (IVM^ε for the triangle count); Kara et al. ICDT'19 §3–4.
    """

    def rewrite(self, node: LogicalPlan, ctx: OptimizerContext) -> LogicalPlan:
        match node:
            # COUNT(R(A,B) ⋈ S(B,C) ⋈ T(C,A)) = Σ over heavy/light parts of the views V_RS, V_ST, V_TR (IVM^ε)
            case Aggregate(child=JoinGraph() as graph) if (cycle := triangle(graph)) is not None:
                why = _unsupported(node, cycle, ctx.catalog)
                if why is None:
                    ctx.decide(self.name, f"a triangle count: IVM^ε at ε = {ctx.heavy_light_epsilon:g}, "
                                          f"{amortized_bound(ctx.heavy_light_epsilon)}")
                    atoms = {a.alias: a for a in graph.atoms}
                    return HeavyLightTriangleCount(node.aggregates, tuple(atoms[a.table] for a, _ in cycle),
                                                   cycle, ctx.heavy_light_epsilon)
                ctx.refuse(self.name, why)
        return node


def triangle(graph: JoinGraph) -> tuple[tuple[Column, Column], ...] | None:
    """Per atom in cyclic order R, S, T, its (first, second) join columns, each second column equal
    to the next atom's first; None unless the join graph is exactly such a triangle of three atoms."""
    classes = [cls for cls in graph.join_classes if len(cls) > 1]
    aliases = {a.alias for a in graph.atoms if isinstance(a, Atom)}
    if len(graph.atoms) != 3 or len(aliases) != 3 or len(classes) != 3:
        return None
    if any(len(cls) != 2 or cls[0].table == cls[1].table or {c.table for c in cls} - aliases for cls in classes):
        return None
    columns = [c for cls in classes for c in cls]
    if len(set(columns)) != 6 or any(sum(c.table == alias for c in columns) != 2 for alias in aliases):
        return None
    partner = {c: other for x, y in classes for c, other in ((x, y), (y, x))}
    first = graph.atoms[0]  # R; its first join column in table order is A
    start = next(Column(first.alias, name) for name in first.columns if Column(first.alias, name) in partner)
    cycle, entry = [], start
    for _ in range(3):  # an atom's other column is its second; its partner opens the next atom
        second = next(c for c in columns if c.table == entry.table and c != entry)
        cycle.append((entry, second))
        entry = partner[second]
    return tuple(cycle) if entry == start else None


def _unsupported(node: Aggregate, cycle: tuple[tuple[Column, Column], ...], catalog: Catalog) -> str | None:
    """Why IVM^ε cannot take the triangle ``node`` (None: it can)."""
    graph: JoinGraph = node.child
    if graph.preserved or graph.conditions:
        return "the triangle's join is not a natural join (a condition or an outer join remains)"
    if node.group_by:
        return "a GROUP BY over the triangle: the IVM^ε stage keeps one global count"
    tables = {a.alias: catalog.table(a.table) for a in graph.atoms}
    for item in node.aggregates:
        call: AggregateCall = item.expr
        if call.func != "count" or call.distinct:
            what = f"{call.func.upper()}({'DISTINCT ' if call.distinct else ''}{call.arg or '*'})"
            return (f"{what} over the triangle: the IVM^ε stage counts triangles only (its views hold path "
                    "counts; a SUM needs a ring payload in every view and partition, not built)")
        if isinstance(call.arg, Column) and tables[call.arg.table].column(call.arg.name).nullable:
            return f"COUNT({call.arg}) of a nullable column is not the triangle count"
        if call.arg is not None and not isinstance(call.arg, Column):
            return "COUNT of an expression is not the triangle count"
    nullable = [str(c) for pair in cycle for c in pair if tables[c.table].column(c.name).nullable]
    if nullable:
        return f"{', '.join(nullable)} may be NULL (declare NOT NULL: the stage would match NULL join values)"
    return None
