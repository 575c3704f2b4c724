"""Σ-reducts (Olteanu Def. 4.9): each atom's schema extended by the closure of its variables under the
functional dependencies Σ, and the free variables by theirs.

Σ comes from the catalog (``Catalog.functional_dependencies``: primary keys and declared ones). A
dependency ``A → B`` of table T holds on the variables of every atom over T that has the columns
A: two results of the join that agree on A's variables read the same T row there, so they agree on
B's. Only columns the query uses are variables (``join_query.py``), so ``B`` is cut to those. The
closure is the textbook fixpoint (C_Σ({A,B}) = {A,B,C,D} for Σ = {A→C; BC→D}, §4.4). Variables
beyond an atom's ``columns`` are the ones the reduct added.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import attrs

from catalog.schema import Catalog, FunctionalDependency
from planner.ir.gcq import Atom, Gcq


@attrs.frozen
class _VariableDependency:
    determinant: frozenset[str]
    dependent: frozenset[str]
    source: FunctionalDependency  # restricted to the columns the query uses


@attrs.frozen
class Reduct:
    """The Σ-reduct of ``original``; ``used`` the dependencies that added a variable somewhere."""

    original: Gcq
    query: Gcq
    used: tuple[FunctionalDependency, ...]

    @property
    def changed(self) -> bool:
        return bool(self.used)


def _variable_dependencies(query: Gcq, catalog: Catalog) -> list[_VariableDependency]:
    found = []
    for atom in query.atoms:
        if not atom.table or not catalog.has_table(atom.table):
            continue  # a pseudo-atom for a condition has no dependencies of its own
        variable = dict(zip(atom.columns, atom.variables, strict=True))
        for fd in catalog.functional_dependencies(atom.table):
            if not all(c in variable for c in fd.determinant):
                continue
            dependent = tuple(c for c in fd.dependent if c in variable and c not in fd.determinant)
            left = frozenset(variable[c] for c in fd.determinant)
            right = frozenset(variable[c] for c in dependent) - left
            if right:
                found.append(_VariableDependency(left, right, attrs.evolve(fd, dependent=dependent)))
    return found


def closure(variables: Iterable[str], dependencies: list[_VariableDependency], used: set | None = None) -> frozenset[str]:
    """C_Σ(variables); adds to ``used`` each dependency that added a variable."""
    result = set(variables)
    changed = True
    while changed:
        changed = False
        for dep in dependencies:
            if dep.determinant <= result and not dep.dependent <= result:
                result |= dep.dependent
                changed = True
                if used is not None:
                    used.add(dep.source)
    return frozenset(result)


def closure_function(query: Gcq, catalog: Catalog) -> Callable[[Iterable[str]], frozenset[str]]:
    """C_Σ over ``query``'s variables: what a set of bound variables determines (for cost models:
    probing for determined variables finds at most one match on a database satisfying Σ)."""
    dependencies = _variable_dependencies(query, catalog)
    return lambda variables: closure(variables, dependencies)


def sigma_reduct(query: Gcq, catalog: Catalog) -> Reduct:
    dependencies = _variable_dependencies(query, catalog)
    used: set[FunctionalDependency] = set()
    atoms = []
    for atom in query.atoms:
        added = closure(atom.variables, dependencies, used) - atom.var_set
        atoms.append(Atom(atom.alias, atom.variables + tuple(sorted(added)), atom.table, atom.columns))
    output = None if query.output is None else closure(query.output, dependencies, used)
    reduct = attrs.evolve(query, atoms=tuple(atoms), output=output)
    return Reduct(query, reduct, _merged([dep.source for dep in dependencies if dep.source in used]))


def _merged(dependencies: list[FunctionalDependency]) -> tuple[FunctionalDependency, ...]:
    """One entry per (table, determinant): a self-join's atoms may each use part of the same dependency."""
    merged: dict[tuple, FunctionalDependency] = {}
    for fd in dependencies:
        key = (fd.table, fd.determinant, fd.declared)
        if key in merged:
            known = merged[key].dependent
            fd = attrs.evolve(fd, dependent=known + tuple(c for c in fd.dependent if c not in known))
        merged[key] = fd
    return tuple(merged.values())
