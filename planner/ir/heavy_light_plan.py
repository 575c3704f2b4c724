"""The heavy/light triangle-count maintenance node (IVM^ε, Olteanu §3.3; Kara et al. ICDT'19).

``HeavyLightTriangleCount`` owns what ``rules/heavy_light.py`` derived: the three atoms in the
triangle's cyclic order R(A,B), S(B,C), T(C,A) and, per atom, its two join columns in that order
(its first variable, then its second), plus ε, the partition threshold's exponent. Lowering
(``operators/lowering/heavy_light.py``) projects each atom onto its two columns in this order, the
row layout ``TriangleCountStage`` expects on ports 0, 1, 2; EXPLAIN reads ε and the views here.
"""

from __future__ import annotations

import functools

import attrs

from planner.ir.expressions import Column
from planner.ir.guarantee import Guarantee
from planner.ir.logical import LogicalPlan, NamedExpr
from planner.ir.maintenance import Atom

#: The stage's relations in port order, with the variables their columns bind.
TRIANGLE = ("R(A,B)", "S(B,C)", "T(C,A)")
#: The views IVM^ε materializes: a heavy part joined with the next relation's light part.
VIEWS = ("V_RS(A,C) = Σ_B R_H(A,B)·S_L(B,C)", "V_ST(B,A) = Σ_C S_H(B,C)·T_L(C,A)",
         "V_TR(C,B) = Σ_A T_H(C,A)·R_L(A,B)")


def amortized_bound(epsilon: float) -> str:
    """The amortized single-tuple update time of IVM^ε at ``epsilon`` (Kara et al. Thm 1)."""
    return f"O(N^max(ε,1−ε)) = O(N^{max(epsilon, 1 - epsilon):g}) amortized per single-tuple update"


@attrs.frozen
class HeavyLightTriangleCount(LogicalPlan):
    child_fields = ("atoms",)
    maintained = having_applies = True
    #: COUNT(*) (or COUNT of a NOT NULL column) items: each is the triangle count
    aggregates: tuple[NamedExpr, ...]
    #: R, S, T: the atoms in the triangle's cyclic order (a self-join reads one table three times)
    atoms: tuple[Atom, ...]
    #: per atom, its (first, second) join columns: R's (A, B), S's (B, C), T's (C, A)
    edges: tuple[tuple[Column, Column], ...]
    #: the partition threshold is θ = M^ε (M ~ the database size); ½ balances both sides
    epsilon: float = 0.5

    @functools.cached_property
    def output(self) -> tuple[Column, ...]:
        return tuple(Column(None, item.name) for item in self.aggregates)

    def own_guarantee(self) -> Guarantee:
        return Guarantee.stated(f"heavy/light triangle count (IVM^ε, ε = {self.epsilon:g})",
                                cost=amortized_bound(self.epsilon))

    def column_names(self, alias: str) -> tuple[str, str]:
        """The atom's two join columns as the stage's row reads them (first variable, then second)."""
        first, second = next(pair for pair, atom in zip(self.edges, self.atoms, strict=True) if atom.alias == alias)
        return first.name, second.name
