"""Lower a ``GeneralizedJoinTree``: its GJT becomes the plain tree spec a ``GjtStage`` takes.

The stage (operators/stages/gjt/) imports no planner code, so this is where the planner's values
turn into its spec: each GJT node into a ``TNode`` (its variables; a leaf, the input port its atom's
rows arrive on), each edge's inequalities into ``Bound``s, the connex set the stage enumerates
(paths from the root, the same tree shape) and out(Q) as the order of the rows it emits.

The connex set N and what hangs below it without a better key is one stage in ENUMERATE mode,
keyed by the variables every one of its leaves holds (partitioning by them is exact); with none
the key is constant and EXPLAIN says the stage does not scale out (all its state sits in one Spark
group). On Spark such a stage still touches O(changed) state per batch: its T-representation is kept
in pages, not pickled whole (``spark_stage_processors.PagedStateProcessor``, ``stages/gjt/pages.py``). A subtree hanging below N whose
leaves share more variables than that is a REDUCT-mode stage of its own keyed by them, feeding its
root's reduct to a leaf of the ENUMERATE stage (one level: such a subtree is not split further).

A leaf's rows are the atom's columns the query reads, one per variable, in the leaf's variable
order; two columns of one atom made equal by an equality are one variable, so the route keeps the
rows where they are equal and sends one of them. A stateless map then turns the emitted rows of
variables into rows of the output columns, for the select list or the aggregate above.
"""

from __future__ import annotations

import attrs

from operators.lowering.builder import Emitter, StageBuilder, finish_function_at
from operators.stages.base import StageDescription
from operators.stages.gjt import Bound, GjtStage, TEdge, TNode
from operators.stages.map import MapStage
from planner.ir.expressions import Call, Column, conjunction
from planner.ir.gcq import Atom as GcqAtom
from planner.ir.gjt import GjtNode, Path, nodes
from planner.ir.gjt_maintenance import GeneralizedJoinTree
from planner.ir.logical import NamedExpr
from planner.ir.maintenance import Atom


@attrs.frozen
class _Subtree:
    """A subtree hanging below the connex set, maintained by a REDUCT-mode stage of its own that feeds
    its root's reduct to the port of a leaf standing for it; ``key``: the variables of all its leaves."""

    root: GjtNode
    key: tuple[str, ...]


def _leaf_variables(root: GjtNode) -> frozenset[str]:
    """The variables every leaf (atom) of ``root``'s subtree holds: partitioning by them is exact."""
    return frozenset.intersection(*(n.atom.var_set for _, n in nodes(root) if n.atom is not None))


def stage_tree(node: GjtNode, inputs: list[GcqAtom | _Subtree], cut=None, path: Path = ()) -> TNode:
    """``node`` as the stage's spec; what feeds each leaf is appended to ``inputs`` (its index is the
    leaf's port). ``cut(child, path)`` names the subtrees to hand to stages of their own."""
    if node.atom is not None:
        inputs.append(node.atom)
        return TNode(tuple(dict.fromkeys(node.atom.variables)), (), len(inputs) - 1)
    children = []
    for i, edge in enumerate(node.children):
        subtree = cut(edge.child, path + (i,)) if cut else None
        if subtree is None:
            child = stage_tree(edge.child, inputs, cut, path + (i,))
        else:  # a leaf whose rows are the subtree root's reduct: the REDUCT stage's output
            inputs.append(subtree)
            child = TNode(tuple(sorted(edge.child.label)), (), len(inputs) - 1)
        children.append(TEdge(child, tuple(Bound(p.left, p.op, p.right, p.offset) for p in edge.predicates)))
    return TNode(tuple(sorted(node.label)), tuple(children))


def _route(builder: StageBuilder, atom: Atom, leaf: GcqAtom, stage: int, port: int) -> None:
    """The atom's rows as the leaf's: one column per variable; columns sharing one must be equal."""
    first = {v: c for c, v in reversed(tuple(zip(leaf.columns, leaf.variables, strict=True)))}
    equal = [Call("=", (Column(atom.alias, c), Column(atom.alias, first[v])))
             for c, v in zip(leaf.columns, leaf.variables, strict=True) if first[v] != c]
    if equal:
        atom = attrs.evolve(atom, predicate=conjunction([*([atom.predicate] if atom.predicate else []), *equal]))
    builder.route(atom, tuple(first[v] for v in dict.fromkeys(leaf.variables)), stage, port)


