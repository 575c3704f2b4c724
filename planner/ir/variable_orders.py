"""Variable orders for view trees, derived from a join query, and their estimated cost (Olteanu §4.1).

A variable order is a forest of the query's variables in which every atom's variables lie on one
root path (the atom hangs under the deepest of them). Every order here is built by *elimination*:
pick a variable x of a connected component of atoms, make it the component's root, drop x from the
atoms (those left with no variable hang at x) and recurse on the connected components of what
remains. Such an order is valid by construction. Two rules fix the choice of x:

- free variables first: while a component still has a free (GROUP BY) variable, x is one of them,
  so the free variables form the top of the order (the survey's condition for constant delay, and
  what ``ViewTreeStage`` requires);
- the canonical choice takes the variable with the most atoms (ties by name). For a hierarchical
  query this is the canonical order of Thm 4.1: x is an ancestor of y exactly when atoms(x) ⊋
  atoms(y); for a q-hierarchical one it already has free variables on top.

``candidate_orders`` enumerates other choices of x (every allowed variable at every step), bounded
in number, and ``estimate`` gives each a cost from catalog statistics (``Table.rows``, the
``ivm.rows`` property; ``DEFAULT_ROWS`` when a table has none), under the textbook uniformity
assumption that an atom of n rows over d variables has n^(1/d) distinct values per variable:

- state: the atoms' rows plus, per view V_X keyed by dep(X) (and the expanded V'_X of a free X),
  the estimated number of distinct keys: min over covering atoms of their rows, and at most the
  product of the keys' distinct values;
- per-update work: per dynamic atom, the single-tuple delta is joined with the other parts of each
  view on its path to the root; a part whose key the delta does not bind is probed and multiplies
  the delta by its fan-out (its distinct keys over the distinct values of the bound part of its
  key), unless the FDs determine the part's key from the bound variables (fan-out 1, Ex. 4.12). The
  work of the atom is the sum of the delta sizes along its path (1 per level for a q-hierarchical
  canonical order), and the order's update cost the mean over dynamic atoms.

The order is over the Σ-reduct's atoms when the reduct is the query as maintained (Thm 4.11): the
added variables only constrain the order; each original atom still hangs under the deepest of its
own variables. This module is plain data and arithmetic: the rule chooses (``rules/view_tree.py``).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable, Mapping

import attrs

from planner.ir.gcq import Gcq
from planner.ir.notation import notation_value

#: Rows assumed for a table whose catalog entry has no ``ivm.rows`` estimate.
DEFAULT_ROWS = 1000
#: How many orders ``candidate_orders`` returns at most (the canonical one included).
MAX_CANDIDATES = 8
#: How many variable rankings ``candidate_orders`` tries.
SHUFFLES = 200

#: A node of an order: a variable and its children.
OrderTree = tuple[str, tuple["OrderTree", ...]]


class OrderError(ValueError):
    """A forced order names an unknown variable or puts a free variable below a bound one."""


@notation_value
@attrs.frozen
class OrderCost:
    """An order (as ``order_text`` writes it) and its estimated state size and per-update work."""

    order: str
    state: float
    update: float


def order_text(forest: tuple[OrderTree, ...]) -> str:
    """``A(B, C(D, E))``; roots of a forest are separated by ``; ``."""
    def node(tree: OrderTree) -> str:
        variable, children = tree
        return variable + (f"({', '.join(map(node, children))})" if children else "")

    return "; ".join(map(node, forest))


def parse_order(text: str) -> tuple[OrderTree, ...]:
    """The inverse of ``order_text``.

    >>> parse_order("A(B, C(D, E)); F")
    (('A', (('B', ()), ('C', (('D', ()), ('E', ()))))), ('F', ()))
    """
    tokens = [t for t in _tokens(text) if t.strip()]
    position = 0

    def tree() -> OrderTree:
        nonlocal position
        variable = tokens[position].strip()
        position += 1
        children: list[OrderTree] = []
        if position < len(tokens) and tokens[position] == "(":
            position += 1
            children.append(tree())
            while tokens[position] == ",":
                position += 1
                children.append(tree())
            position += 1  # ")"
        return variable, tuple(children)

    forest = [tree()]
    while position < len(tokens) and tokens[position] == ";":
        position += 1
        forest.append(tree())
    return tuple(forest)


def _tokens(text: str) -> Iterable[str]:
    word = ""
    for char in text:
        if char in "(),;":
            yield word
            yield char
            word = ""
        else:
            word += char
    yield word


def components(atoms: Mapping[str, frozenset[str]]) -> list[dict[str, frozenset[str]]]:
    """The atoms grouped into connected components by shared variables."""
    groups: list[dict[str, frozenset[str]]] = []
    for alias, variables in atoms.items():
        linked = [g for g in groups if any(variables & other for other in g.values())]
        merged: dict[str, frozenset[str]] = {}
        for group in linked:
            merged |= group
            groups.remove(group)
        merged[alias] = variables
        groups.append(merged)
    position = {alias: i for i, alias in enumerate(atoms)}
    ordered = [{a: g[a] for a in sorted(g, key=position.__getitem__)} for g in groups]
    return sorted(ordered, key=lambda g: position[next(iter(g))])  # in the query's atom order


def _eliminate(atoms: Mapping[str, frozenset[str]], free: frozenset[str], choose) -> tuple[OrderTree, ...]:
    """The order that ``choose(allowed, atoms)`` picks at each step (see the module docstring)."""
    forest = []
    for component in components(atoms):
        variables = frozenset().union(*component.values())
        allowed = sorted(variables & free) or sorted(variables)
        x = choose(allowed, component)
        rest = {a: vs - {x} for a, vs in component.items() if vs - {x}}
        forest.append((x, _eliminate(rest, free, choose)))
    return tuple(forest)


def _most_atoms(allowed: list[str], component: Mapping[str, frozenset[str]]) -> str:
    return max(allowed, key=lambda v: (sum(v in vs for vs in component.values()), [-ord(c) for c in v]))


def _atom_variables(query: Gcq) -> dict[str, frozenset[str]]:
    return {a.alias: a.var_set for a in query.atoms}


def _free(query: Gcq) -> frozenset[str]:
    return query.variables if query.output is None else frozenset(query.output)


def canonical_order(query: Gcq) -> tuple[OrderTree, ...]:
    """The greedy order: free variables first, then the variable in the most atoms."""
    return _eliminate(_atom_variables(query), _free(query), _most_atoms)


def candidate_orders(query: Gcq, limit: int = MAX_CANDIDATES) -> list[tuple[OrderTree, ...]]:
    """The canonical order, then other elimination orders: each ranks the variables (sorted, then
    seeded shuffles, ``SHUFFLES`` tries) and takes the first allowed one at every step; at most
    ``limit`` distinct orders."""
    found = [canonical_order(query)]
    names = sorted(query.variables)
    shuffler = random.Random(0)  # seeded: the same query gets the same candidates
    for _ in range(SHUFFLES):
        rank = {v: i for i, v in enumerate(names)}
        order = _eliminate(_atom_variables(query), _free(query), lambda allowed, _c, r=rank: min(allowed, key=r.get))
        if order not in found:
            found.append(order)
        if len(found) >= limit:
            break
        shuffler.shuffle(names)
    return found


def forced_order(query: Gcq, names: tuple[str, ...]) -> tuple[OrderTree, ...]:
    """The elimination order taking, in each component, the first of ``names`` it has.

    ``names`` are variables (``r.a``) or columns (``r.a`` of any column in the variable's class, or a
    bare column name that only one variable has); variables not named come after, canonically.
    """
    wanted = [resolve_variable(query, name) for name in names]
    free = _free(query)

    def choose(allowed: list[str], component: Mapping[str, frozenset[str]]) -> str:
        variables = frozenset().union(*component.values())
        named = [v for v in wanted if v in variables]
        if not named:
            return _most_atoms(allowed, component)
        if named[0] not in allowed:
            raise OrderError(f"the forced order puts {named[0]} above the free variables "
                             f"{', '.join(sorted(variables & free))}: free variables must form the top of the order")
        return named[0]

    return _eliminate(_atom_variables(query), free, choose)


def resolve_variable(query: Gcq, name: str) -> str:
    """The variable ``name`` stands for (a variable, ``alias.column`` or a bare column name)."""
    name = name.strip()
    if name in query.variables:
        return name
    name = name.lower()
    matches = {v for a in query.atoms for c, v in zip(a.columns, a.variables, strict=False)
               if name in (f"{a.alias}.{c}", c)}
    if len(matches) != 1:
        known = ", ".join(sorted(query.variables))
        raise OrderError(f"{name!r} names {'no' if not matches else 'more than one'} variable of the query ({known})")
    return matches.pop()


def placement(forest: tuple[OrderTree, ...], atoms: Mapping[str, Iterable[str]]) -> dict[str, str]:
    """Each atom's node: the deepest of its variables in the order."""
    depth: dict[str, int] = {}

    def walk(tree: OrderTree, level: int) -> None:
        depth[tree[0]] = level
        for child in tree[1]:
            walk(child, level + 1)

    for root in forest:
        walk(root, 0)
    return {alias: max(variables, key=depth.__getitem__) for alias, variables in atoms.items()}


