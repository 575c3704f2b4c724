"""Variable orders and the view-tree layout they define (Olteanu PODS'24 §4.1, F-IVM).

A variable order is a forest of the query's variables; every atom hangs under a variable such that
all of its variables lie on that variable's root path. The view tree has one view per variable X:

    V_X(dep(X)) = Σ_X lift(X) · Π_{atoms at X} R · Π_{children C} V_C(dep(C))

keyed by ``dep(X)``, the ancestors of X that X's subtree mentions. Free variables sit at the top
of the order (the survey's condition for constant delay); a free variable is not aggregated away
for enumeration, so its view is also kept *expanded*, ``V'_X(dep(X), X)``, the product before Σ_X,
grouped by ``dep(X)`` (Ex. 4.4's per-Y blocks).

This module is plain data and its derived layout: the spec (``Atom``, ``OrderNode``,
``VariableOrder``), checked on construction, and the precomputed plans the view-tree stage runs:
for each (view, changed part) the sequence of lookups and probes that join one delta entry with
the view's other parts. Positions are computed once here so the stage's inner loop only indexes
tuples. A planner derives the order; nothing here chooses one.
"""

from __future__ import annotations

import attrs


@attrs.frozen
class Atom:
    """An input relation on one stage port: ``variables[i]`` names column i of its rows."""

    name: str
    variables: tuple[str, ...]
    #: §4.5: a static atom's rows are loaded once (``initial``) and it has no delta path.
    static: bool = False


@attrs.frozen
class OrderNode:
    """A variable of the order, the atoms placed at it, and its children."""

    variable: str
    children: tuple[OrderNode, ...] = ()
    atoms: tuple[str, ...] = ()


@attrs.frozen
class VariableOrder:
    """The order (a forest), its atoms (port i is ``atoms[i]``), the free variables and the lifts.

    ``lifts`` maps a bound variable to the ring slot its values are lifted into (``ring.lift(slot,
    value)``); other variables lift to ``one``.
    """

    atoms: tuple[Atom, ...]
    roots: tuple[OrderNode, ...]
    free: tuple[str, ...] = ()
    lifts: tuple[tuple[str, int], ...] = ()


@attrs.frozen
class Step:
    """Join the running assignment with one part: a lookup when all its variables are bound, else a
    probe of its index on the bound ones, appending the values at ``new_positions`` of each match."""

    relation: int
    probe: bool
    bound_positions: tuple[int, ...]  # assignment positions giving the (sub)key
    index_positions: tuple[int, ...]  # key positions the probe's index groups by (probe only)
    new_positions: tuple[int, ...]  # key positions of the variables this part binds (probe only)
    new_variables: tuple[str, ...]


@attrs.frozen
class DeltaPlan:
    """How a delta to one part of view ``node`` becomes the delta of that view."""

    node: int
    steps: tuple[Step, ...]
    view_positions: tuple[int, ...]  # assignment positions of dep(node), the view's key
    variable_position: int  # assignment position of the node's variable
    enumerated: tuple[str, ...]  # variables not bound by the delta (empty: O(1) per delta entry)


@attrs.frozen
class ViewNode:
    variable: str
    parent: int  # index into ViewTreeLayout.nodes, -1 for a root
    dep: tuple[str, ...]
    parts: tuple[int, ...]  # relation ids: atoms at this variable, then children's views
    view: int  # relation id of V_X
    expanded: int  # relation id of V'_X (free variables), -1 otherwise
    lift_slot: int  # -1: lifts to one
    free: bool


@attrs.frozen
class ViewTreeLayout:
    """Relations are numbered: atoms first (id = port), then one view per node, then the expanded
    views of free variables. ``key_variables[id]`` names the key columns of relation ``id``."""

    order: VariableOrder
    nodes: tuple[ViewNode, ...]  # post-order: children before parents
    key_variables: tuple[tuple[str, ...], ...]
    index_positions: tuple[tuple[tuple[int, ...], ...], ...]  # per relation
    paths: tuple[tuple[DeltaPlan, ...], ...]  # per atom: the plans from its node to its root
    roots: tuple[int, ...]
    free_preorder: tuple[int, ...]  # free nodes, parents before children


def build_layout(order: VariableOrder) -> ViewTreeLayout:
    """Check ``order`` and precompute every view's key, parts, indexes and delta plans."""
    atoms = _atom_ports(order)
    lifts, free = dict(order.lifts), set(order.free)
    if free & lifts.keys():
        raise ValueError(f"free variables are group keys and take no lift: {sorted(free & lifts.keys())}")
    flat, placed, roots = _flatten(order, atoms, free)
    nodes, key_variables, expanded_ids = _view_nodes(order, atoms, flat, lifts, free)
    indexes: list[set[tuple[int, ...]]] = [set() for _ in key_variables]
    for i, relation in expanded_ids.items():
        indexes[relation].add(tuple(range(len(nodes[i].dep))))
    plans = {(i, part): _delta_plan(i, node, part, key_variables, indexes)
             for i, node in enumerate(nodes) for part in node.parts}
    paths = []
    for port in range(len(order.atoms)):
        path, node, part = [], placed[order.atoms[port].name], port
        while node != -1:
            path.append(plans[node, part])
            node, part = nodes[node].parent, nodes[node].view
        paths.append(tuple(path))
    free_preorder = tuple(_preorder(nodes, roots, lambda n: n.free))
    return ViewTreeLayout(order, tuple(nodes), tuple(key_variables),
                          tuple(tuple(sorted(ix)) for ix in indexes), tuple(paths), roots, free_preorder)