def gjt_description(node: GeneralizedJoinTree, key: tuple[str, ...], subtree: GjtNode | None = None) -> StageDescription:
    gjt = node.gjt
    shape = "free-connex" if gjt.free_connex else "not free-connex (projected with multiplicities, IEDyn §6)"
    why = f"acyclic GCQ, {shape}; enumeration delay {node.delay_bound}"
    if subtree is not None:
        why = (f"the subtree below {subtree.text()} is outside the connex set: only its root's reduct reaches the "
               "parent (Algorithm 2), so it is partitioned by the variables of all its leaves")
    return StageDescription(
        operator="GJT T-representation (IEDyn)" if subtree is None else "GJT subtree reduct (IEDyn Alg. 2)",
        inputs=", ".join(n.atom.alias for _, n in nodes(subtree if subtree is not None else gjt.tree) if n.atom),
        state="ρ of every GJT node, hashed on the variables shared with the sibling and sorted on the "
              "inequality variables, with prefix aggregates (linear in the input, no sub-join materialized)",
        key=", ".join(key) if key else "constant (does not scale out)",
        update_cost=node.update_bound,
        why=why,
    )


def lower_generalized_join_tree(builder: StageBuilder, node: GeneralizedJoinTree) -> Emitter:
    """The GJT stages of ``node`` (subtrees below the connex set that a key partitions in REDUCT-mode
    stages of their own, the rest in one ENUMERATE-mode stage) and a map turning the rows of
    variables it emits into rows of ``node.output``."""
    tree = node.gjt.tree
    if tree is None:
        raise ValueError(f"the query is cyclic ({node.gjt.witness}): no generalized join tree to lower")
    connex, everywhere = node.enumerated, _leaf_variables(tree)

    def cut(child: GjtNode, path: Path) -> _Subtree | None:
        # worth a stage when its leaves share more variables than the whole tree's: it scales out by them
        if path in connex or child.atom is not None or _leaf_variables(child) <= everywhere:
            return None
        return _Subtree(child, tuple(sorted(_leaf_variables(child))))

    inputs: list[GcqAtom | _Subtree] = []
    root = stage_tree(tree, inputs, cut)
    feeds = [_reduct_stage(builder, node, i) if isinstance(i, _Subtree) else i for i in inputs]
    key = tuple(sorted(shared_variables(root)))
    output = node.variables_out
    stage = builder.add(GjtStage("generalized join tree", root, key, output, connex, gjt_description(node, key)))
    connect_inputs(builder, node, feeds, stage)
    index = {c: output.index(node.variable_of(c)) for c in node.output}
    columns = tuple(NamedExpr(c.name, c) for c in node.output)
    expand = builder.add(MapStage(
        "columns of variables", finish_function_at(columns, None, index), tuple(map(str, node.output)),
        StageDescription(operator="Map (π)", inputs="enumerated join rows (variables)", state="none",
                         key="none (stateless)", update_cost="O(1) per change",
                         why="each output column read from its variable (columns made equal share one)")))
    builder.downstream[stage] = (expand, 0)
    builder.enumerating.add(stage)
    return Emitter(node.output, stage=expand)


def _spec_leaves(root: TNode) -> list[TNode]:
    return [root] if not root.children else [leaf for edge in root.children for leaf in _spec_leaves(edge.child)]


def shared_variables(root: TNode) -> frozenset[str]:
    """The variables every leaf of the spec holds: a key that partitions the stage exactly."""
    return frozenset.intersection(*(frozenset(leaf.variables) for leaf in _spec_leaves(root)))


def _reduct_stage(builder: StageBuilder, node: GeneralizedJoinTree, subtree: _Subtree) -> int:
    """A REDUCT-mode stage for ``subtree`` (added before the stage it feeds: ids stay topological)."""
    inputs: list[GcqAtom | _Subtree] = []
    root = stage_tree(subtree.root, inputs)
    stage = builder.add(GjtStage(f"generalized join subtree {subtree.root.text()}", root, subtree.key, None, None,
                                 gjt_description(node, subtree.key, subtree.root)))
    connect_inputs(builder, node, inputs, stage)
    return stage


def connect_inputs(builder: StageBuilder, node: GeneralizedJoinTree, feeds: list, stage: int) -> None:
    """Each port's rows: an atom routed from its table, or a subtree stage's output."""
    atoms = {a.alias: a for a in node.atoms}
    for port, feed in enumerate(feeds):
        if isinstance(feed, int):
            builder.downstream[feed] = (stage, port)
        else:
            _route(builder, atoms[feed.alias], feed, stage, port)
