"""Clean-up after naive lowering: fuse an aggregate into the join stage that owns its groups.

Naive lowering gives every aggregate its own stage, fed by the join's root stage. When every group
lives in one key of that stage (a ``ForeignKeyLookupStage`` whose key, the parent's foreign key or
the equal child key, is in the group-by), the aggregate's state for those groups can live in the
join stage's state for the key: a ``FusedStage`` (operators/stages/fused.py says why that pays).
This step replaces the join stage by the fused one, drops the aggregate stage and renumbers the
stages after it, so the ids are those the stages would have had had the fusion happened on the spot.
"""

from __future__ import annotations

import attrs

from operators.lowering.builder import Emitter, FusionCandidate, StageBuilder
from operators.stages.foreign_key import ForeignKeyLookupStage
from operators.stages.fused import FusedStage
from planner.ir.maintenance import ForeignKeyJoin, GroupAggregate, RingAggregate


def note_aggregate_over_join(builder: StageBuilder, join: ForeignKeyJoin, root: Emitter,
                             aggregate: RingAggregate | GroupAggregate, stage: int) -> None:
    """Remember that aggregate ``stage`` is fed by the join's root stage, for ``fuse_owned_groups``."""
    if root.stage is None:
        return  # the root is a leaf: its rows come straight from the source, no stage to fuse into
    grouped = frozenset(root.layout.index(g.expr) for g in aggregate.group_by if g.expr in root.layout)
    builder.fusion_candidates.append(FusionCandidate(
        root.stage, stage, grouped, len(join.atom(join.root).output), len(root.layout)))


def fuse_owned_groups(builder: StageBuilder) -> dict[int, int]:
    """Fuse each noted aggregate whose groups its join stage owns; return old stage id → new id
    (a fused-away aggregate maps to the fused stage)."""
    fused: dict[int, int] = {}
    for candidate in builder.fusion_candidates:
        first, aggregate = builder.stages[candidate.join], builder.stages[candidate.aggregate]
        # a global aggregate's one row over no input (COUNT 0) comes from a start step, which a fused
        # stage has not: it stays a stage of its own (a join along an empty key, NOT EXISTS by an inequality)
        if isinstance(first, ForeignKeyLookupStage) and _owns_groups(first, candidate) and not aggregate.start_output():
            builder.stages[candidate.join] = FusedStage(first, aggregate)
            fused[candidate.aggregate] = candidate.join
    return _drop(builder, fused)


def _owns_groups(stage: ForeignKeyLookupStage, candidate: FusionCandidate) -> bool:
    """Whether every group lives in one key of the lookup stage: the group-by holds that key
    (the parent's foreign key, or the equal child key that follows the parent row in the output)."""
    parent_width, grouped = candidate.parent_width, candidate.grouped
    kept = stage.child_columns if stage.child_columns is not None else range(candidate.join_width - parent_width)
    if not set(stage.child_key) <= set(kept):
        return set(stage.parent_key) <= grouped  # the child's key is not passed on
    child_positions = tuple(parent_width + kept.index(p) for p in stage.child_key)
    return set(stage.parent_key) <= grouped or set(child_positions) <= grouped


def _drop(builder: StageBuilder, fused: dict[int, int]) -> dict[int, int]:
    """Remove the fused-away aggregate stages, the fused stage taking over their downstream."""
    for aggregate, join in fused.items():
        after = builder.downstream.pop(aggregate, None)
        if after is None:
            del builder.downstream[join]  # the aggregate was the query's last stage
        else:
            builder.downstream[join] = after
    kept = [i for i in range(len(builder.stages)) if i not in fused]
    new_id = {old: new for new, old in enumerate(kept)}
    new_id |= {aggregate: new_id[join] for aggregate, join in fused.items()}
    builder.stages[:] = [builder.stages[i] for i in kept]
    builder.downstream = {new_id[i]: (new_id[to], port) for i, (to, port) in builder.downstream.items()}
    builder.sources[:] = [attrs.evolve(route, stage=new_id[route.stage]) for route in builder.sources]
    return new_id
