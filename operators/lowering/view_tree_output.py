"""Lower a ``FactorizedViewTree``: one count-ring view-tree stage emitting rows of its output columns.

The order becomes the stage's ``VariableOrder`` exactly as for an aggregate view tree
(``view_tree.variable_order``); each atom's source sends the columns the tree reads, after its
pushed selection (with ``IS NOT NULL`` on nullable join columns). The stage enumerates free tuples
and emits them as rows of the node's output columns (columns made equal share a variable), which
the select list or the aggregate above reads.

The stage is registered as enumerating (``StageBuilder.enumerating``): when nothing but maps follows
it, the view reads its result from the stage's state instead of keeping a copy (pull mode).
One stage keyed by a constant, as every view tree today.
"""

from __future__ import annotations

from operators.lowering.builder import Emitter, StageBuilder
from operators.lowering.view_tree import variable_order
from operators.stages.view_tree_output import FactorizedOutputStage
from planner.ir.view_tree_plan import FactorizedViewTree


def lower_factorized_view_tree(builder: StageBuilder, node: FactorizedViewTree) -> Emitter:
    """The stage of ``node``, emitting rows of its output columns; returns where the joined rows come from."""
    positions = tuple(node.free.index(node.variable(c)) for c in node.output)
    stage = builder.add(FactorizedOutputStage(f"view tree {node.order}", variable_order(node),
                                              tuple(map(str, node.output)), positions, node.once_each))
    for port, atom in enumerate(node.atoms):
        builder.route(atom, node.atom_columns[atom.alias], stage, port)
    builder.enumerating.add(stage)
    return Emitter(node.output, stage=stage)
