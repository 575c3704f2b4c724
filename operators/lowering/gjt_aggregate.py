"""Lower an aggregate over a GJT read off the root's ring payload (``planner/ir/gjt_aggregate.py``).

Two stages: the whole GJT guarded by the GROUP BY as one ``GjtStage`` in ring mode (REDUCT, no
enumeration; its key the variables every leaf holds that the root holds too, so each root tuple
lives under one key), each SUM/AVG/COUNT argument column lifted at its atom's port; then a
``PayloadAggregateStage`` keyed by the group turning payloads into Spark's aggregate values and
applying HAVING and the select list. Subtrees are not split into stages of their own here (the
enumeration lowering does that below the connex set): one ring stage holds the whole tree.
"""

from __future__ import annotations

import functools
from operator import itemgetter

import attrs

from operators.lowering.builder import StageBuilder, finish_function
from operators.lowering.expr_eval import compile_expr
from operators.lowering.gjt import connect_inputs, gjt_description, shared_variables, stage_tree
from operators.stages.aggregate import AggregateSpec
from operators.stages.gjt import GjtStage
from operators.stages.payload_aggregate import PayloadAggregateStage
from operators.structures.rings import SumRing
from planner.ir.expressions import Column, Expr
from planner.ir.gcq import Atom as GcqAtom
from planner.ir.gjt_aggregate import GjtRingAggregate
from planner.ir.maintenance import RingAggregate


def lower_gjt_aggregate(builder: StageBuilder, aggregate: RingAggregate, ring: GjtRingAggregate, items: tuple | None,
                        having: Expr | None) -> tuple[int, tuple[Column, ...]]:
    """The stages of ``aggregate`` (a ``RingAggregate`` over ``ring.node``); returns (last stage,
    result layout) as the other aggregate lowerings do."""
    node = ring.node
    inputs: list[GcqAtom] = []
    root = stage_tree(ring.plan.tree, inputs)
    common = shared_variables(root)
    key = tuple(v for v in root.variables if v in common)
    lift = {}
    for port, atom in enumerate(inputs):
        order = tuple(dict.fromkeys(atom.variables))
        layout = {Column(atom.alias, c): order.index(v) for c, v in zip(atom.columns, atom.variables, strict=True)}
        lifted = tuple((slot, _part(terms, layout), kind == "non-null")
                       for slot, (kind, parts) in enumerate(ring.lifts) for alias, terms in parts if alias == atom.alias)
        if lifted:
            lift[port] = lifted
    description = attrs.evolve(
        gjt_description(node, key), operator="GJT T-representation, ring payloads (IEDyn + F-IVM's SumRing)",
        why=f"the GJT guarded by the GROUP BY (root {{{', '.join(root.variables)}}}): REDUCT mode, ρ_root's "
            "payloads are the aggregate per root tuple; nothing is enumerated")
    stage = builder.add(GjtStage(f"generalized join tree ring {', '.join(ring.group) or '()'}", root, key, None,
                                 None, description, ring=SumRing(len(ring.lifts)), lift=lift))
    connect_inputs(builder, node, inputs, stage)
    positions = tuple(root.variables.index(v) for v in (node.variable_of(g.expr) for g in aggregate.group_by))
    agg_layout = aggregate.output
    layout = tuple(Column(None, i.name) for i in items) if items is not None else agg_layout
    specs = tuple(AggregateSpec(item.expr.func, None) for item in aggregate.aggregates)
    total = builder.add(PayloadAggregateStage(
        tuple(g.name for g in aggregate.group_by), tuple(itemgetter(p) for p in positions), specs,
        tuple((read[1], read[2]) for read in ring.reads), finish_function(items, having, agg_layout, hold=True),
        tuple(map(str, layout)), ring.explain))
    builder.downstream[stage] = (total, 0)
    return total, layout



def _part(terms: tuple[tuple[int, Expr], ...], layout: dict[Column, int]):
    """One atom's part of an argument over its leaf row: Σ sign·term, NULL when a term is NULL."""
    compiled = tuple((sign, compile_expr(term, layout)) for sign, term in terms)
    if len(compiled) == 1 and compiled[0][0] == 1:
        return compiled[0][1]
    return functools.partial(_signed_sum, compiled)


def _signed_sum(compiled: tuple, row):
    total = 0
    for sign, term in compiled:
        value = term(row)
        if value is None:
            return None
        total = total + value if sign > 0 else total - value
    return total
