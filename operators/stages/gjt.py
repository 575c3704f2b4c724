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
- With a ``ring`` (``rings.Ring``, e.g. ``SumRing``) and per-port ``lift`` ((slot, column position)
  pairs, a position may be a function of the row; (slot, position, True) counts non-NULL values),
  weights become ring payloads (``ring_weight.RingWeight``: +, ·, −, zero test through the ring; unlifted ports keep int
  weights, n standing for n·one). ρ_root(t) is then COUNT(*) and the SUMs of the join tuples
  grouped by var(root) (the root's tuples are the groups), maintained by Algorithm 2 alone,
  never enumerating the join (the F-IVM idea, IEDyn §2's footnote on rings). The stage emits
  group rows ``root tuple + (payload,)``, the old one out and the new one in, and ``enumerate``
  lists them. REDUCT mode only, with the key among the root's variables so each group lives under
  one key.
- ENUMERATE mode: Algorithm 1 walks N top-down through the P_n indexes (``enumerate``, pull
  mode); per batch the stage *delta-enumerates* ΔQ (push mode, what ``process`` returns), IEDyn §6.
  For a node n of N and one of its tuples t, let E(n, t) be what the subtree of N below n
  enumerates from t. With A and B the two children's parts, E = A×B and
  ΔE = ΔA×B' + A'×ΔB − ΔA×ΔB (primes: the state after the batch), so only the new state and
  the deltas are read. ΔA sums ΔE(c, s) over the *touched* tuples s of the child compatible with
  t: those whose subtree enumeration may have changed (a superset: the frontier's Δρ support, and
  upwards every parent tuple a touched child tuple can reach; Δρ alone would miss a tuple whose
  weight stays while its children change). Where both ΔA and ΔB are non-empty, each pair is
  listed once with its summed weight (``_DeltaEnumeration.both_changed``), so ΔQ comes out
  consolidated without a pass over it. When var(N) ⊋ output (acyclic, not free-connex) the
  enumeration is projected and consolidated, as IEDyn §6 does.

Bounds: an update costs O(|Δ| log n) plus, where the parent's variables come from the sibling,
the sibling rows it walks (once per batch and group: the probes are swept together); enumeration
has constant delay per row when each edge bounds one variable of the child (any number of bounds
on that variable make one interval: a band ``x - c < y < x + c`` is one walk, and one prefix-sum
difference in Algorithm 2). Inequalities on a second variable of the same edge are checked per row
while walking the first one's interval (and make Line 10 walk instead of summing): the delay is then
not bounded by a constant, nor by a logarithm (the paper's lexicographic sort with skips is not
built), which is the case the journal version of IEDyn withdrew its update bound for. Delta
enumeration files the batch's touched tuples like P_n, so a parent tuple finds its touched
children by the same probe that finds its rows. It lists each E'(n, s) and A' once per batch and
reuses the lists for every parent tuple that reaches them (``_DeltaEnumeration``): a batch costs
O(|ΔQ|) plus the touched tuples' probes, and O(|ΔQ|) memory, the size of the changelog returned
anyway (push mode returns a list, so the constant delay of a stream is not what it needs).

SQL NULLs: a comparison with NULL is never true and an equality on NULL never matches, so a row
with NULL in a joined or compared variable enters no index (it stays in ρ of its own node).
"""

from __future__ import annotations

import gc
import operator
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import timedelta
from decimal import Decimal

import attrs

from operators.stages.base import Change, KeyedStage, StageDescription, key_getter
from operators.structures.ring_weight import RingWeight, payload
from operators.structures.rings import Ring
from operators.structures.sorted_groups import UNBOUNDED, SortedGroup, SortedGroups
from operators.zset import Changelog, Row


@attrs.frozen
class Bound:
    """The predicate ``left op right + offset`` with ``op`` in ``<``, ``<=``."""

    left: str
    op: str
    right: str
    offset: int | float | Decimal | timedelta = 0  # a timedelta for dates (date + n days, + interval)


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

    def file(self, index: SortedGroups, row: Row, weight) -> None:
        """Add ``row`` to ``index`` unless it can join nothing through it (a NULL grouping or sort
        value, a failed predicate over the node's own variables)."""
        group = tuple(row[p] for p in self.group)
        sort = 0 if self.sort is None else row[self.sort]
        if None not in group and sort is not None and _all_hold(self.checks, row):
            index.add(group, sort, row, weight)


@attrs.frozen
class _Probe:
    """How a tuple on the other side of a join (a delta row, a parent tuple) finds its rows in an index.

    ``bounds`` are (probe position, is a lower bound, inclusive, offset to subtract from/add to the
    probe value) on the index's sort variable; ``residual`` the predicates between the two sides
    on other variables of the index, each (probe position, indexed position, strict, offset,
    probe is left), checked per row.
    """

    index: int
    spec: _IndexSpec
    group: tuple[int, ...]
    checks: tuple[_Check, ...]  # predicates over the probe's own variables
    bounds: tuple[tuple[int, bool, bool, object], ...]
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

    def rows(self, indexes: list[SortedGroups], probe: Row) -> Iterator[tuple[Row, object]]:
        """The indexed rows compatible with ``probe``, in sort order."""
        return self.rows_in(indexes[self.index], probe)

    def rows_in(self, index: SortedGroups, probe: Row) -> Iterator[tuple[Row, object]]:
        """``rows`` in an index filed by ``spec`` other than the state's (the batch's touched tuples)."""
        group = self.lookup(index, probe)
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

    def joined(self, indexes: list[SortedGroups], probes: dict[Row, object]) -> Iterator[tuple[Row, object]]:
        """Every indexed row compatible with some probe row, once per group of probes, with its
        weight times the summed weight of those probes (which may be 0: the row is still reached).

        The probes of one group are swept together (IEDyn §4's hybrid of sort-merge and index
        nested loops): their intervals sorted by lower and by upper end, one in-order walk of the
        group keeps the sum of the intervals containing the current row, and jumps (O(log n)) over
        stretches no interval covers. A batch of m probes into a group then costs O(m log m + the
        rows in the union of their intervals) rather than the sum of the intervals' lengths.
        """
        if self.residual:
            for probe, weight in probes.items():
                for row, row_weight in self.rows(indexes, probe):
                    yield row, weight * row_weight
            return
        by_group: dict[tuple, list] = defaultdict(list)
        for probe, weight in probes.items():
            if self.checks and not _all_hold(self.checks, probe):
                continue
            interval = self.interval(probe)
            if interval is not None:
                by_group[tuple(probe[p] for p in self.group)].append((interval, weight))
        index = indexes[self.index]
        for key, items in by_group.items():
            group = index.get(key)
            if group is None:
                continue
            if len(items) == 1:
                (interval, weight), = items
                for row, row_weight in group.rows(*interval):
                    yield row, weight * row_weight
            elif self.spec.sort is None:  # no inequality: every probe meets every row
                total = sum(weight for _, weight in items)
                for row, row_weight in group.rows():
                    yield row, total * row_weight
            else:
                yield from _sweep(group, self.spec.sort, items)

    def lookup(self, index: SortedGroups, probe: Row) -> SortedGroup | None:
        if self.checks and not _all_hold(self.checks, probe):
            return None
        return index.get(tuple(probe[p] for p in self.group))

    def total(self, indexes: list[SortedGroups], probe: Row):
        """Summed weight of the compatible rows: O(log n) prefix sums unless residual checks remain."""
        group = self.lookup(indexes[self.index], probe)
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


def _sweep(group: SortedGroup, sort: int, items: list) -> Iterator[tuple[Row, object]]:
    """``_Probe.joined`` for one group and several probe intervals ((low, low inclusive, high, high
    inclusive), weight). Ends are compared as pairs: a row's value v as (v, 1), a lower end as
    (value, 0) if inclusive else (value, 2), an upper end as (value, 2) if inclusive else (value, 0),
    so "v is above the lower end" is one tuple comparison whatever the inclusivity.

    A walk restarted at the next lower end admits that interval on its first row (``rows`` starts
    there with the same inclusivity), so every restart makes progress."""
    lows, highs = [], []
    for (low, low_inclusive, high, high_inclusive), weight in items:
        low_end = None if low is UNBOUNDED else (low, 0 if low_inclusive else 2)
        high_end = None if high is UNBOUNDED else (high, 2 if high_inclusive else 0)
        if low_end is not None and high_end is not None and not low_end < high_end:
            continue  # an empty interval
        lows.append((low_end, low, low_inclusive, weight))
        if high_end is not None:
            highs.append((high_end, weight))
    lows.sort(key=lambda item: (0,) if item[0] is None else (1, item[0]))
    highs.sort(key=lambda item: item[0])
    count, i, j, active, members = len(lows), 0, 0, 0, 0
    while i < count:
        _, low, low_inclusive, _ = lows[i]
        for row, row_weight in group.rows(low, low_inclusive):
            value = (row[sort], 1)
            while i < count and (lows[i][0] is None or lows[i][0] < value):
                active += lows[i][3]
                members += 1
                i += 1
            while j < len(highs) and not value < highs[j][0]:
                active -= highs[j][1]
                members -= 1
                j += 1
            if members:
                yield row, active * row_weight
            else:
                break  # nothing covers this row: jump to the next lower end (or stop)
        else:
            return


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
        self.frontier = False  # a node of N none of whose children are in N
        self.sides: tuple[_Node, ...] = ()  # its children in N, in the order its layout lists their parts
        self.layout: tuple[str, ...] = ()
        self.combine: Callable[[Row, Row], Row] | None = None


def _projector(source: dict[str, int], variables: tuple[str, ...]) -> Callable[[Row], Row]:
    positions = tuple(source[v] for v in variables)
    if positions == tuple(range(len(source))):
        return lambda row: row
    return key_getter(positions)


class GjtState:
    """One key's T-representation: ρ_n per node (``reducts``, by node number) and the indexes.

    The stage reads a state through these two lists only (a reduct as a dict, an index as a
    ``SortedGroups``), so a state of the same shape kept elsewhere runs the same algorithms: the Spark
    runner's ``gjt_pages.PagedGjtState`` holds them in pages of its state store."""

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
    indexes from the root; None means every node), emitting Δπ_output(Q). ``ring`` and ``lift``
    (optional, REDUCT mode): SUM/COUNT per root tuple as ring payloads (module docstring).
    ``push`` False (ENUMERATE mode): IEDyn's pull-based mode, the T-representation is kept up to date
    and nothing is delta-enumerated, so a batch costs Algorithm 2 alone; the result is read with
    ``enumerate``.
    """

    def __init__(self, name: str, root: TNode, key: tuple[str, ...], output: tuple[str, ...] | None,
                 connex: frozenset[tuple[int, ...]] | None, description: StageDescription, *,
                 ring: Ring | None = None, lift: Mapping[int, tuple[tuple, ...]] | None = None,
                 push: bool = True):
        self.name, self.root, self.key, self.output, self.connex = name, root, key, output, connex
        self.push = push
        self.description = description
        self.ring, self.lift = ring, dict(lift or {})
        if ring is not None and (output is not None or not set(key) <= set(root.variables)):
            raise ValueError(f"{name}: ring payloads need REDUCT mode (no output) and the key among the "
                             f"root's variables {root.variables}, so each group's payload lives under one key")
        if self.lift and ring is None:
            raise ValueError(f"{name}: lift without a ring")
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
        self.output_columns = output if output is not None else root.variables + (("payload",) if ring else ())
        if output is not None:
            self._plan_enumeration()

    def __reduce__(self):
        """Pickled as its constructor's arguments: the compiled closures are rebuilt (Spark runner)."""
        return _rebuild, ((self.name, self.root, self.key, self.output, self.connex, self.description),
                          {"ring": self.ring, "lift": self.lift, "push": self.push})

    def without_changes(self) -> GjtStage:
        """This stage in pull-based mode (``push`` False): same state layout, no result changes."""
        return _rebuild((self.name, self.root, self.key, self.output, self.connex, self.description),
                        {"ring": self.ring, "lift": self.lift, "push": False})

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
        bounds, residual = [], []
        for bound in cross:
            probe_is_left = bound.left in probe_positions and bound.left not in mine
            probe_variable, indexed_variable = (bound.left, bound.right) if probe_is_left else (bound.right, bound.left)
            entry = (probe_positions[probe_variable], mine[indexed_variable], bound.op == "<", _offset(bound), probe_is_left)
            if indexed_variable == sort_variable:
                # probe < v + c  <=>  v > probe - c ;  v < probe + c : an upper bound
                bounds.append((entry[0], probe_is_left, bound.op == "<=", _offset(bound)))
            else:
                residual.append(entry)
        return _Probe(self._index(spec), spec, tuple(probe_positions[v] for v in shared), tuple(theirs),
                      tuple(bounds), tuple(residual))

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
        # the parts in the output's order where they can be (enumeration is symmetric in the two
        # children): a full join's root layout is then the output itself, and needs no projection
        rank = {v: i for i, v in enumerate(self.output)}

        def first_output(child: _Node) -> int:
            return min((rank.get(v, len(rank)) for v in child.layout), default=len(rank))

        for node in self.nodes:  # post-order: children first
            if not self._in_connex[node.number]:
                continue
            inside = [c for c in node.children if self._in_connex[c.number]]
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
        self._project = _projector(layout, self.output)
        self._reorders = root.layout != self.output
        self._projects = set(root.layout) != set(self.output)  # not free-connex: consolidate

    # ---- the keyed-stage contract ------------------------------------------------------------

    @property
    def state_shape(self) -> tuple[int, int]:
        """(reducts, indexes) a key's state holds: one reduct per node, one index per distinct spec."""
        return len(self.nodes), len(self._specs)

    def key_function(self, port: int) -> Callable[[Row], tuple]:
        return self._key_functions[port]

    def key_of(self, port: int, row: Row) -> tuple:
        return self._key_functions[port](row)

    def describe(self) -> StageDescription:
        return self.description

    def process(self, key: tuple, state: GjtState | None, changes: list[Change]) -> tuple[GjtState | None, Changelog]:
        if state is None:
            state = GjtState(*self.state_shape)
        pending: list[dict[Row, int]] = [{} for _ in self.nodes]
        lift = self.lift
        for change in changes:
            weight = change.weight
            if change.port in lift:
                weight = self._lifted(change.port, change.row) * weight
            for leaf in self._leaves[change.port]:
                delta = pending[leaf.number]
                delta[change.row] = delta.get(change.row, 0) + weight
        applied: list[tuple[_Node, Row, int]] = []
        try:
            deltas = self._update(state, pending, applied)
            if self.ring is not None:
                out = self._group_changes(state, deltas[-1])
            elif self.output is None:
                out = list(deltas[-1].items())
            elif self.push:
                out = self._delta_enumerate(state, pending, deltas)
            else:
                out = []
        except BaseException:
            for node, row, weight in reversed(applied):
                self._apply_row(state, node, row, -weight)
            raise
        if not any(state.reducts):
            return None, out
        return state, out

    # ---- ring payloads ---------------------------------------------------------------------

    def _lifted(self, port: int, row: Row) -> RingWeight:
        """The payload of one row on a lifted port: ``one`` times ``lift(slot, value)`` per summed
        column (a NULL adds nothing, as SQL's SUM skips it; a SUM over NULLs only reads 0, not NULL).
        A lift's position may be a function of the row (a per-row expression); ``(slot, position,
        True)`` lifts 1 for a non-NULL value: that slot counts the join tuples where the value is not
        NULL, which SUM's NULL and AVG's divisor need."""
        ring = self.ring
        value = ring.one
        for slot, position, *indicator in self.lift[port]:
            lifted = position(row) if callable(position) else row[position]
            if lifted is not None:
                value = ring.mul_lift(value, slot, 1 if indicator and indicator[0] else lifted)
        return RingWeight(ring, value)

    def _group_changes(self, state: GjtState, delta: dict[Row, object]) -> Changelog:
        """Δρ_root as group rows ``root tuple + (payload,)``: the old row out, the new row in."""
        ring, root = self.ring, state.reducts[-1]
        out: Changelog = []
        for row, change in delta.items():
            new = root.get(row, 0)
            old = new - change
            if old:
                out.append((row + (payload(ring, old),), -1))
            if new:
                out.append((row + (payload(ring, new),), 1))
        return out

    # ---- Algorithm 2 -------------------------------------------------------------------------

    def _apply_row(self, state: GjtState, node: _Node, row: Row, weight: int) -> None:
        """ρ_n[row] += weight, and in every index on n that admits the row; all or nothing."""
        done = 0
        try:
            for spec, number in zip(node.indexes, node.index_numbers, strict=True):
                spec.file(state.indexes[number], row, weight)
                done += 1
        except BaseException:
            for spec, number in list(zip(node.indexes, node.index_numbers, strict=True))[:done]:
                spec.file(state.indexes[number], row, -weight)
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
                for other, weight in probe.joined(indexes, delta):
                    projected = from_sibling(other)
                    target[projected] = target.get(projected, 0) + weight
        return deltas

    # ---- Algorithm 1 and delta enumeration ---------------------------------------------------

    def _expand(self, indexes: list[SortedGroups], node: _Node, row: Row, weight) -> Iterator[tuple[Row, object]]:
        """E(node, row) over the current state: Algorithm 1 below one tuple of N. A binary node
        pairs everything its first child's side enumerates with everything its second's (Lines
        8-12 in another nesting order: the same pairs, each side walked with constant delay)."""
        if node.frontier:
            return iter(((row, weight),))
        if len(node.sides) == 1:
            return self._side(indexes, node.sides[0], row)
        return self._pairs(indexes, node, row)

    def _pairs(self, indexes: list[SortedGroups], node: _Node, row: Row) -> Iterator[tuple[Row, object]]:
        first, second = node.sides
        combine = node.combine
        for a, a_weight in self._side(indexes, first, row):
            for b, b_weight in self._side(indexes, second, row):
                yield combine(a, b), a_weight * b_weight

    def _side(self, indexes: list[SortedGroups], child: _Node, row: Row) -> Iterator[tuple[Row, object]]:
        """A' of the module docstring: everything the child enumerates below ``row``'s compatible
        tuples (a frontier child: those tuples themselves, straight from P_child)."""
        rows = child.parent_probe.rows(indexes, row)
        if child.frontier:
            return rows
        return (pair for other, weight in rows for pair in self._expand(indexes, child, other, weight))

    def enumerate(self, key: tuple, state: GjtState) -> Iterator[tuple[Row, int]]:
        """π_output(Q) for one key's state (pull mode): Algorithm 1 from every tuple of ρ_root; with a
        ring, the groups of ρ_root with their payloads (the aggregate, read without the join)."""
        if self.ring is not None:
            ring = self.ring
            return ((row + (payload(ring, weight),), 1) for row, weight in state.reducts[-1].items())
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

    def _touched(self, state: GjtState, pending: list[dict[Row, int]],
                 deltas: list[dict[Row, int]]) -> tuple[list[SortedGroups | None], set[Row]]:
        """Per node of N below the root, its touched tuples filed like P_n (so a parent tuple finds
        its compatible ones as it finds its rows, IEDyn §6 indexes the deltas like ρ); and the
        root's touched tuples.

        A parent's touched tuples: its children's touched tuples projected, where var(parent) ⊆
        var(child), and otherwise the sibling rows each touched child tuple joins, projected. For
        the child's Δρ support those are the keys Algorithm 2 already reached (``pending``, kept
        with the weights that summed to zero; it joined the sibling's old or new rows, and a row
        in one only is the sibling's own touched tuple, projected anyway), so only touched tuples
        outside the support walk the sibling again.
        """
        touched_sets: list[set[Row] | None] = [None] * len(self.nodes)
        indexes = state.indexes
        for node in self.nodes:
            if not self._in_connex[node.number]:
                continue
            if node.frontier:
                touched_sets[node.number] = set(deltas[node.number])
                continue
            touched = set(pending[node.number])
            for child in node.children:
                below = touched_sets[child.number]
                if child.to_parent is not None:
                    touched.update(map(child.to_parent, below))
                    continue
                support = deltas[child.number]
                outside = {row: 0 for row in below if row not in support}
                if outside:
                    touched.update(map(child.sibling.to_parent,
                                       (other for other, _ in child.sibling_probe.joined(indexes, outside))))
            touched_sets[node.number] = touched
        filed: list[SortedGroups | None] = [None] * len(self.nodes)
        for node in self.nodes:
            if node.parent_probe is None:
                continue
            index = filed[node.number] = SortedGroups()
            spec = node.parent_probe.spec
            for row in touched_sets[node.number]:
                spec.file(index, row, 1)
        return filed, touched_sets[-1]

    def _delta_enumerate(self, state: GjtState, pending: list[dict[Row, int]],
                         deltas: list[dict[Row, int]]) -> Changelog:
        """ΔQ of the batch: ΔE(root, t) summed over the root's touched tuples, projected.

        The cyclic collector is paused meanwhile: what is built (tuples, lists of them, dicts of
        lists; ``_DeltaEnumeration``) holds no cycle, and with millions of such objects alive its
        full passes rescanned them all again and again (a third of Q3's push run at 720 inserts).
        """
        collecting = gc.isenabled()
        gc.disable()
        try:
            touched, touched_root = self._touched(state, pending, deltas)
            batch = _DeltaEnumeration(state.indexes, touched, deltas)
            root, project = self.nodes[-1], self._project
            out: Changelog = []
            for top in touched_root:  # distinct root tuples, distinct rows (``_DeltaEnumeration``)
                if root.frontier:
                    weight = deltas[root.number].get(top)
                    if weight:
                        out.append((project(top), weight))
                elif self._reorders:
                    out += [(project(row), weight) for row, weight in batch.delta(root, top)]
                else:
                    out += batch.delta(root, top)
            if not self._projects:
                return out
            totals: dict[Row, object] = {}
            get = totals.get
            for row, weight in out:
                totals[row] = get(row, 0) + weight
            return [(row, weight) for row, weight in totals.items() if weight]
        finally:
            if collecting:
                gc.enable()


class _DeltaEnumeration:
    """One batch's delta enumeration (push mode): ΔE and the E' it multiplies, listed once per tuple.

    Each side is listed once per batch and tuple, then reused: ``full`` holds A' (everything a
    child enumerates below one parent tuple, over the new state), ``below`` E(n, s) over the new
    state, ``changed`` ΔE(n, s). A tuple reached from many parent tuples (every ``g`` above one
    ``e`` in ``e < g``) is then enumerated once per batch, not once per parent tuple, and the lists
    are built by comprehensions rather than nested generators. Every listed pair goes into at least
    one produced change (a side is listed only beside a non-empty other side), so the lists hold
    O(|ΔQ|) pairs, the size of the changelog returned anyway. A plain object rather than closures
    calling each other: closures would form a reference cycle holding those lists until the cyclic
    collector ran, which then scanned them (half the time of a large batch, measured).
    """

    __slots__ = ("indexes", "touched", "deltas", "full", "below", "changed")

    def __init__(self, indexes: list[SortedGroups], touched: list[SortedGroups | None],
                 deltas: list[dict[Row, int]]) -> None:
        self.indexes, self.touched, self.deltas = indexes, touched, deltas
        self.full: dict[tuple[int, Row], list[tuple[Row, object]]] = {}
        self.below: dict[tuple[int, Row], list[tuple[Row, object]]] = {}
        self.changed: dict[tuple[int, Row], list[tuple[Row, object]]] = {}

    def side(self, child: _Node, row: Row) -> list[tuple[Row, object]]:
        """A': E(child, s) over the new state, for the child's tuples s compatible with ``row``."""
        key = (child.number, row)
        found = self.full.get(key)
        if found is None:
            rows = child.parent_probe.rows(self.indexes, row)
            if child.frontier:
                found = list(rows)
            else:
                found = []
                for other, _ in rows:
                    found += self.enumerated(child, other)
            self.full[key] = found
        return found

    def enumerated(self, node: _Node, row: Row) -> list[tuple[Row, object]]:
        """E(node, row) over the new state, ``node`` off the frontier (Algorithm 1, listed)."""
        key = (node.number, row)
        found = self.below.get(key)
        if found is None:
            children = node.sides
            if len(children) == 1:
                found = self.side(children[0], row)
            else:
                first, second = children
                combine = node.combine
                found = self.side(first, row)
                if found:
                    found = [(combine(a, b), wa * wb) for a, wa in found for b, wb in self.side(second, row)]
            self.below[key] = found
        return found

    def changed_below(self, child: _Node, row: Row) -> list[tuple[Row, object]]:
        """ΔA: ΔE(child, s) over the child's touched tuples s compatible with ``row``."""
        candidates = child.parent_probe.rows_in(self.touched[child.number], row)
        if child.frontier:
            change = self.deltas[child.number]
            return [(candidate, weight) for candidate, _ in candidates if (weight := change.get(candidate))]
        out: list[tuple[Row, object]] = []
        for candidate, _ in candidates:
            out += self.delta(child, candidate)
        return out

    def delta(self, node: _Node, row: Row) -> list[tuple[Row, object]]:
        """ΔE(node, row) = ΔA×B' + A'×ΔB − ΔA×ΔB (module docstring), ``node`` off the frontier."""
        key = (node.number, row)
        found = self.changed.get(key)
        if found is not None:
            return found
        children = node.sides
        if len(children) == 1:
            out = self.changed_below(children[0], row)
        else:
            first, second = children
            combine = node.combine
            change_a, change_b = self.changed_below(first, row), self.changed_below(second, row)
            if change_a and change_b:
                out = self.both_changed(node, row, change_a, change_b)
            elif change_a:
                out = [(combine(a, b), wa * wb) for a, wa in change_a for b, wb in self.side(second, row)]
            elif change_b:
                out = [(combine(a, b), wa * wb) for a, wa in self.side(first, row) for b, wb in change_b]
            else:
                out = []
        self.changed[key] = out
        return out

    def both_changed(self, node: _Node, row: Row, change_a: list[tuple[Row, object]],
                     change_b: list[tuple[Row, object]]) -> list[tuple[Row, object]]:
        """ΔA×B' + A'×ΔB − ΔA×ΔB with every pair listed once, so no list needs consolidating.

        A pair (a, b) changes by new(a)·new(b) − old(a)·old(b): Δa·B'(b) when only a changed,
        A'(a)·Δb when only b did, Δa·B'(b) + A'(a)·Δb − Δa·Δb when both did (old = new − Δ).
        Each side is split once into its changed rows' new weights and the rest; rows of one list
        are distinct (a tuple's variables are among the rows' and the sides combine injectively),
        so every list ΔE returns is consolidated and the root's lists can be emitted as they are.
        """
        first, second = node.sides
        combine = node.combine
        new_a, rest_a = _split(self.side(first, row), change_a)
        new_b, rest_b = _split(self.side(second, row), change_b)
        out = [(combine(a, b), wa * wb) for a, wa in change_a for b, wb in rest_b]
        out += [(combine(a, b), wa * wb) for a, wa in rest_a for b, wb in change_b]
        for a, change in change_a:
            now = new_a.get(a, 0)
            for b, other in change_b:
                weight = change * new_b.get(b, 0) + now * other - change * other
                if weight:
                    out.append((combine(a, b), weight))
        return out


def _split(side: list[tuple[Row, object]], change: list[tuple[Row, object]]) -> tuple[dict[Row, object], list]:
    """``side``'s rows that ``change`` touches (row → new weight) and the others (as pairs)."""
    changed = dict(change)
    touched: dict[Row, object] = {}
    rest = []
    for pair in side:
        if pair[0] in changed:
            touched[pair[0]] = pair[1]
        else:
            rest.append(pair)
    return touched, rest

def _rebuild(arguments: tuple, options: dict) -> GjtStage:
    return GjtStage(*arguments, **options)
