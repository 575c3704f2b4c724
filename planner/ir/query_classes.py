"""The hypergraph classes of a conjunctive query and the maintenance bounds each one brings (Olteanu
§3–§4; IEDyn §3 for acyclicity): q-hierarchical ⊂ hierarchical, q-hierarchical ⊂ free-connex ⊂
α-acyclic, the rest cyclic.

- hierarchical (Def. 4.2): for any two variables, atoms(x) and atoms(y) are disjoint or one
  contains the other;
- q-hierarchical (Def. 4.2): hierarchical, and atoms(x) ⊋ atoms(y) with y free implies x free;
- α-acyclic: the GYO reduction empties the hypergraph; free-connex: also with one more hyperedge
  over the free variables. Both are decided by ``gjt_reduction`` (IEDyn Prop. 3.7's generalized GYO,
  tested against the classical criteria), which also treats inequalities the IEDyn way.

For the two hierarchy classes an inequality across atoms, and a condition's pseudo-atom
(``join_query.py``), count as one more hyperedge over their variables (the survey's classes are for
conjunctive queries; as a hyperedge a condition can only make a class fail), unless the columns of
one atom hold all their variables: then they are a selection on that relation, which changes no
class. Variables a Σ-reduct added to an atom do not count: a condition on them needs the other
relation's row, so it is no selection on this one (Q19's condition over lineitem and part stays a
hyperedge in the reduct, although lineitem's reduct atom holds all its variables). Every failed class carries its witness in words, and ``QueryClasses`` adds the Σ-reduct
(Def. 4.9, ``fd_reduct.py``): the query *as maintained* is the reduct when that holds more classes.
"""

from __future__ import annotations

import itertools

import attrs

from catalog.schema import Catalog, FunctionalDependency
from planner.ir.fd_reduct import Reduct, sigma_reduct
from planner.ir.gcq import Atom, Gcq
from planner.ir.gjt_plan import plan_gjt
from planner.ir.gjt_reduction import Witness, build_gjt
from planner.ir.join_query import is_condition_atom

CLASSES = ("q-hierarchical", "hierarchical", "free-connex", "acyclic")

LOWER_BOUND = ("not q-hierarchical: no algorithm maintains it with O(N^(1/2-γ)) update time and O(N^(1/2-γ)) "
               "enumeration delay, for any γ > 0, unless the OuMv conjecture fails (Olteanu Thm 4.1)")
BOUNDS = {
    "q-hierarchical": "O(N) preprocessing, constant time per single-tuple update and constant enumeration delay "
                      "(Olteanu Thm 4.1), with a view tree over a factorized result (Ex. 4.4)",
    "reduct": "the Σ-reduct is q-hierarchical: O(|D|) preprocessing, constant time per single-tuple update and "
              "constant enumeration delay over databases satisfying the FDs (Olteanu Thm 4.11), with the reduct's "
              "view tree over the original relations (Ex. 4.12)",
    "free-connex": "free-connex α-acyclic: enumeration with constant delay from a structure linear in the database "
                   "(Dynamic Yannakakis matches the free-connex lower bound, IEDyn §1, §5); an update costs up to "
                   "linear time (IEDyn Thm 5.5, O((|db|+|u|) log(|db|+|u|)) with inequalities)",
    "acyclic": "α-acyclic, not free-connex: no constant-delay guarantee; IEDyn §6 maintains a free-connex "
               "extension of the output (at worst the full join). Insert-only: amortized constant time per insert "
               "and constant delay for every α-acyclic join query (Olteanu §4.6)",
    "cyclic": "cyclic: for the triangle count, the survey's example, heavy/light partitioning gives O(N^(1/2)) "
              "amortized update time and constant delay (§3.3), and no algorithm has O(N^(1/2-γ)) update time with "
              "O(N^(1-γ)) delay unless the OuMv conjecture fails (Thm 3.4)",
}


def _set(names) -> str:
    return "{" + ", ".join(sorted(names)) + "}"


def _hyperedges(query: Gcq) -> dict[str, frozenset[str]]:
    """Atoms, and the conditions no single atom holds."""
    atoms = [_own_variables(a) for a in query.atoms if not is_condition_atom(a)]
    conditions = {a.alias: a.var_set for a in query.atoms if is_condition_atom(a)}
    conditions |= {str(p): p.variables for p in query.predicates}
    edges = {a.alias: a.var_set for a in query.atoms if not is_condition_atom(a)}
    return edges | {name: vs for name, vs in conditions.items() if not any(vs <= a for a in atoms)}


def _own_variables(atom: Atom) -> frozenset[str]:
    """The variables of the atom's own columns (a reduct appends the ones dependencies add)."""
    return frozenset(atom.variables[: len(atom.columns)] if atom.columns else atom.variables)


