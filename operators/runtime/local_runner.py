"""The local runner: drives a dataflow's keyed stages in-process with dict-backed state.

It is the embedded default for small data and the workhorse of the tests. Each batch runs the
stages in topological order; a stage sees all the batch's rows of a key in one ``process`` call,
exactly as under Spark's ``groupBy(key).transformWithState``.

A batch is atomic: every processed key of every stage is recorded in a ``Journal`` (a reference to
the key's old state and to its changes, nothing copied), and an error in any stage reverts them all
before it propagates, so every state is as before the batch (operators/stages/base.py says how a
stage is reverted, and why that costs what the batch touched, not the size of the state).
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Mapping
from typing import Any

from operators.runtime.dataflow import Dataflow
from operators.stages.base import Journal
from operators.zset import Changelog


class LocalRunner:
    #: no one-call path for a stream batch (``Validator.apply``): every batch is validated, then run
    checks_stream = False

    def __init__(self, dataflow: Dataflow):
        self.dataflow = dataflow
        self.states: dict[int, dict[tuple, Any]] = {node.id: {} for node in dataflow.stages}
        dataflow.start(self.states)  # its result is the view's initial one, ``dataflow.initial_result``
        # stage name -> (rows in, rows out) of the last batch: what `ivm ui` shows per stage
        self.batch_counts: dict[str, tuple[int, int]] = {}

    def apply(self, changes_by_table: Mapping[str, Changelog],
              keep: Callable[[Changelog], None] | None = None) -> Changelog:
        """Apply one batch of base-table changes (validated, by table); return the result's changes.
        ``keep`` (the view's ordered result) takes them inside the batch: if it raises, the stages are
        undone too, so the batch leaves no state changed anywhere."""
        inputs = self.dataflow.route(changes_by_table)
        journal = Journal()
        counts = {node.stage.name: (0, 0) for node in self.dataflow.stages}
        try:
            delta = self.dataflow.propagate(self.states, inputs, journal, counts=counts)
            if keep is not None and delta:
                keep(delta)
        except BaseException:
            journal.undo()
            raise
        # The state is millions of long-lived tuples; freezing them keeps the cyclic garbage collector
        # from rescanning all of them on every full collection (it halved the run time of Q3 at SF 0.1).
        # Frozen objects are still freed by reference counting; stage states hold no cycles.
        gc.freeze()
        self.batch_counts = counts
        return delta

    def stage_states(self, stage_id: int) -> dict[tuple, Any]:
        """One stage's state by key (what a pull-mode result is enumerated from)."""
        return self.states[stage_id]

    def close(self) -> None:
        """Undo ``apply``'s ``gc.freeze()``: frozen objects are never collected at interpreter exit, and
        extension modules caught in the freeze (DuckDB's) then print a page of "nanobind: leaked" warnings.
        """
        gc.unfreeze()

    def state_size(self) -> dict[str, int]:
        """Number of keys held by each stage (for run statistics)."""
        return {node.stage.name: len(self.states[node.id]) for node in self.dataflow.stages}
