"""IEDyn (GDyn over equalities and inequalities): a T-representation maintained as one keyed stage.

The stage holds, per key, the T-reduct of Definition 4.1 (one GMR ρ_n per node of a binary
generalized join tree) and the indexes of Definition 5.4 as IEDyn §5 instantiates them
(``operators.structures.sorted_groups``): S_n for every node with a sibling (grouped by the
variables shared with the sibling, sorted on n's variable bounded by pred(parent)) and P_n for
every node of the connex set N below the root (grouped by the variables shared with the parent,
sorted on n's variable bounded by pred(parent → n)). Its input is base rows on ports (one port per
leaf atom, rows in the leaf's variable order); it never materializes a join.

- Update (Algorithm 2): the batch's deltas climb the tree bottom-up, children before parents and
  the first child's subtree before the second's, so Line 10 joins a delta with the sibling's old
  reduct on one side and its new one on the other (Δ(A⋈B) = ΔA⋈B + A'⋈ΔB). The join probes S_m:
  when var(parent) ⊆ var(changed side) a delta row only needs the summed weight of the compatible
  sibling rows, one O(log n) prefix-sum query; otherwise the parent's tuples come from the sibling
  and the compatible rows are walked in sort order, stopping at the first one out of range.
- REDUCT mode (``output is None``): the stage emits Δρ_root, for a parent in another stage.
- ENUMERATE mode: Algorithm 1 walks N top-down through the P_n indexes (``enumerate``, pull
  mode); per batch the stage *delta-enumerates* ΔQ (push mode, what ``process`` returns), IEDyn §6.
  For a node n of N and one of its tuples t, let E(n, t) be what the subtree of N below n
  enumerates from t. With A and B the two children's parts, E = A×B and
  ΔE = ΔA×B' + A'×ΔB − ΔA×ΔB (primes: the state after the batch), so only the new state and
  the deltas are read. ΔA sums ΔE(c, s) over the *touched* tuples s of the child compatible with
  t: those whose subtree enumeration may have changed (a superset: the frontier's Δρ support, and
  upwards every parent tuple a touched child tuple can reach; Δρ alone would miss a tuple whose
  weight stays while its children change). When var(N) ⊋ output (acyclic, not free-connex) the
  enumeration is projected and consolidated, as IEDyn §6 does.

Bounds: an update costs O(|Δ| log n) plus, where the parent's variables come from the sibling,
the sibling rows it walks; enumeration has constant delay per row when every edge has at most one
inequality variable (more than one: the first bounds the walk and the others are checked per row,
so the delay is not bounded by a constant, as the journal version of IEDyn concedes for that case).
Delta enumeration finds the touched tuples compatible with a parent tuple by hashing on the shared
variables and checking the predicates per touched tuple (the touched sets are not sorted).

SQL NULLs: a comparison with NULL is never true and an equality on NULL never matches, so a row
with NULL in a joined or compared variable enters no index (it stays in ρ of its own node).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from decimal import Decimal

import attrs

from operators.stages.base import Change, KeyedStage, StageDescription, key_getter
from operators.structures.sorted_groups import UNBOUNDED, SortedGroup, SortedGroups
from operators.zset import Changelog, Row


@attrs.frozen
class Bound:
    """The predicate ``left op right + offset`` with ``op`` in ``<``, ``<=``."""

    left: str
    op: str
    right: str
    offset: int | float | Decimal = 0


@attrs.frozen
class TEdge:
    child: TNode
    predicates: tuple[Bound, ...] = ()  # pred(parent -> child)


@attrs.frozen
class TNode:
    """A GJT node: ``variables`` in the order of its tuples; a leaf names the port of its rows."""

    variables: tuple[str, ...]
    children: tuple[TEdge, ...] = ()
    port: int | None = None


# A comparison compiled to positions: (position of left, strict, position of right, offset or None).
_Check = tuple[int, bool, int, object]


def _holds(left, strict: bool, right, offset) -> bool:
    """``left < right + offset`` (``<=`` unless strict), false when either side is NULL."""
    if left is None or right is None:
        return False
    if offset is not None:
        right = right + offset
    return left < right if strict else left <= right


def _all_hold(checks: tuple[_Check, ...], row: Row) -> bool:
    for left, strict, right, offset in checks:
        if not _holds(row[left], strict, row[right], offset):
            return False
    return True


@attrs.frozen
class _IndexSpec:
    """How one index (an S_n or a P_n) files the rows of node ``node``."""

    node: int
    group: tuple[int, ...]  # positions of the shared variables, in the probe's order
    sort: int | None  # position of the bounded variable
    checks: tuple[_Check, ...]  # predicates over the node's own variables


@attrs.frozen
class _Probe:
    """How a tuple on the other side of a join (a delta row, a parent tuple) finds its rows in an index.

    ``bounds`` are (probe position, is a lower bound, inclusive, offset to subtract from/add to the
    probe value) on the index's sort variable; ``cross`` holds every predicate between the two
    sides, each (probe position, indexed position, strict, offset, probe is left), and ``residual``
    those not on the sort variable, checked per row.
    """

    index: int
    spec: _IndexSpec
    group: tuple[int, ...]
    checks: tuple[_Check, ...]  # predicates over the probe's own variables
    bounds: tuple[tuple[int, bool, bool, object], ...]
    cross: tuple[tuple[int, int, bool, object, bool], ...]
    residual: tuple[tuple[int, int, bool, object, bool], ...]

    def interval(self, probe: Row) -> tuple | None:
        """(low, low inclusive, high, high inclusive) on the sort variable; None if a bound is NULL."""
        low, low_inclusive, high, high_inclusive = UNBOUNDED, False, UNBOUNDED, False
        for position, lower, inclusive, offset in self.bounds:
            value = probe[position]
            if value is None:
                return None
            if lower:
                if offset is not None:
                    value = value - offset
                if low is UNBOUNDED or low < value or (low == value and not inclusive):
                    low, low_inclusive = value, inclusive
            else:
                if offset is not None:
                    value = value + offset
                if high is UNBOUNDED or value < high or (high == value and not inclusive):
                    high, high_inclusive = value, inclusive
        return low, low_inclusive, high, high_inclusive

    def residual_holds(self, probe: Row, row: Row) -> bool:
        return _cross_hold(self.residual, probe, row)

    def compatible(self, probe: Row, row: Row) -> bool:
        """The whole predicate between ``probe`` and ``row``, without the index (touched tuples)."""
        spec = self.spec
        if spec.sort is not None and row[spec.sort] is None:
            return False
        return (all(probe[p] == row[r] and row[r] is not None for p, r in zip(self.group, spec.group, strict=True))
                and _all_hold(self.checks, probe) and _all_hold(spec.checks, row)
                and _cross_hold(self.cross, probe, row))

    def rows(self, indexes: list[SortedGroups], probe: Row) -> Iterator[tuple[Row, object]]:
        """The indexed rows compatible with ``probe``, in sort order."""
        group = self.lookup(indexes, probe)
        if group is None:
            return
        interval = self.interval(probe)
        if interval is None:
            return
        if self.residual:
            for row, weight in group.rows(*interval):
                if _cross_hold(self.residual, probe, row):
                    yield row, weight
        else:
            yield from group.rows(*interval)

    def lookup(self, indexes: list[SortedGroups], probe: Row) -> SortedGroup | None:
        if self.checks and not _all_hold(self.checks, probe):
            return None
        return indexes[self.index].get(tuple(probe[p] for p in self.group))

    def total(self, indexes: list[SortedGroups], probe: Row):
        """Summed weight of the compatible rows: O(log n) prefix sums unless residual checks remain."""
        group = self.lookup(indexes, probe)
        if group is None:
            return 0
        interval = self.interval(probe)
        if interval is None:
            return 0
        if self.residual:
            acc = 0
            for row, weight in group.rows(*interval):
                if _cross_hold(self.residual, probe, row):
                    acc = acc + weight
            return acc
        return group.between(*interval)


def _cross_hold(checks, probe: Row, row: Row) -> bool:
    for probe_position, row_position, strict, offset, probe_is_left in checks:
        if probe_is_left:
            ok = _holds(probe[probe_position], strict, row[row_position], offset)
        else:
            ok = _holds(row[row_position], strict, probe[probe_position], offset)
        if not ok:
            return False
    return True


def _offset(bound: Bound):
    return None if bound.offset == 0 else bound.offset


def _check(bound: Bound, positions: dict[str, int]) -> _Check:
    return positions[bound.left], bound.op == "<", positions[bound.right], _offset(bound)


class _Node:
    """A TNode compiled: its number (post-order), family, and the projections and joins it takes part in."""

    def __init__(self, number: int, path: tuple[int, ...], tnode: TNode, parent: _Node | None,
                 predicates: tuple[Bound, ...]) -> None:
        self.number, self.path, self.tnode = number, path, tnode
        self.variables = tnode.variables
        self.positions = {v: i for i, v in enumerate(tnode.variables)}
        self.parent = parent
        self.predicates = predicates  # pred(parent -> self)
        self.children: list[_Node] = []
        self.sibling: _Node | None = None
        self.indexes: list[_IndexSpec] = []  # the indexes filing this node's rows, with their numbers
        self.index_numbers: list[int] = []
        self.to_parent: Callable[[Row], Row] | None = None  # π_var(parent) when var(parent) ⊆ var(self)
        self.up_checks: tuple[_Check, ...] = ()  # pred(parent -> self) of a single child
        self.sibling_probe: _Probe | None = None  # Line 10: this node's delta rows against S_sibling
        self.parent_probe: _Probe | None = None  # Algorithm 1: a parent tuple against P_self
        # enumeration: the frontier variables below this node of N, in the order rows carry them
        self.layout: tuple[str, ...] = ()
        self.combine: Callable[[Row, Row], Row] | None = None


def _projector(source: dict[str, int], variables: tuple[str, ...]) -> Callable[[Row], Row]:
    positions = tuple(source[v] for v in variables)
    if positions == tuple(range(len(source))):
        return lambda row: row
    getter = key_getter(positions)
    return lambda row: tuple(getter(row))


class GjtState:
    """One key's T-representation: ρ_n per node (``reducts``, by node number) and the indexes."""

    __slots__ = ("reducts", "indexes")

    def __init__(self, nodes: int, indexes: int) -> None:
        self.reducts: list[dict[Row, int]] = [{} for _ in range(nodes)]
        self.indexes: list[SortedGroups] = [SortedGroups() for _ in range(indexes)]

    def __getstate__(self):
        return self.reducts, self.indexes

    def __setstate__(self, data) -> None:
        self.reducts, self.indexes = data


