"""A compiled maintenance program: what operators/lowering/codegen.py writes and ``CompiledRunner`` runs.

The program is the view's lowered dataflow written out as Python functions (codegen.py says how
and why); this module holds only what the runner needs to know of it, so the runtime does not
import the code generator above it.
"""

from __future__ import annotations

import attrs

from operators.stages.base import KeyedStage
from operators.stages.live_relation import FusedRelation

INLINE_KINDS = ("lookup", "live", "join")
#: the unit id standing for the query's result
RESULT = -1


@attrs.frozen
class Unit:
    """One stage of the program (a fused stage is two units: the compiled code needs no fusion)."""

    id: int
    stage: KeyedStage = attrs.field(eq=False)
    #: lookup, live, join (inline); ring, map (buffered); generic
    kind: str
    downstream: int  # a unit id, or RESULT
    port: int

    @property
    def inline(self) -> bool:
        return self.kind in INLINE_KINDS


@attrs.frozen
class Program:
    """The generated source and what the runner calls in it."""

    source: str
    units: tuple[Unit, ...]
    #: table name → function(changes) pushing the table's validated changes through the inline stages
    tables: dict[str, object]
    #: (unit id, port) → function(changes) pushing a buffered unit's output into an inline unit
    entries: dict[tuple[int, int], object]
    #: unit id → function(buffer, touched) applying a ring aggregate's buffered input
    rings: dict[int, object]
    #: one cell: how many changes of a table went through before its selection raised (None: none did)
    failed_at: list
    #: unit id → state dict (key → state), shared with the generated code
    states: dict[int, dict]
    #: unit id → the buffer list of a buffered or generic unit; RESULT → the result's changes
    buffers: dict[int, list]
    #: live-tuple unit id → its relation fused with its indexes
    relations: dict[int, FusedRelation]
    #: table name → function(row, op, fingerprint, validator state, key width) checking one change
    #: against the validator's state, then running it (``CompiledRunner.run_one``, a batch of one
    #: change): 0 when it is not plainly valid (nothing written, nothing ran), 1 when it stayed in the
    #: inline stages, 2 when it reached a buffer or the result
    checked: dict[str, object]
