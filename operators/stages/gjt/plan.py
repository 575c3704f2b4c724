"""A GJT stage's plan: the tree compiled to numbered nodes, index specs, probes and enumeration
layouts (the package docstring says which algorithm each serves)."""

from __future__ import annotations

import operator
from collections import defaultdict
from collections.abc import Callable, Iterable

from operators.stages.base import key_getter
from operators.stages.gjt.probes import Check, IndexSpec, Probe, compiled_check, offset_of
from operators.stages.gjt.tree import Bound, TNode
from operators.zset import Row


class PlanNode:
    """A TNode compiled: its number (post-order), family, and the projections and joins it takes part in."""

    def __init__(self, number: int, path: tuple[int, ...], tnode: TNode, parent: PlanNode | None,
                 predicates: tuple[Bound, ...]) -> None:
        self.number, self.path, self.tnode = number, path, tnode
        self.variables = tnode.variables
        self.positions = {v: i for i, v in enumerate(tnode.variables)}
        self.parent = parent
        self.predicates = predicates  # pred(parent -> self)
        self.children: list[PlanNode] = []
        self.sibling: PlanNode | None = None
        self.indexes: list[IndexSpec] = []  # the indexes filing this node's rows, with their numbers
        self.index_numbers: list[int] = []
        self.to_parent: Callable[[Row], Row] | None = None  # π_var(parent) when var(parent) ⊆ var(self)
        self.up_checks: tuple[Check, ...] = ()  # pred(parent -> self) of a single child
        self.sibling_probe: Probe | None = None  # Line 10: this node's delta rows against S_sibling
        self.parent_probe: Probe | None = None  # Algorithm 1: a parent tuple against P_self
        # enumeration: the frontier variables below this node of N, in the order rows carry them
        self.frontier = False  # a node of N none of whose children are in N
        self.sides: tuple[PlanNode, ...] = ()  # its children in N, in the order its layout lists their parts
        self.layout: tuple[str, ...] = ()
        self.combine: Callable[[Row, Row], Row] | None = None


def projector(source: dict[str, int], variables: tuple[str, ...]) -> Callable[[Row], Row]:
    positions = tuple(source[v] for v in variables)
    if positions == tuple(range(len(source))):
        return lambda row: row
    return key_getter(positions)