def atoms_of(query: Gcq) -> dict[str, frozenset[str]]:
    """atoms(x) for every variable x: the hyperedges (atoms, inequalities) it occurs in."""
    edges = _hyperedges(query)
    return {v: frozenset(name for name, vs in edges.items() if v in vs) for v in sorted(query.variables)}


def hierarchy_witness(query: Gcq) -> str | None:
    """Why ``query`` is not hierarchical, None if it is."""
    atoms = atoms_of(query)
    for x, y in itertools.combinations(atoms, 2):
        ax, ay = atoms[x], atoms[y]
        if ax & ay and not ax <= ay and not ay <= ax:
            return (f"atoms({x}) = {_set(ax)} and atoms({y}) = {_set(ay)} overlap (in {_set(ax & ay)}) "
                    "but neither contains the other")
    return None


def free_dominance_witness(query: Gcq) -> str | None:
    """Why a hierarchical ``query`` is not q-hierarchical: a free variable below a bound one."""
    atoms, free = atoms_of(query), query.out
    for x, y in itertools.permutations(atoms, 2):
        if atoms[x] > atoms[y] and y in free and x not in free:
            return f"atoms({x}) = {_set(atoms[x])} ⊋ atoms({y}) = {_set(atoms[y])}, and {y} is free but {x} is bound"
    return None


@attrs.frozen
class Classification:
    """The classes ``query`` belongs to (in ``CLASSES`` order) and, for each one it misses, the witness."""

    query: Gcq
    classes: tuple[str, ...]
    witnesses: dict[str, str]

    @property
    def strongest(self) -> str:
        return self.classes[0] if self.classes else "cyclic"


def classify(query: Gcq) -> Classification:
    witnesses: dict[str, str] = {}
    hierarchy = hierarchy_witness(query)
    if hierarchy:
        witnesses["hierarchical"] = hierarchy
        witnesses["q-hierarchical"] = "not hierarchical"
    elif dominance := free_dominance_witness(query):
        witnesses["q-hierarchical"] = dominance
    gjt = plan_gjt(query)
    if not gjt.acyclic:
        witnesses["acyclic"] = f"the GYO reduction sticks: {gjt.witness}"
        witnesses["free-connex"] = "not acyclic"
    elif not gjt.free_connex:
        witnesses["free-connex"] = f"with a hyperedge over the free variables the GYO reduction sticks: {_guarded_witness(query)}"
    return Classification(query, tuple(c for c in CLASSES if c not in witnesses), witnesses)


def _guarded_witness(query: Gcq) -> Witness | str:
    out_atom = Atom("out(Q)", tuple(sorted(query.out)))
    found = build_gjt(attrs.evolve(query, atoms=query.atoms + (out_atom,)))
    return found if isinstance(found, Witness) else "no compatible tree"


@attrs.frozen
class QueryClasses:
    """The classes of a query and of its Σ-reduct; ``maintained`` is the one the bounds are for."""

    original: Classification
    reduct: Reduct
    reduct_classes: Classification | None  # None when no dependency adds a variable
    conditions: tuple[tuple[str, str], ...] = ()
    static_tables: tuple[str, ...] = ()
    self_joined: tuple[str, ...] = ()

    @property
    def uses_reduct(self) -> bool:
        return self.reduct_classes is not None and set(self.reduct_classes.classes) > set(self.original.classes)

    @property
    def maintained(self) -> Classification:
        return self.reduct_classes if self.uses_reduct else self.original

    @property
    def fd_reduct(self) -> tuple[FunctionalDependency, ...] | None:
        return self.reduct.used if self.uses_reduct else None

    def bounds(self) -> str:
        strongest = self.maintained.strongest
        if strongest == "q-hierarchical":
            return BOUNDS["reduct" if self.uses_reduct else "q-hierarchical"]
        shape = next((c for c in ("free-connex", "acyclic") if c in self.maintained.classes), "cyclic")
        text = f"{LOWER_BOUND}. {BOUNDS[shape]}"
        if self.self_joined:
            text += f". Thm 4.1's lower bound is stated for self-join-free queries; this one reads {', '.join(self.self_joined)} twice"
        return text


def classify_with_dependencies(query: Gcq, catalog: Catalog, conditions: tuple[tuple[str, str], ...] = ()) -> QueryClasses:
    reduct = sigma_reduct(query, catalog)
    tables = [a.table for a in query.atoms if a.table]
    static = tuple(sorted({t for t in tables if catalog.has_table(t) and catalog.table(t).static}))
    twice = tuple(sorted({t for t in tables if tables.count(t) > 1}))
    return QueryClasses(classify(query), reduct, classify(reduct.query) if reduct.changed else None,
                        conditions, static, twice)
