"""Lower a ``ViewTreeAggregate``: keyed view-tree stages, then a map from payloads to SQL rows.

The rule's order (``ViewTreeAggregate.order``) becomes a ``VariableOrder``: each atom
hangs under the deepest of its variables, bound variables summed by an aggregate are lifted into
their ring slot. Each atom's source sends only the columns the view tree reads, in the atom's
variable order; the atom's pushed selection runs on the source row first.

The stages (``view_stages.py``: one per view or fused chain of views, each keyed by the variables
its inputs share) end in one that emits ``(free values..., payload)`` per changed group; the map
reads each aggregate off the payload (COUNT is the payload's count, SUM a slot, SUM(x*y) an entry
of the cofactor ring's Σxxᵀ) through the aggregate stage's own ``aggregate_value``, so empty groups
and AVG's types are Spark's exactly as for ``RingAggregate``, then applies HAVING and the select
list. Linear, so −old/+new pass through it as changes.

``single_stage=True`` keeps the first version: the whole tree in one stage keyed by a constant.
"""

from __future__ import annotations

from operators.lowering.builder import StageBuilder, finish_function
from operators.lowering.view_stages import lower_view_stages
from operators.stages.aggregate import AggregateSpec, aggregate_value
from operators.stages.base import StageDescription
from operators.stages.map import MapStage
from operators.stages.view_tree_groups import GroupedViewTreeStage
from operators.structures.rings import CofactorRing, CountRing, SumRing
from operators.structures.variable_order import Atom, OrderNode, VariableOrder
from planner.ir.expressions import Column, Expr
from planner.ir.variable_orders import OrderTree, parse_order, placement
from planner.ir.view_tree_plan import ViewTreeAggregate


def variable_order(node: ViewTreeAggregate) -> VariableOrder:
    """The stage's order from the node's: atoms hung under their deepest variable, lifts by slot."""
    own = {a.alias: node.atom_variables(a.alias) for a in node.atoms}
    placed = placement(parse_order(node.order), own)

    def convert(tree: OrderTree) -> OrderNode:
        variable, children = tree
        return OrderNode(variable, tuple(map(convert, children)),
                         tuple(alias for alias, at in placed.items() if at == variable))

    return VariableOrder(
        atoms=tuple(Atom(a.alias, own[a.alias], a.alias in node.static) for a in node.atoms),
        roots=tuple(map(convert, parse_order(node.order))),
        free=node.free,
        lifts=tuple((v, slot) for slot, v in enumerate(node.lifted)))


def _ring(node: ViewTreeAggregate):
    width = len(node.lifted)
    return {"count": CountRing, "sum": SumRing, "cofactor": CofactorRing}[node.ring_kind](
        *(() if node.ring_kind == "count" else (width,)))


def _reader(ring, slots: tuple[int, ...]):
    """payload → (the aggregate's sum, the count of its tuples)."""
    if isinstance(ring, CountRing):
        return lambda payload: (payload, payload)
    if len(slots) < 2:
        slot = slots[0] if slots else 0
        return lambda payload: (payload[1][slot] if slots else payload[0], payload[0])
    position = ring.pairs.index(tuple(sorted(slots)))
    return lambda payload: (payload[2][position], payload[0])


def lower_view_tree(builder: StageBuilder, node: ViewTreeAggregate, items: tuple | None,
                    having: Expr | None, single_stage: bool = False) -> tuple[int, tuple[Column, ...]]:
    """The stages of ``node``; returns (last stage, result layout).

    ``single_stage`` lowers the whole tree to one ``GroupedViewTreeStage`` keyed by a constant instead
    of per-view stages: the specification the per-view stages are tested against and the baseline of
    ``examples/benchmarks/view_tree_scaling.py``."""
    order = variable_order(node)
    ring = _ring(node)
    if single_stage:
        stage = builder.add(GroupedViewTreeStage(f"view tree {node.order}", order, ring))
        for port, atom in enumerate(node.atoms):
            builder.route(atom, node.atom_columns[atom.alias], stage, port)
    else:
        stage = lower_view_stages(builder, node, order, ring)
    group_positions = tuple(node.free.index(node.variable(g.expr)) for g in node.group_by)
    specs = tuple(AggregateSpec(func, None) for func, _ in node.payload_reads)
    readers = tuple(_reader(ring, slots) for _, slots in node.payload_reads)
    agg_layout = node.output
    finish = finish_function(items, having, agg_layout, hold=True)
    layout = tuple(Column(None, i.name) for i in items) if items is not None else agg_layout

    def result(row):
        payload = row[-1]
        values = []
        for spec, read in zip(specs, readers, strict=True):
            total, count = read(payload)
            values.append(aggregate_value(spec, total, count))
        return finish(tuple(row[p] for p in group_positions) + tuple(values))

    aggregates = ", ".join(f"{func.upper()}{list(slots) if slots else ''}" for func, slots in node.payload_reads)
    project = builder.add(MapStage("view tree result", result, tuple(map(str, layout)), StageDescription(
        operator=f"Map (payload → {aggregates})", inputs="per-group payload changes", state="none",
        key="none (stateless)", update_cost="O(1) per group change",
        why="reading aggregates off a payload is linear in the changes (−old, +new)")))
    builder.downstream[stage] = (project, 0)
    return project, layout
