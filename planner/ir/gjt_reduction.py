"""Building a GJT or proving none exists (IEDyn Prop. 3.7), by a GYO reduction generalized to predicates.

The conference paper omits the algorithm of Prop. 3.7 (the journal version, Idris et al., "General
Dynamic Yannakakis", VLDB J. 2020, gives one; its text was not available here). Ours is the GYO
reduction with its two steps extended to predicates, building the tree bottom-up as it reduces.
The state is a forest whose roots carry hyperedges, plus the predicates not yet placed on an edge.
Two steps, applied until neither applies:

- ISO (isolated variables): a root variable that occurs in no other root, in no open predicate and
  (in the guarded phase below) not in out(Q) is removed: a new parent labelled with the rest.
- CSE (conditional subset): root ``e`` folds into root ``f`` when every variable ``e`` shares with
  the other roots (and out(Q), when guarded) is in ``f``, and every open predicate that mentions a
  variable of ``e \\ f`` has its variables in ``e ∪ f``. ``e`` becomes a child of ``f`` (of a new
  node labelled ``f`` above it when ``f`` is an atom, since atoms are leaves), and those predicates
  label the edge to ``e``. Nodes may get many children; ``binarize`` (Prop. 3.9) splits them.

Every step keeps Def. 3.1 true of the forest, so if one root and no predicate remain, it is a GJT:
a tree returned is always a GJT (``gjt_errors`` re-checks it in the tests). If the reduction
sticks, the roots and open predicates left are the *witness* (for the triangle query: its three
edges). That a stuck reduction proves no GJT exists is what we did not prove: without predicates
the steps are exactly GYO's (complete, and tested against the classical criterion), with them we
rely on the analogy and on the paper's cases (Q3 refused, Table 1 all acyclic).

Free-connex (Prop. 3.7's "moreover"): the reduction first runs *guarded* by out(Q), as if out(Q)
were one more hyperedge (for queries without predicates, the classical criterion: Q is free-connex
iff Q and Q plus an atom over out(Q) are both acyclic, Bagan, Durand and Grandjean 2007), then
unguarded above the roots the first phase left. When those roots carry only output variables, they
and everything above are a connex set with var(N) = out(Q). ``connex_subset`` checks the finished
tree; compatibility is never assumed. Tests compare the verdicts with the classical criterion on
random queries without predicates; with predicates only the paper's cases back them.
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
    """The reduction state: roots and open predicates; ``guard`` holds variables ISO must keep
    (None: unguarded; an empty guard is the guarded run of a query with no output variables)."""

    def __init__(self, query: Gcq) -> None:
        self.roots: list[GjtNode] = [leaf(a) for a in query.atoms]
        self.open: list[Inequality] = sorted(query.predicates)
        self.guard: frozenset[str] | None = None

    def _elsewhere(self, i: int) -> frozenset[str]:
        """Variables of the other roots, and the guard."""
        others = (r.label for j, r in enumerate(self.roots) if j != i)
        return (self.guard or frozenset()).union(*others)

    def _iso(self) -> bool:
        if len(self.roots) == 1 and self.guard is None:
            return False  # unguarded, a lone root keeps its variables: removing them only adds nodes
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


def guarded_leftover(query: Gcq) -> Witness | None:
    """What the reduction guarded by out(Q) cannot remove when some of it lies outside out(Q): the
    witness that Q is not free-connex (the stuck state of GYO on Q plus a hyperedge out(Q)); None
    when the guarded phase leaves only output variables."""
    forest = _Forest(query)
    forest.guard = query.out
    forest.reduce()
    if all(r.label <= query.out for r in forest.roots) and not forest.open:
        return None
    return Witness(tuple(r.label for r in forest.roots), tuple(forest.open))


def build_compatible_gjt(query: Gcq) -> GjtNode | Witness:
    """Like ``build_gjt``, but guarded by out(Q) first so that a free-connex Q gets a compatible tree."""
    forest = _Forest(query)
    forest.guard = query.out
    forest.reduce()
    forest.guard = None
    forest.reduce()
    return forest.finish()