def _atom_ports(order: VariableOrder) -> dict[str, int]:
    """Each atom's port (its position in ``order.atoms``), once its name and variables are checked."""
    atoms = {atom.name: port for port, atom in enumerate(order.atoms)}
    if len(atoms) != len(order.atoms):
        raise ValueError("atom names must be distinct")
    for atom in order.atoms:
        if len(set(atom.variables)) != len(atom.variables) or not atom.variables:
            raise ValueError(f"atom {atom.name}: needs distinct variables, got {atom.variables}")
    return atoms


_Flat = list[tuple[OrderNode, int, tuple[str, ...]]]  # post-order (node, parent, ancestors)


def _flatten(order: VariableOrder, atoms: dict[str, int], free: set[str]) -> tuple[_Flat, dict[str, int], tuple[int, ...]]:
    """The order's nodes in post-order with their parents and ancestors, where each atom is placed,
    and the roots; checks that variables appear once, free ones on top, and every atom is placed."""
    flat: _Flat = []
    placed: dict[str, int] = {}

    def walk(node: OrderNode, ancestors: tuple[str, ...]) -> int:
        if node.variable in ancestors or any(node.variable == other.variable for other, _, _ in flat):
            raise ValueError(f"variable {node.variable} appears twice in the order")
        if node.variable in free and ancestors and ancestors[-1] not in free:
            raise ValueError(f"free variable {node.variable} sits below bound {ancestors[-1]}: "
                             "free variables must form the top of the order")
        child_ids = [walk(child, ancestors + (node.variable,)) for child in node.children]
        flat.append((node, -1, ancestors))
        me = len(flat) - 1
        for child in child_ids:
            flat[child] = (flat[child][0], me, flat[child][2])
        for name in node.atoms:
            if name not in atoms or name in placed:
                raise ValueError(f"atom {name} is unknown or placed twice")
            placed[name] = me
        return me

    roots = tuple(walk(root, ()) for root in order.roots)
    if missing := sorted(atoms.keys() - placed.keys()):
        raise ValueError(f"atoms not placed in the order: {missing}")
    if unknown := sorted(free - {node.variable for node, _, _ in flat}):
        raise ValueError(f"free variables not in the order: {unknown}")
    return flat, placed, roots


def _view_nodes(order: VariableOrder, atoms: dict[str, int], flat: _Flat, lifts: dict[str, int],
                free: set[str]) -> tuple[list[ViewNode], list[tuple[str, ...]], dict[int, int]]:
    """One view per node (its key: the ancestors its parts mention), every relation's key variables
    (atoms, views, then the expanded views of free nodes), and the expanded view of each free node."""
    count = len(flat)
    view_id = {i: len(order.atoms) + i for i in range(count)}
    key_variables: list[tuple[str, ...]] = [atom.variables for atom in order.atoms] + [()] * count
    nodes: list[ViewNode] = []
    expanded_ids: dict[int, int] = {}
    for i, (node, parent, ancestors) in enumerate(flat):
        path = ancestors + (node.variable,)
        parts = [atoms[name] for name in node.atoms]
        for name in node.atoms:
            if not set(order.atoms[atoms[name]].variables) <= set(path):
                raise ValueError(f"atom {name} has variables off the root path of {node.variable}: {path}")
        parts += [view_id[j] for j, (_, p, _) in enumerate(flat) if p == i]
        mentioned = {v for part in parts for v in key_variables[part]}
        if node.variable not in mentioned:
            raise ValueError(f"variable {node.variable} is in no atom below it")
        dep = tuple(v for v in ancestors if v in mentioned)
        key_variables[view_id[i]] = dep
        expanded = -1
        if node.variable in free:
            expanded = expanded_ids[i] = len(order.atoms) + count + len(expanded_ids)
        nodes.append(ViewNode(node.variable, parent, dep, tuple(parts), view_id[i], expanded,
                              lifts.get(node.variable, -1), node.variable in free))
    for i in expanded_ids:
        key_variables.append(nodes[i].dep + (nodes[i].variable,))
    return nodes, key_variables, expanded_ids


def _delta_plan(index: int, node: ViewNode, changed: int, key_variables, indexes) -> DeltaPlan:
    """Join order for a delta on ``changed``: lookups of fully bound parts first, then probes of the
    part sharing most variables; each probe registers the index it needs on that part."""
    assignment = list(key_variables[changed])
    others = [part for part in node.parts if part != changed]
    steps, enumerated = [], []

    def bound_count(part: int) -> tuple[bool, int]:
        names = key_variables[part]
        return (all(v in assignment for v in names), sum(v in assignment for v in names))

    while others:
        part = max(others, key=bound_count)
        others.remove(part)
        names = key_variables[part]
        if all(v in assignment for v in names):
            steps.append(Step(part, False, tuple(assignment.index(v) for v in names), (), (), ()))
            continue
        index_positions = tuple(k for k, v in enumerate(names) if v in assignment)
        new_positions = tuple(k for k, v in enumerate(names) if v not in assignment)
        indexes[part].add(index_positions)
        bound = tuple(assignment.index(names[k]) for k in index_positions)
        new_variables = tuple(names[k] for k in new_positions)
        steps.append(Step(part, True, bound, index_positions, new_positions, new_variables))
        enumerated += new_variables
        assignment += new_variables
    return DeltaPlan(index, tuple(steps), tuple(assignment.index(v) for v in node.dep),
                     assignment.index(node.variable), tuple(enumerated))


def _preorder(nodes, roots, keep):
    for root in roots:
        if keep(nodes[root]):
            yield root
            yield from _preorder(nodes, [j for j, n in enumerate(nodes) if n.parent == root], keep)
