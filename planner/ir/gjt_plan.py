"""The GJT decision for one GCQ, as EXPLAIN will show it: IEDyn §3 end to end.

``plan_gjt`` runs the steps in the paper's order: drop implied inequalities (Prop. 3.8), build a
GJT guarded by the output variables (Prop. 3.7) or keep the witness that none exists, make it
binary and strongly compatible (Prop. 3.9), and find the sibling-closed connex set N with
var(N) = out(Q) that enumeration will walk (Def. 3.5, §5). Each fact is computed once here and
carried by the ``GjtPlan`` value; rules and EXPLAIN read it.
"""

from __future__ import annotations

import attrs

from planner.ir.gcq import Gcq, Inequality
from planner.ir.gjt import GjtNode, Path, connex_subset, render
from planner.ir.gjt_reduction import Witness, build_compatible_gjt, build_gjt, guarded_leftover
from planner.ir.gjt_rewrites import binarize, remove_implied_inequalities


@attrs.frozen
class GjtPlan:
    """``tree`` is binary, None with a ``witness`` when the (reduced) query is cyclic; ``connex`` is
    sibling-closed, None when the tree is not strongly compatible with out(Q)."""

    query: Gcq
    reduced: Gcq
    removed: tuple[Inequality, ...]
    tree: GjtNode | None
    witness: Witness | None
    connex: frozenset[Path] | None
    #: Acyclic but not free-connex: what the reduction guarded by out(Q) left (Prop. 3.7's "moreover").
    free_connex_witness: Witness | None = None

    @property
    def acyclic(self) -> bool:
        return self.tree is not None

    @property
    def free_connex(self) -> bool:
        return self.connex is not None

    def __str__(self) -> str:
        lines = [f"GCQ: {self.query}"]
        if self.removed:
            lines.append(f"removed as implied (Prop. 3.8): {' ∧ '.join(map(str, self.removed))}")
        if self.tree is None:
            lines.append(f"cyclic: no generalized join tree; {self.witness}")
            return "\n".join(lines)
        if self.connex is None:
            lines.append("acyclic, not free-connex: no sibling-closed connex set covers exactly the output")
        else:
            lines.append(
                "free-connex acyclic; connex set (marked *) covers {" + ",".join(sorted(self.query.out)) + "}"
            )
            crowded = self.reduced.crowded_pairs()
            lines.append(
                "enumeration delay: "
                + (
                    "logarithmic; more than one inequality between " + ", ".join("-".join(p) for p in crowded)
                    if crowded
                    else "constant (at most one inequality per pair of atoms, Thm 5.5)"
                )
            )
        lines.append(render(self.tree, self.connex or frozenset()))
        return "\n".join(lines)


def plan_gjt(query: Gcq) -> GjtPlan:
    reduced, removed = remove_implied_inequalities(query)
    built = build_compatible_gjt(reduced)
    if isinstance(built, Witness):
        # Acyclicity is decided by the plain reduction, not the guarded order; its leftovers are the witness.
        plain = build_gjt(reduced)
        if isinstance(plain, Witness):
            return GjtPlan(query, reduced, removed, None, plain, None)
        built = plain
    tree = binarize(built, reduced.out)
    connex = connex_subset(tree, reduced.out, sibling_closed=True)
    return GjtPlan(query, reduced, removed, tree, None, connex, None if connex is not None else guarded_leftover(reduced))
