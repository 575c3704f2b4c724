"""Building a GJT or proving none exists (IEDyn Prop. 3.7), by a GYO reduction generalized to predicates.

The conference paper omits the algorithm of Prop. 3.7. We follow the GYO-style reduction of the
journal version (Idris et al., "General Dynamic Yannakakis", VLDB J. 2020, §6), building the tree
bottom-up as we reduce. The state is a forest whose roots carry hyperedges, plus the predicates
not yet placed on an edge. Two steps, applied until neither applies:

- ISO (isolated variables): a root variable that occurs in no other root, in no open predicate and
  (in the guarded phase below) not in out(Q) is removed: a new parent labelled with the rest.
- CSE (conditional subset): root ``e`` folds into root ``f`` when every variable ``e`` shares with
  the other roots (and out(Q), when guarded) is in ``f``, and every open predicate that mentions a
  variable of ``e \\ f`` has its variables in ``e ∪ f``. ``e`` becomes a child of ``f`` (of a new
  node labelled ``f`` above it when ``f`` is an atom, since atoms are leaves), and those predicates
  label the edge to ``e``. Nodes may get many children; ``binarize`` (Prop. 3.9) splits them.

Every step keeps Def. 3.1 true of the forest, so if one root and no predicate remain, it is a GJT.
If the reduction sticks, the roots and open predicates left are the *witness* (for the triangle
query: the three edges). That a stuck reduction proves there is no GJT at all rests on the
journal's completeness theorem; we did not re-prove it, and tests check it on the paper's cases.

Free-connex (Prop. 3.7's "moreover"): the reduction first runs *guarded* by out(Q), as if out(Q)
were one more hyperedge (the classical test that Q plus an atom over out(Q) is acyclic). The roots
left by that phase carry only output variables when Q is free-connex, and the rest of the
reduction builds above them, so those roots and everything above are a connex set with
var(N) = out(Q). ``connex_subset`` then verifies the result on the tree; it is never assumed.
"""

from __future__ import annotations

import attrs

from planner.ir.gcq import Gcq, Inequality
from planner.ir.gjt import GjtEdge, GjtNode, interior, leaf


@attrs.frozen
class Witness:
    """What a stuck reduction leaves: hyperedges (root labels) and predicates no step can remove."""

    hyperedges: tuple[frozenset[str], ...]
    predicates: tuple[Inequality, ...]

    def __str__(self) -> str:
        hs = ", ".join("{" + ",".join(sorted(h)) + "}" for h in self.hyperedges)
        ps = " ∧ ".join(map(str, self.predicates)) or "none"
        return f"irreducible hyperedges {hs}; predicates {ps}"


def _adopt(f: GjtNode, edge: GjtEdge) -> GjtNode:
    """``f`` with one more child: an interior ``f`` takes it directly, an atom gets a parent copy of its label."""
    if f.is_leaf:
        return interior(f.label, f, edge)
    return attrs.evolve(f, children=f.children + (edge,))


class _Forest:
    """The reduction state: roots and open predicates; ``guard`` holds variables ISO must keep."""

    def __init__(self, query: Gcq) -> None:
        self.roots: list[GjtNode] = [leaf(a) for a in query.atoms]
        self.open: list[Inequality] = sorted(query.predicates)
        self.guard: frozenset[str] = frozenset()

    def _elsewhere(self, i: int) -> frozenset[str]:
        """Variables of the other roots, and the guard."""
        others = (r.label for j, r in enumerate(self.roots) if j != i)
        return self.guard.union(*others)

    def _iso(self) -> bool:
        if len(self.roots) == 1:
            return False  # a lone root keeps its variables: removing them would only add nodes
        for i, root in enumerate(self.roots):
            in_preds = frozenset().union(*(p.variables for p in self.open))
            isolated = root.label - self._elsewhere(i) - in_preds
            if isolated:
                self.roots[i] = interior(root.label - isolated, root)
                return True
        return False

    def _cse(self) -> bool:
        for i, e in enumerate(self.roots):
            shared = e.label & self._elsewhere(i)
            for j, f in enumerate(self.roots):
                if i == j or not shared <= f.label:
                    continue
                moving = [p for p in self.open if p.variables & (e.label - f.label)]
                if all(p.variables <= e.label | f.label for p in moving):
                    self.open = [p for p in self.open if p not in moving]
                    self.roots[j] = _adopt(f, GjtEdge(e, tuple(moving)))
                    del self.roots[i]
                    return True
        return False

    def reduce(self) -> None:
        while self._iso() or self._cse():
            pass

    def finish(self) -> GjtNode | Witness:
        """The GJT if reduced to one root; predicates inside that root's label go on a copy above it."""
        if len(self.roots) == 1:
            root = self.roots[0]
            if all(p.variables <= root.label for p in self.open):
                return interior(root.label, GjtEdge(root, tuple(self.open))) if self.open else root
        return Witness(tuple(r.label for r in self.roots), tuple(self.open))


def build_gjt(query: Gcq) -> GjtNode | Witness:
    """A GJT for at(Q) and pred(Q), or the witness that the reduction sticks (Q is cyclic)."""
    forest = _Forest(query)
    forest.reduce()
    return forest.finish()


def build_compatible_gjt(query: Gcq) -> GjtNode | Witness:
    """Like ``build_gjt``, but guarded by out(Q) first so that a free-connex Q gets a compatible tree."""
    forest = _Forest(query)
    forest.guard = query.out
    forest.reduce()
    forest.guard = frozenset()
    forest.reduce()
    return forest.finish()
