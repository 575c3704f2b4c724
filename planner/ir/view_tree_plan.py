"""The view-tree maintenance node (Olteanu §4.1, F-IVM): a GROUP BY of ring aggregates over a natural
join, maintained by one view per variable of a variable order, with ring payloads.

``ViewTreeAggregate`` owns what the rule derived (``rules/view_tree.py``): the chosen order (as
``variable_orders.order_text`` writes it), every candidate with its estimated cost (the chosen one
first), the Σ-reduct's dependencies when the order is the reduct's (Thm 4.11), and the query's
update and delay bounds. What follows from its fields alone is a cached property: each column's
variable, the atoms' variables, the lifted variables (ring slots) and how each aggregate reads the
payload. Lowering (``operators/lowering/view_tree.py``) and EXPLAIN read them, never recompute.

Payloads: COUNT only → the count ring; SUMs and AVGs of columns → ``SumRing(k)``, one slot per
lifted variable, so every SUM shares one payload; a ``SUM(x*y)`` of two columns → the degree-k
cofactor ring, whose Σxxᵀ holds every such product (``Q[x][y]``).
"""

from __future__ import annotations

import functools

import attrs

from planner.ir.expressions import AggregateCall, Call, Column, Expr
from planner.ir.guarantee import Guarantee
from planner.ir.logical import LogicalPlan, NamedExpr, grouped_output
from planner.ir.maintenance import Atom
from planner.ir.variable_orders import OrderCost

RING_KINDS = ("count", "sum", "cofactor")


def product_columns(expr: Expr | None) -> tuple[Column, ...] | None:
    """The columns an aggregate argument multiplies: ``(x,)`` for a column, ``(x, y)`` for ``x * y``;
    None for anything else (which the view tree does not take)."""
    match expr:
        case Column():
            return (expr,)
        case Call(op="*", args=(Column() as x, Column() as y)):
            return (x, y)
    return None


def summed_columns(call: AggregateCall) -> tuple[Column, ...]:
    """The columns an aggregate lifts into the ring: SUM's and AVG's; COUNT of a NOT NULL column
    reads none (it is the count; the rule refuses a nullable one)."""
    return () if call.func == "count" else product_columns(call.arg) or ()


def class_variables(join_classes: tuple[tuple[Column, ...], ...]) -> dict[Column, str]:
    """Each joined column's variable: its join class's least column by name (as ``gcq_build`` names them)."""
    found = {}
    for cls in join_classes:
        name = str(min(cls, key=str))
        found |= dict.fromkeys(cls, name)
    return found


class _AtomVariables:
    """What every view-tree node derives alike from its ``variable_of`` and ``atom_columns``."""

    __slots__ = ()

    def variable(self, column: Column) -> str:
        return self.variable_of.get(column, str(column))

    def atom_variables(self, alias: str) -> tuple[str, ...]:
        return tuple(self.variable(Column(alias, c)) for c in self.atom_columns[alias])