@attrs.frozen
class _View:
    variable: str
    dep: frozenset[str]
    atoms: tuple[str, ...]
    children: tuple[int, ...]
    parent: int
    free: bool


def _views(forest, atoms: Mapping[str, frozenset[str]], free: frozenset[str]) -> list[_View]:
    placed = placement(forest, atoms)
    views: list[_View] = []

    def walk(tree: OrderTree, ancestors: tuple[str, ...], parent: int) -> frozenset[str]:
        me = len(views)
        views.append(_View(tree[0], frozenset(), (), (), parent, tree[0] in free))
        here = tuple(a for a, node in placed.items() if node == tree[0])
        mentioned = frozenset().union(*(atoms[a] for a in here))
        children = []
        for child in tree[1]:
            children.append(len(views))
            mentioned |= walk(child, ancestors + (tree[0],), me)
        views[me] = attrs.evolve(views[me], dep=mentioned & frozenset(ancestors), atoms=here, children=tuple(children))
        return mentioned

    for root in forest:
        walk(root, (), -1)
    return views


def estimate(query: Gcq, forest: tuple[OrderTree, ...], rows: Mapping[str, int],
             static: frozenset[str] = frozenset(), own: Mapping[str, frozenset[str]] | None = None,
             determined: Callable[[Iterable[str]], frozenset[str]] = frozenset) -> OrderCost:
    """The cost of ``forest`` (see the module docstring); ``own`` the atoms' own variables when the
    order is over a Σ-reduct (they decide where an atom hangs and what its relation holds);
    ``determined(bound)`` the variables the FDs fix given ``bound`` (a probe for them has fan-out 1)."""
    atoms = dict(own) if own is not None else _atom_variables(query)
    views = _views(forest, atoms, _free(query))
    distinct = {v: min(rows[a] ** (1 / len(vs)) for a, vs in atoms.items() if v in vs) for v in query.variables}

    def size(key: frozenset[str]) -> float:
        if not key:
            return 1.0
        covering = [rows[a] for a, vs in atoms.items() if key <= vs]
        product = math.prod(distinct[v] for v in key)
        return min([product, *covering])

    state = sum(rows.values()) + sum(size(v.dep) + (size(v.dep | {v.variable}) if v.free else 0) for v in views)
    keys = {("atom", a): vs for a, vs in atoms.items()} | {("view", i): v.dep for i, v in enumerate(views)}
    index = {v.variable: i for i, v in enumerate(views)}
    updates = [_path_work(a, atoms, views, index, keys, size, determined) for a in atoms if a not in static]
    return OrderCost(order_text(forest), round(state, 1), round(sum(updates) / len(updates), 2) if updates else 0.0)


def _path_work(alias, atoms, views, index, keys, size, determined) -> float:
    """The summed delta sizes of a single-tuple update of ``alias`` along its path to the root."""
    node = index[next(v.variable for v in views if alias in v.atoms)]
    changed, bound, delta, work = ("atom", alias), set(atoms[alias]), 1.0, 0.0
    while node != -1:
        view = views[node]
        parts = [("atom", a) for a in view.atoms] + [("view", c) for c in view.children]
        for part in sorted((p for p in parts if p != changed), key=lambda p: -len(keys[p] & bound)):
            key = keys[part]
            if not key <= determined(bound):
                delta *= max(1.0, size(key) / size(frozenset(key & bound)))
                bound |= key
        work += delta
        changed, bound, node = ("view", node), set(view.dep), view.parent
    return work

