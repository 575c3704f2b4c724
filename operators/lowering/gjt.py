"""Lower a ``GeneralizedJoinTree``: its GJT becomes the plain tree spec a ``GjtStage`` takes.

The stage (operators/stages/gjt.py) imports no planner code, so this is where the planner's values
turn into its spec: each GJT node into a ``TNode`` (its variables; a leaf, the input port its atom's
rows arrive on), each edge's inequalities into ``Bound``s, the connex set the stage enumerates
(paths from the root, the same tree shape) and out(Q) as the order of the rows it emits.

First version: the whole tree is one stage in ENUMERATE mode, keyed by the variables every leaf
holds (partitioning by them is exact); with none the key is constant and EXPLAIN says the stage
does not scale out. Splitting the subtrees hanging below the connex set into REDUCT-mode stages of
their own, each keyed by the variables of all its leaves, is not done yet.

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
from planner.ir.gjt import GjtNode
from planner.ir.gjt_maintenance import GeneralizedJoinTree
from planner.ir.logical import NamedExpr
from planner.ir.maintenance import Atom


def _tree(node: GjtNode, leaves: list[GcqAtom]) -> TNode:
    """``node`` as the stage's spec; each leaf's atom is appended to ``leaves`` (its index is its port)."""
    if node.atom is not None:
        leaves.append(node.atom)
        return TNode(tuple(dict.fromkeys(node.atom.variables)), (), len(leaves) - 1)
    children = tuple(
        TEdge(_tree(edge.child, leaves), tuple(Bound(p.left, p.op, p.right, p.offset) for p in edge.predicates))
        for edge in node.children
    )
    return TNode(tuple(sorted(node.label)), children)


def _route(builder: StageBuilder, atom: Atom, leaf: GcqAtom, stage: int, port: int) -> None:
    """The atom's rows as the leaf's: one column per variable; columns sharing one must be equal."""
    first = {v: c for c, v in reversed(tuple(zip(leaf.columns, leaf.variables, strict=True)))}
    equal = [Call("=", (Column(atom.alias, c), Column(atom.alias, first[v])))
             for c, v in zip(leaf.columns, leaf.variables, strict=True) if first[v] != c]
    if equal:
        atom = attrs.evolve(atom, predicate=conjunction([*([atom.predicate] if atom.predicate else []), *equal]))
    builder.route(atom, tuple(first[v] for v in dict.fromkeys(leaf.variables)), stage, port)


def _description(node: GeneralizedJoinTree, key: tuple[str, ...]) -> StageDescription:
    gjt = node.gjt
    shape = "free-connex" if gjt.free_connex else "not free-connex (projected with multiplicities, IEDyn §6)"
    return StageDescription(
        operator="GJT T-representation (IEDyn)",
        inputs=", ".join(a.alias for a in gjt.query.atoms),
        state="ρ of every GJT node, hashed on the variables shared with the sibling and sorted on the "
              "inequality variables, with prefix aggregates (linear in the input, no sub-join materialized)",
        key=", ".join(key) if key else "constant (does not scale out)",
        update_cost=node.update_bound,
        why=f"acyclic GCQ, {shape}; enumeration delay {node.delay_bound}",
    )


def lower_generalized_join_tree(builder: StageBuilder, node: GeneralizedJoinTree) -> Emitter:
    """The GJT stage of ``node`` and a map turning its rows of variables into rows of ``node.output``."""
    tree = node.gjt.tree
    if tree is None:
        raise ValueError(f"the query is cyclic ({node.gjt.witness}): no generalized join tree to lower")
    leaves: list[GcqAtom] = []
    root = _tree(tree, leaves)
    key = tuple(sorted(frozenset.intersection(*(a.var_set for a in leaves))))
    output = node.variables_out
    stage = builder.add(GjtStage("generalized join tree", root, key, output, node.enumerated, _description(node, key)))
    atoms = {a.alias: a for a in node.atoms}
    for port, leaf in enumerate(leaves):
        _route(builder, atoms[leaf.alias], leaf, stage, port)
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