class GjtStage(KeyedStage):
    """A binary GJT ``root`` over leaves on ports, maintained with IEDyn (module docstring).

    ``key``: variables in every leaf, the partition key. ``output`` None: REDUCT mode, emitting
    Δρ_root; otherwise ENUMERATE mode over the sibling-closed connex set ``connex`` (paths of child
    indexes from the root; None means every node), emitting Δπ_output(Q).
    """

    def __init__(self, name: str, root: TNode, key: tuple[str, ...], output: tuple[str, ...] | None,
                 connex: frozenset[tuple[int, ...]] | None, description: StageDescription):
        self.name, self.root, self.key, self.output, self.connex = name, root, key, output, connex
        self.description = description
        self.nodes: list[_Node] = []
        self._compile(root, (), None, ())
        self._leaves: dict[int, list[_Node]] = defaultdict(list)
        key_positions: dict[int, tuple[int, ...]] = {}
        for node in self.nodes:
            if node.children:
                continue
            self._leaves[node.tnode.port].append(node)
            missing = [v for v in key if v not in node.positions]
            if missing:
                raise ValueError(f"{name}: key variable(s) {missing} not in leaf {node.variables}")
            positions = tuple(node.positions[v] for v in key)
            if key_positions.setdefault(node.tnode.port, positions) != positions:
                raise ValueError(f"{name}: port {node.tnode.port} feeds leaves with the key at different positions")
        self._key_functions = {port: key_getter(positions) for port, positions in key_positions.items()}
        self._specs: list[_IndexSpec] = []
        for node in self.nodes:
            self._plan_joins(node)
        self.output_columns = root.variables if output is None else output
        if output is not None:
            self._plan_enumeration()

    def __reduce__(self):
        """Pickled as its constructor's arguments: the compiled closures are rebuilt (Spark runner)."""
        return GjtStage, (self.name, self.root, self.key, self.output, self.connex, self.description)

    # ---- compilation -------------------------------------------------------------------------

    def _compile(self, tnode: TNode, path: tuple[int, ...], parent: _Node | None,
                 predicates: tuple[Bound, ...]) -> _Node:
        if len(tnode.children) > 2:
            raise ValueError(f"{self.name}: node {tnode.variables} has {len(tnode.children)} children; the GJT must be binary")
        if len(set(tnode.variables)) != len(tnode.variables):
            raise ValueError(f"{self.name}: node {tnode.variables} repeats a variable")
        if (tnode.port is None) == (not tnode.children):
            raise ValueError(f"{self.name}: node {tnode.variables}: leaves, and only leaves, name a port")
        node = _Node(-1, path, tnode, parent, predicates)
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

    def _index(self, spec: _IndexSpec) -> int:
        """The number of the index filed by ``spec`` (S_n and P_n share one when they coincide)."""
        if spec not in self._specs:
            self._specs.append(spec)
            owner = self.nodes[spec.node]
            owner.indexes.append(spec)
            owner.index_numbers.append(len(self._specs) - 1)
        return self._specs.index(spec)

    def _probe(self, indexed: _Node, probe_positions: dict[str, int], predicates: Iterable[Bound]) -> _Probe:
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
                own.append(_check(bound, mine))
            elif variables <= set(probe_positions):
                theirs.append(_check(bound, probe_positions))
            else:
                cross.append(bound)
        sort_variable = next((b.left if b.left in mine else b.right for b in cross), None)
        spec = _IndexSpec(indexed.number, tuple(mine[v] for v in shared),
                          None if sort_variable is None else mine[sort_variable], tuple(own))
        bounds, compiled, residual = [], [], []
        for bound in cross:
            probe_is_left = bound.left in probe_positions and bound.left not in mine
            probe_variable, indexed_variable = (bound.left, bound.right) if probe_is_left else (bound.right, bound.left)
            entry = (probe_positions[probe_variable], mine[indexed_variable], bound.op == "<", _offset(bound), probe_is_left)
            compiled.append(entry)
            if indexed_variable == sort_variable:
                # probe < v + c  <=>  v > probe - c ;  v < probe + c : an upper bound
                bounds.append((entry[0], probe_is_left, bound.op == "<=", _offset(bound)))
            else:
                residual.append(entry)
        return _Probe(self._index(spec), spec, tuple(probe_positions[v] for v in shared), tuple(theirs),
                      tuple(bounds), tuple(compiled), tuple(residual))

    def _plan_joins(self, node: _Node) -> None:
        """Algorithm 2's step from ``node`` to its parent: a projection, or Line 10's join via S_sibling."""
        parent = node.parent
        if parent is None:
            return
        if set(parent.variables) <= set(node.positions):
            node.to_parent = _projector(node.positions, parent.variables)
        if node.sibling is None:
            node.up_checks = tuple(_check(b, node.positions) for b in node.predicates)
            return
        node.sibling_probe = self._probe(node.sibling, node.positions,
                                         (*parent.children[0].predicates, *parent.children[1].predicates))

    def _plan_enumeration(self) -> None:
        """N, its layouts (the frontier variables each node's enumeration carries) and the P_n probes."""
        connex = self.connex if self.connex is not None else frozenset(n.path for n in self.nodes)
        self._in_connex = [n.path in connex for n in self.nodes]
        if () not in connex or any(path[:-1] not in connex for path in connex if path):
            raise ValueError(f"{self.name}: the connex set {sorted(connex)} is not a connected set containing the root")
        for node in self.nodes:  # post-order: children first
            if not self._in_connex[node.number]:
                continue
            inside = [c for c in node.children if self._in_connex[c.number]]
            if inside and len(inside) != len(node.children):
                raise ValueError(f"{self.name}: the connex set is not sibling-closed at {node.variables}")
            for child in inside:
                child.parent_probe = self._probe(child, node.positions, child.predicates)
            if not inside:
                node.layout = node.variables
            elif len(inside) == 1:
                node.layout = inside[0].layout
            else:
                first, second = inside
                extra = tuple(i for i, v in enumerate(second.layout) if v not in first.layout)
                node.layout = first.layout + tuple(second.layout[i] for i in extra)
                if extra:
                    getter = key_getter(extra)
                    node.combine = lambda a, b, getter=getter: a + tuple(getter(b))
                else:
                    node.combine = lambda a, b: a
        root = self.nodes[-1]
        layout = {v: i for i, v in enumerate(root.layout)}
        unknown = [v for v in self.output if v not in layout]
        if unknown:
            raise ValueError(f"{self.name}: output variable(s) {unknown} are not in the connex set's variables")
        self._project = _projector(layout, self.output)
        self._projects = set(root.layout) != set(self.output)  # not free-connex: consolidate

    # ---- the keyed-stage contract ------------------------------------------------------------

    def key_function(self, port: int) -> Callable[[Row], tuple]:
        return self._key_functions[port]

    def key_of(self, port: int, row: Row) -> tuple:
        return self._key_functions[port](row)

    def describe(self) -> StageDescription:
        return self.description

    def process(self, key: tuple, state: GjtState | None, changes: list[Change]) -> tuple[GjtState | None, Changelog]:
        if state is None:
            state = GjtState(len(self.nodes), len(self._specs))
        pending: list[dict[Row, int]] = [{} for _ in self.nodes]
        for change in changes:
            for leaf in self._leaves[change.port]:
                delta = pending[leaf.number]
                delta[change.row] = delta.get(change.row, 0) + change.weight
        applied: list[tuple[_Node, Row, int]] = []
        try:
            deltas = self._update(state, pending, applied)
            if self.output is None:
                out = list(deltas[-1].items())
            else:
                out = self._delta_enumerate(state, deltas)
        except BaseException:
            for node, row, weight in reversed(applied):
                self._apply_row(state, node, row, -weight)
            raise
        if not any(state.reducts):
            return None, out
        return state, out

    # ---- Algorithm 2 -------------------------------------------------------------------------

    def _apply_row(self, state: GjtState, node: _Node, row: Row, weight: int) -> None:
        """ρ_n[row] += weight, and in every index on n that admits the row; all or nothing."""
        done = 0
        try:
            for spec, number in zip(node.indexes, node.index_numbers, strict=True):
                group = tuple(row[p] for p in spec.group)
                sort = 0 if spec.sort is None else row[spec.sort]
                if None in group or sort is None or not _all_hold(spec.checks, row):
                    done += 1
                    continue
                state.indexes[number].add(group, sort, row, weight)
                done += 1
        except BaseException:
            for spec, number in list(zip(node.indexes, node.index_numbers, strict=True))[:done]:
                group = tuple(row[p] for p in spec.group)
                sort = 0 if spec.sort is None else row[spec.sort]
                if None not in group and sort is not None and _all_hold(spec.checks, row):
                    state.indexes[number].add(group, sort, row, -weight)
            raise
        reduct = state.reducts[node.number]
        count = reduct.get(row, 0) + weight
        if count:
            reduct[row] = count
        else:
            del reduct[row]

    def _update(self, state: GjtState, pending: list[dict[Row, int]],
                applied: list[tuple[_Node, Row, int]]) -> list[dict[Row, int]]:
        """Algorithm 2 over the batch; returns Δρ_n per node (consolidated)."""
        deltas: list[dict[Row, int]] = []
        indexes = state.indexes
        for node in self.nodes:  # post-order: bottom-up, first child's subtree first
            delta = {row: weight for row, weight in pending[node.number].items() if weight}
            deltas.append(delta)
            for row, weight in delta.items():
                self._apply_row(state, node, row, weight)
                applied.append((node, row, weight))
            parent = node.parent
            if parent is None or not delta:
                continue
            target = pending[parent.number]
            to_parent = node.to_parent
            probe = node.sibling_probe
            if probe is None:  # one child: Δ_p = π_var(p) σ_pred(p→n) Δ_n
                checks = node.up_checks
                for row, weight in delta.items():
                    if not checks or _all_hold(checks, row):
                        projected = to_parent(row)
                        target[projected] = target.get(projected, 0) + weight
            elif to_parent is not None:  # var(p) ⊆ var(n): one prefix-sum query per delta row
                for row, weight in delta.items():
                    total = probe.total(indexes, row)
                    if total:
                        projected = to_parent(row)
                        target[projected] = target.get(projected, 0) + weight * total
            else:  # the parent's variables come from the sibling: walk its compatible rows
                from_sibling = node.sibling.to_parent
                for row, weight in delta.items():
                    for other, other_weight in probe.rows(indexes, row):
                        projected = from_sibling(other)
                        target[projected] = target.get(projected, 0) + weight * other_weight
        return deltas

    # ---- Algorithm 1 and delta enumeration ---------------------------------------------------

    def _expand(self, indexes: list[SortedGroups], node: _Node, row: Row, weight) -> Iterator[tuple[Row, object]]:
        """E(node, row) over the current state: Algorithm 1 below one tuple of N."""
        children = node.children
        if not children or not self._in_connex[children[0].number]:
            yield row, weight
        elif len(children) == 1:
            child = children[0]
            for other, other_weight in child.parent_probe.rows(indexes, row):
                yield from self._expand(indexes, child, other, other_weight)
        else:
            first, second = children
            combine = node.combine
            for left, left_weight in first.parent_probe.rows(indexes, row):
                for right, right_weight in second.parent_probe.rows(indexes, row):
                    for a, a_weight in self._expand(indexes, first, left, left_weight):
                        for b, b_weight in self._expand(indexes, second, right, right_weight):
                            yield combine(a, b), a_weight * b_weight

    def _side(self, indexes: list[SortedGroups], child: _Node, row: Row) -> Iterator[tuple[Row, object]]:
        """A' of the module docstring: everything the child enumerates below ``row``'s compatible tuples."""
        for other, other_weight in child.parent_probe.rows(indexes, row):
            yield from self._expand(indexes, child, other, other_weight)

    def enumerate(self, key: tuple, state: GjtState) -> Iterator[tuple[Row, int]]:
        """π_output(Q) for one key's state (pull mode): Algorithm 1 from every tuple of ρ_root."""
        if self.output is None:
            raise TypeError(f"{self.name}: a REDUCT-mode stage has no output to enumerate")
        root, project, indexes = self.nodes[-1], self._project, state.indexes
        rows = (
            (project(row), weight)
            for top, top_weight in state.reducts[root.number].items()
            for row, weight in self._expand(indexes, root, top, top_weight)
        )
        if not self._projects:
            return rows
        totals: Counter = Counter()
        for row, weight in rows:
            totals[row] += weight
        return ((row, weight) for row, weight in totals.items() if weight)

    def _touched(self, state: GjtState, deltas: list[dict[Row, int]]) -> list[dict[tuple, list[Row]] | None]:
        """Per node of N, its touched tuples grouped by the variables shared with the parent."""
        touched_sets: list[set[Row] | None] = [None] * len(self.nodes)
        indexes = state.indexes
        for node in self.nodes:
            if not self._in_connex[node.number]:
                continue
            children = node.children
            if not children or not self._in_connex[children[0].number]:
                touched_sets[node.number] = set(deltas[node.number])
                continue
            touched: set[Row] = set()
            for child in children:
                below = touched_sets[child.number]
                if child.to_parent is not None:
                    touched.update(map(child.to_parent, below))
                else:  # reach the parent tuples through the sibling's new rows joining each touched row
                    from_sibling = child.sibling.to_parent
                    for row in below:
                        touched.update(from_sibling(other) for other, _ in child.sibling_probe.rows(indexes, row))
            touched_sets[node.number] = touched
        grouped: list[dict[tuple, list[Row]] | None] = [None] * len(self.nodes)
        for node in self.nodes:
            if node.parent_probe is None:
                continue
            by_group: dict[tuple, list[Row]] = defaultdict(list)
            positions = node.parent_probe.spec.group
            for row in touched_sets[node.number]:
                by_group[tuple(row[p] for p in positions)].append(row)
            grouped[node.number] = by_group
        grouped[-1] = {(): list(touched_sets[-1])}
        return grouped

    def _delta_enumerate(self, state: GjtState, deltas: list[dict[Row, int]]) -> Changelog:
        """ΔQ of the batch: ΔE(root, t) summed over the root's touched tuples, projected."""
        touched = self._touched(state, deltas)
        indexes = state.indexes
        memo: dict[tuple[int, Row], list[tuple[Row, object]]] = {}

        def changed_below(child: _Node, row: Row) -> list[tuple[Row, object]]:
            """ΔA: ΔE(child, s) over the child's touched tuples s compatible with ``row``."""
            probe = child.parent_probe
            out: list[tuple[Row, object]] = []
            for candidate in touched[child.number].get(tuple(row[p] for p in probe.group), ()):
                if probe.compatible(row, candidate):
                    out.extend(delta(child, candidate))
            return out

        def delta(node: _Node, row: Row) -> list[tuple[Row, object]]:
            found = memo.get((node.number, row))
            if found is not None:
                return found
            children = node.children
            if not children or not self._in_connex[children[0].number]:
                weight = deltas[node.number].get(row)
                out = [(row, weight)] if weight else []
            elif len(children) == 1:
                out = changed_below(children[0], row)
            else:
                first, second = children
                combine = node.combine
                change_a, change_b = changed_below(first, row), changed_below(second, row)
                out = []
                if change_a:
                    out += [(combine(a, b), wa * wb) for b, wb in self._side(indexes, second, row) for a, wa in change_a]
                if change_b:
                    out += [(combine(a, b), wa * wb) for a, wa in self._side(indexes, first, row) for b, wb in change_b]
                    if change_a:
                        out += [(combine(a, b), -wa * wb) for a, wa in change_a for b, wb in change_b]
            memo[(node.number, row)] = out
            return out

        root, project = self.nodes[-1], self._project
        totals: dict[Row, object] = {}
        for top in touched[-1][()]:
            for row, weight in delta(root, top):
                projected = project(row)
                totals[projected] = totals.get(projected, 0) + weight
        return [(row, weight) for row, weight in totals.items() if weight]
