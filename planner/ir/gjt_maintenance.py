"""The maintenance node of a join block maintained on a generalized join tree (IEDyn §3–§5).

``GeneralizedJoinTree`` holds what the plan notation can print (the atoms, the cross-atom
conditions, the equality classes, the columns the plan above reads); the GCQ and its ``GjtPlan``
(Prop. 3.7–3.9: the binary tree, the connex set or the witness) are derived from those fields once
and cached on the node, as ``ForeignKeyJoin`` derives its assertion keys. So a copy made by
``attrs.evolve`` (column pruning) or parsed from the notation derives them again, never stale, and
lowering and EXPLAIN read them from here. It lives beside ``maintenance.py``, not in it, because
reading a join graph into a GCQ (``gcq_build``) imports the maintenance nodes.

Each leaf's variables are only the atom's columns the query reads (output, equality classes,
cross-atom conditions): the T-representation keeps the projected rows with multiplicities (GMR),
not whole tuples.
"""

from __future__ import annotations

import functools

import attrs

from planner.ir.expressions import Column, Expr, columns
from planner.ir.gcq import Gcq
from planner.ir.gcq_build import from_join_graph
from planner.ir.gjt import Path, covering_connex
from planner.ir.gjt_plan import GjtPlan, plan_gjt
from planner.ir.guarantee import Guarantee
from planner.ir.logical import LogicalPlan
from planner.ir.maintenance import Atom, JoinGraph


@attrs.frozen
class GeneralizedJoinTree(LogicalPlan):
    """A join of base-table atoms with equalities and inequalities, maintained as a T-representation
    over the GJT of its GCQ; ``output``: the atoms' columns the operators above read (out(Q))."""

    child_fields = ("atoms",)
    maintained = True
    atoms: tuple[LogicalPlan, ...]
    conditions: tuple[Expr, ...] = ()
    join_classes: tuple[tuple[Column, ...], ...] = ()
    output: tuple[Column, ...] = ()

    #: Every cross-atom condition is on an edge of the tree: nothing is left for a selection above.
    residual = None

    @functools.cached_property
    def query(self) -> Gcq:
        """The GCQ: equalities folded into variables, inequalities kept, out(Q) from ``output``."""
        read = set(self.output).union(*(columns(c) for c in self.conditions), *self.join_classes)
        narrowed = tuple(
            attrs.evolve(a, columns=tuple(c for c in a.columns if Column(a.alias, c) in read)) if isinstance(a, Atom) else a
            for a in self.atoms
        )
        return from_join_graph(JoinGraph(narrowed, self.conditions, self.join_classes), self.output)

    @functools.cached_property
    def gjt(self) -> GjtPlan:
        return plan_gjt(self.query)

    @functools.cached_property
    def enumerated(self) -> frozenset[Path]:
        """The sibling-closed connex set enumeration walks: N with var(N) = out(Q) when the query is
        free-connex, else the smallest one covering out(Q) (then projected, IEDyn §6)."""
        if self.gjt.tree is None:
            raise ValueError("a cyclic query has no generalized join tree")
        return self.gjt.connex if self.gjt.connex is not None else covering_connex(self.gjt.tree, self.gjt.reduced.out)

    def variable_of(self, column: Column) -> str:
        """The GCQ variable standing for ``column`` (columns made equal share one)."""
        for atom in self.query.atoms:
            if atom.alias == column.table and column.name in atom.columns:
                return atom.variables[atom.columns.index(column.name)]
        raise KeyError(f"{column} is not a column the join reads")

    @functools.cached_property
    def variables_out(self) -> tuple[str, ...]:
        """out(Q) as the order of the rows enumeration emits: the variables of ``output``, first seen first."""
        return tuple(dict.fromkeys(self.variable_of(c) for c in self.output))

    @property
    def update_bound(self) -> str:
        """What IEDyn promises per update, and only that (Thm 5.5 and its withdrawal)."""
        crowded = self.gjt.reduced.crowded_pairs()
        if crowded:
            pairs = ", ".join("-".join(p) for p in crowded)
            return (f"no bound claimed: more than one inequality between {pairs} (the journal version of IEDyn "
                    "withdrew Thm 5.5's O(M log M) for that case); each probe is still O(log M)")
        return "O(M log M) per update, M the database size (IEDyn Thm 5.5)"

    def own_guarantee(self) -> Guarantee:
        return Guarantee.stated("IEDyn generalized join tree (inequality joins)", cost=self.update_bound)

    @property
    def delay_bound(self) -> str:
        if not self.gjt.free_connex:
            return ("not constant: not free-connex, so enumeration walks a connex set larger than the output "
                    "and projects with multiplicities (IEDyn §6)")
        if self.gjt.reduced.crowded_pairs():
            return "logarithmic: a pair of atoms carries more than one inequality"
        return "constant (free-connex, at most one inequality per pair of atoms: IEDyn Thm 5.5)"
