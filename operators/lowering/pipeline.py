"""The entry point: a maintenance plan → a dataflow of keyed stages (ARCHITECTURE.md, "keyed stages").

As STYLE.md's "lower naively, then clean up" asks: ``query.lower_query`` first gives every operator
its own obviously correct stage, then named steps improve the result (today one:
``fuse.fuse_owned_groups``). This is the only module that imports the query lowering; the modules
it recurses through reach it by ``StageBuilder.lower``, so the package has no import cycle.
"""

from __future__ import annotations

import attrs

from catalog.schema import Catalog
from operators.lowering.builder import StageBuilder
from operators.lowering.fuse import fuse_owned_groups
from operators.lowering.query import lower_query
from operators.runtime.dataflow import Dataflow, StageNode
from operators.stages.map import MapStage
from planner.ir.logical import LogicalPlan


def lower(plan: LogicalPlan, catalog: Catalog) -> Dataflow:
    """The dataflow maintaining ``plan`` (an optimized maintenance plan)."""
    builder = StageBuilder(catalog, lower_query)
    query = lower_query(builder, plan)
    new_id = fuse_owned_groups(builder)
    last = new_id[query.last]
    nodes = tuple(
        StageNode(i, stage, *(builder.downstream.get(i, (None, 0)) if i != last else (None, 0)))
        for i, stage in enumerate(builder.stages)
    )
    dataflow = Dataflow(nodes, tuple(builder.sources), tuple(c.name for c in query.layout), (), query.order,
                        tuple(builder.requirements), query.hidden,
                        relations=tuple((alias, new_id[stage]) for alias, stage in builder.relations.items()))
    # the result over empty tables: the start step on throwaway states (each runner runs it on its own)
    initial = tuple(row for row, weight in dataflow.start({node.id: {} for node in nodes}) for _ in range(weight))
    enumerated_by = None
    if not query.order and not query.hidden and not initial:
        enumerated_by = _enumerating_source(nodes, {new_id[i] for i in builder.enumerating}, last)
    return attrs.evolve(dataflow, initial_result=initial, enumerated_by=enumerated_by)


def _enumerating_source(nodes: tuple[StageNode, ...], enumerating: set[int], last: int) -> int | None:
    """The enumerating stage the result comes from through stateless maps only, if any: then the
    result can be read off that stage's state (pull mode) instead of being kept."""
    feeding = {node.downstream: node.id for node in nodes if node.downstream is not None}
    stage = last
    while isinstance(nodes[stage].stage, MapStage) and stage in feeding:
        stage = feeding[stage]
    return stage if stage in enumerating else None