class GjtPlan:
    """A binary GJT compiled for Algorithms 1 and 2: its nodes in post-order with their projections,
    the indexes (S_n, P_n; one per distinct spec) and the probes into them, and, in ENUMERATE mode,
    the layout each node of the connex set N enumerates and the final projection.

    The stage's compile-time half, kept apart from its update and enumeration; built from the
    stage's constructor arguments, so a pickled stage rebuilds it (closures do not pickle).
    """

    def __init__(self, name: str, root: TNode, key: tuple[str, ...], output: tuple[str, ...] | None,
                 connex: frozenset[tuple[int, ...]] | None) -> None:
        self.name, self.output, self.connex = name, output, connex
        self.nodes: list[PlanNode] = []
        self._compile(root, (), None, ())
        self.leaves: dict[int, list[PlanNode]] = defaultdict(list)
        key_positions: dict[int, tuple[int, ...]] = {}
        for node in self.nodes:
            if node.children:
                continue
            self.leaves[node.tnode.port].append(node)
            missing = [v for v in key if v not in node.positions]
            if missing:
                raise ValueError(f"{name}: key variable(s) {missing} not in leaf {node.variables}")
            positions = tuple(node.positions[v] for v in key)
            if key_positions.setdefault(node.tnode.port, positions) != positions:
                raise ValueError(f"{name}: port {node.tnode.port} feeds leaves with the key at different positions")
        self.key_functions = {port: key_getter(positions) for port, positions in key_positions.items()}
        self.specs: list[IndexSpec] = []
        for node in self.nodes:
            self._plan_joins(node)
        if output is not None:
            self._plan_enumeration()

    def _compile(self, tnode: TNode, path: tuple[int, ...], parent: PlanNode | None,
                 predicates: tuple[Bound, ...]) -> PlanNode:
        if len(tnode.children) > 2:
            raise ValueError(f"{self.name}: node {tnode.variables} has {len(tnode.children)} children; the GJT must be binary")
        if len(set(tnode.variables)) != len(tnode.variables):
            raise ValueError(f"{self.name}: node {tnode.variables} repeats a variable")
        if (tnode.port is None) == (not tnode.children):
            raise ValueError(f"{self.name}: node {tnode.variables}: leaves, and only leaves, name a port")
        node = PlanNode(-1, path, tnode, parent, predicates)
        for i, edge in enumerate(tnode.children):
            child = self._compile(edge.child, path + (i,), node, edge.predicates)
            node.children.append(child)
            known = set(tnode.variables) | set(edge.child.variables)
            for bound in edge.predicates:
                if bound.op not in ("<", "<=") or not {bound.left, bound.right} <= known:
                    raise ValueError(f"{self.name}: predicate {bound} on edge {tnode.variables} -> "
                                     f"{edge.child.variables} must be < or <= over their variables")
        if node.children and not any(set(tnode.variables) <= set(c.variables) for c in node.children):
            raise ValueError(f"{self.name}: node {tnode.variables} is covered by none of its children")
        if len(node.children) == 2:
            node.children[0].sibling, node.children[1].sibling = node.children[1], node.children[0]
        node.number = len(self.nodes)
        self.nodes.append(node)
        return node

    def _index(self, spec: IndexSpec) -> int:
        """The number of the index filed by ``spec`` (S_n and P_n share one when they coincide)."""
        if spec not in self.specs:
            self.specs.append(spec)
            owner = self.nodes[spec.node]
            owner.indexes.append(spec)
            owner.index_numbers.append(len(self.specs) - 1)
        return self.specs.index(spec)

    def _probe(self, indexed: PlanNode, probe_positions: dict[str, int], predicates: Iterable[Bound]) -> Probe:
        """The index on ``indexed`` and the probe into it for tuples over ``probe_positions``.

        Predicates over the indexed node's variables filter its rows once (in the index); those
        over the probe's only are checked on the probe; the rest compare one variable of each
        side: the first indexed variable they mention becomes the sort variable, bounded by the
        probe, and the others are checked per row.
        """
        mine = indexed.positions
        shared = tuple(sorted(set(mine) & set(probe_positions)))
        own, theirs, cross = [], [], []
        for bound in predicates:
            variables = {bound.left, bound.right}
            if variables <= set(mine):
                own.append(compiled_check(bound, mine))
            elif variables <= set(probe_positions):
                theirs.append(compiled_check(bound, probe_positions))
            else:
                cross.append(bound)
        sort_variable = next((b.left if b.left in mine else b.right for b in cross), None)
        spec = IndexSpec(indexed.number, tuple(mine[v] for v in shared),
                          None if sort_variable is None else mine[sort_variable], tuple(own))
        bounds, residual = [], []
        for bound in cross:
            probe_is_left = bound.left in probe_positions and bound.left not in mine
            probe_variable, indexed_variable = (bound.left, bound.right) if probe_is_left else (bound.right, bound.left)
            entry = (probe_positions[probe_variable], mine[indexed_variable], bound.op == "<", offset_of(bound), probe_is_left)
            if indexed_variable == sort_variable:
                # probe < v + c  <=>  v > probe - c ;  v < probe + c : an upper bound
                bounds.append((entry[0], probe_is_left, bound.op == "<=", offset_of(bound)))
            else:
                residual.append(entry)
        return Probe(self._index(spec), spec, tuple(probe_positions[v] for v in shared), tuple(theirs),
                      tuple(bounds), tuple(residual))

    def _plan_joins(self, node: PlanNode) -> None:
        """Algorithm 2's step from ``node`` to its parent: a projection, or Line 10's join via S_sibling."""
        parent = node.parent
        if parent is None:
            return
        if set(parent.variables) <= set(node.positions):
            node.to_parent = projector(node.positions, parent.variables)
        if node.sibling is None:
            node.up_checks = tuple(compiled_check(b, node.positions) for b in node.predicates)
            return
        node.sibling_probe = self._probe(node.sibling, node.positions,
                                         (*parent.children[0].predicates, *parent.children[1].predicates))

    def _plan_enumeration(self) -> None:
        """N, its layouts (the frontier variables each node's enumeration carries) and the P_n probes."""
        connex = self.connex if self.connex is not None else frozenset(n.path for n in self.nodes)
        self.in_connex = [n.path in connex for n in self.nodes]
        if () not in connex or any(path[:-1] not in connex for path in connex if path):
            raise ValueError(f"{self.name}: the connex set {sorted(connex)} is not a connected set containing the root")
        # the parts in the output's order where they can be (enumeration is symmetric in the two
        # children): a full join's root layout is then the output itself, and needs no projection
        rank = {v: i for i, v in enumerate(self.output)}

        def first_output(child: PlanNode) -> int:
            return min((rank.get(v, len(rank)) for v in child.layout), default=len(rank))

        for node in self.nodes:  # post-order: children first
            if not self.in_connex[node.number]:
                continue
            inside = [c for c in node.children if self.in_connex[c.number]]
            if inside and len(inside) != len(node.children):
                raise ValueError(f"{self.name}: the connex set is not sibling-closed at {node.variables}")
            for child in inside:
                child.parent_probe = self._probe(child, node.positions, child.predicates)
            if not inside:
                node.frontier, node.layout = True, node.variables
            elif len(inside) == 1:
                node.sides, node.layout = tuple(inside), inside[0].layout
            else:
                first, second = node.sides = tuple(sorted(inside, key=first_output))
                extra = tuple(i for i, v in enumerate(second.layout) if v not in first.layout)
                node.layout = first.layout + tuple(second.layout[i] for i in extra)
                if extra == tuple(range(len(second.layout))):  # disjoint sides: plain concatenation
                    node.combine = operator.add
                elif extra:
                    getter = key_getter(extra)
                    node.combine = lambda a, b, getter=getter: a + tuple(getter(b))
                else:
                    node.combine = lambda a, b: a
        root = self.nodes[-1]
        layout = {v: i for i, v in enumerate(root.layout)}
        unknown = [v for v in self.output if v not in layout]
        if unknown:
            raise ValueError(f"{self.name}: output variable(s) {unknown} are not in the connex set's variables")
        self.project = projector(layout, self.output)
        self.reorders = root.layout != self.output
        self.projects = set(root.layout) != set(self.output)  # not free-connex: consolidate