@attrs.frozen
class ViewTreeAggregate(_AtomVariables, LogicalPlan):
    child_fields = ("atoms",)
    maintained = having_applies = True
    group_by: tuple[NamedExpr, ...]
    aggregates: tuple[NamedExpr, ...]
    join_classes: tuple[tuple[Column, ...], ...]
    #: the chosen variable order, ``A(B, C(D, E))``
    order: str
    #: every candidate order with its estimated cost; the chosen one first
    candidates: tuple[OrderCost, ...]
    #: the order's free variables: the GROUP BY's, then those a Σ-reduct adds (determined by them)
    free: tuple[str, ...]
    atoms: tuple[Atom, ...]
    #: the dependencies of the Σ-reduct the order was derived from (empty: the query itself)
    fd_reduct: tuple[str, ...] = ()
    #: how the order was chosen: ``cost`` (cheapest candidate) or ``forced``
    chosen_by: str = "cost"
    #: the aliases of atoms whose table is ``ivm.static`` (Olteanu §4.5): no delta path is built for them
    static: tuple[str, ...] = ()

    @functools.cached_property
    def output(self) -> tuple[Column, ...]:
        return grouped_output(self.group_by, self.aggregates)

    def own_guarantee(self) -> Guarantee:
        return Guarantee.deferred_to_stages(f"F-IVM view tree (order {self.order})")

    @functools.cached_property
    def variable_of(self) -> dict[Column, str]:
        return class_variables(self.join_classes)

    @functools.cached_property
    def lifted(self) -> tuple[str, ...]:
        """The variables lifted into the ring, slot i holding ``lifted[i]``."""
        return tuple(dict.fromkeys(self.variable(c) for item in self.aggregates
                                   for c in summed_columns(item.expr)))

    @functools.cached_property
    def ring_kind(self) -> str:
        arities = [len(summed_columns(item.expr)) for item in self.aggregates]
        return "cofactor" if 2 in arities else "sum" if 1 in arities else "count"

    @functools.cached_property
    def payload_reads(self) -> tuple[tuple[str, tuple[int, ...]], ...]:
        """Per aggregate: its function and the slots it reads (none: the count)."""
        slot = {v: i for i, v in enumerate(self.lifted)}
        reads = []
        for item in self.aggregates:
            call: AggregateCall = item.expr
            reads.append((call.func, tuple(slot[self.variable(c)] for c in summed_columns(call))))
        return tuple(reads)

    @functools.cached_property
    def atom_columns(self) -> dict[str, tuple[str, ...]]:
        """Per atom alias, the columns the view tree reads: join, group and aggregated columns."""
        read = {c for cls in self.join_classes for c in cls}
        read |= {item.expr for item in self.group_by}
        read |= {c for item in self.aggregates for c in product_columns(item.expr.arg) or ()}
        return {a.alias: tuple(c for c in a.columns if Column(a.alias, c) in read) for a in self.atoms}


@attrs.frozen
class FactorizedViewTree(_AtomVariables, LogicalPlan):
    """A natural join whose result stays factorized over a view tree (Olteanu Ex. 4.4): the count
    ring's views, the free variables on top, the result enumerated from them with constant delay.

    ``output`` are the atoms' columns the plan above reads (a select list, or under a forced view
    tree an aggregate's group and arguments); their variables are the query's free variables, to
    which a Σ-reduct adds those they determine (``free``). A free tuple's payload is the number of
    join rows it stands for: SQL's bag multiplicity of the projected row. ``once_each``: the
    ``SELECT DISTINCT`` above was absorbed, each free tuple counts once (the select list is then
    exactly ``output``, one row per free tuple). Atoms carry ``IS NOT NULL`` on their nullable join
    columns (SQL never matches NULL). Lowering: ``operators/lowering/view_tree_output.py``.
    """

    child_fields = ("atoms",)
    maintained = True
    atoms: tuple[Atom, ...]
    join_classes: tuple[tuple[Column, ...], ...]
    output: tuple[Column, ...]
    #: the chosen variable order, ``A(B, C(D, E))``, and every candidate with its cost (chosen first)
    order: str
    candidates: tuple[OrderCost, ...]
    #: the variables of ``output``, then those a Σ-reduct adds (determined by them)
    free: tuple[str, ...]
    fd_reduct: tuple[str, ...] = ()
    chosen_by: str = "cost"
    static: tuple[str, ...] = ()
    once_each: bool = False

    #: every join condition is a variable of the order: nothing is left for a selection above
    residual = None

    def own_guarantee(self) -> Guarantee:
        return Guarantee.deferred_to_stages(f"F-IVM view tree, factorized result (order {self.order})")
    #: what a view-tree lowering and EXPLAIN read of any view tree: the count ring, nothing lifted
    ring_kind = "count"
    lifted = ()

    @functools.cached_property
    def variable_of(self) -> dict[Column, str]:
        return class_variables(self.join_classes)

    @functools.cached_property
    def atom_columns(self) -> dict[str, tuple[str, ...]]:
        """Per atom alias, the columns the view tree reads: join and output columns."""
        read = {c for cls in self.join_classes for c in cls} | set(self.output)
        return {a.alias: tuple(c for c in a.columns if Column(a.alias, c) in read) for a in self.atoms}
