"""The compiled local runner: runs a dataflow's generated program (operators/lowering/codegen.py) batch by batch.

A batch runs in three kinds of steps: each table's function pushes the table's validated changes
through the inline stages; then, in topological order, each buffered or generic unit applies its
buffer and forwards its output (into an inline unit's function, another buffer or the result).

Atomic batches, as on the generic runner (operators/stages/base.py), at O(what the batch touched):

- an inline step is undone by replaying its changes negated, newest first: inline states are
  sets, single slots and counters, so the replay restores them exactly. A table's selection that
  raises does so before its change touched any stage (the program records how many went through);
- a ring aggregate keeps a copy of each group's few scalars the first time the batch touches the
  group (it needs them anyway for the group's old output row) and puts them back;
- generic units are journaled and reverted by their own stages (``Journal``).

What cannot be undone: an inline stage raising half way through a change, which validated input
never makes it do (a change that does not fit a stage's state, an out-of-memory or an interrupt).
The runner then refuses further batches rather than run on a state it cannot vouch for.

A stream batch of one change (``run_one``, issue 13) is one call of the table's generated *checked*
function (``Program.checked``): the validator's set-semantics probe of the change against the
validator's state and key (``Validator.storable``), then its steps in straight-line code. A change
that is not plainly valid stops before anything is written, and ``Validator.apply`` (the one door of a
batch) sends it the general way, ``Validator.validate`` then ``apply``, which words the reason and
applies the policy, so reasons, quarantine and atomicity have one code. Such a batch builds the
steps, journal and paused collector of a batch only when the change reached a buffered unit or the
result. Every other batch comes through ``apply`` with its validated changes.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Mapping
from typing import Any

from operators.held_errors import ErrorRow, is_error, split_errors
from operators.runtime.compiled.program import RESULT, Program, Unit
from operators.runtime.dataflow import Dataflow
from operators.runtime.packed_keys import RowKey
from operators.runtime.stream import TableChanges
from operators.stages.aggregate import GroupAggregateStage, aggregate_value
from operators.stages.base import Change, Journal, run_keyed
from operators.zset import ChangeColumns, Changelog, Row, consolidate


class BrokenViewError(RuntimeError):
    """An earlier batch failed where it could not be undone; the view must be created again."""


class CompiledRunner:
    #: ``Validator.apply`` runs a stream batch of one change through ``run_one``
    checks_stream = True

    def __init__(self, dataflow: Dataflow, program: Program):
        """``program`` is ``dataflow`` written out by operators/lowering/codegen.py (``write_program``),
        with checked functions for the validator's storable tables (``run_one``)."""
        self.dataflow = dataflow
        self.program = program
        self._checked = program.checked
        self.broken: str | None = None
        # the units that apply a buffer after the inline code, in topological order, with their buffers
        self._buffered = [(unit, program.buffers[unit.id]) for unit in program.units if not unit.inline]
        self._tables, self._failed_at, self._result = program.tables, program.failed_at, program.buffers[RESULT]
        self._journal = Journal()  # the generic units' keys a batch processed (``Journal.undo`` empties it)
        # A map reaching the result through maps only applies them all in one pass: maps are linear
        # and the result is consolidated once per batch (an IEDyn push run ends in two maps over
        # millions of rows: the GJT's columns of variables, the select list)
        self._to_result: dict[int, tuple] = {}
        for unit in program.units:
            chain, current = [], unit
            while current.kind == "map":
                chain.append(current.stage.mapping)
                if current.downstream == RESULT:
                    self._to_result[unit.id] = tuple(chain)
                    break
                current = program.units[current.downstream]
        self._start()

    def _start(self) -> None:
        """The dataflow's start step (``Dataflow.start``) through the program: each unit's start output
        (a global aggregate's row over empty input) forwarded as its first output, before any batch;
        its result is the view's initial one (``dataflow.initial_result``)."""
        steps: list[tuple] = []
        for unit in self.program.units:
            self._forward(unit, unit.stage.start_output(), steps)
        self._finish(steps, self._journal)

    @property
    def states(self) -> dict[int, dict]:
        """Each unit's state dict by unit id (what the tests snapshot)."""
        return self.program.states

    def stage_states(self, stage_id: int) -> dict:
        """One stage's state by key, as ``LocalRunner.stage_states`` (a generic unit keeps the stage's own)."""
        stage = self.dataflow.stage(stage_id).stage
        return self.program.states[next(u.id for u in self.program.units if u.stage is stage)]

    def apply(self, changes_by_table: Mapping[str, Changelog],
              keep: Callable[[Changelog], None] | None = None) -> Changelog:
        """Apply one batch of validated base-table changes; return the result's changes, which ``keep``
        takes inside the batch (as ``LocalRunner.apply``: if it raises, the stages are undone too).

        The cyclic collector is paused during the batch: stage states and changelogs hold no cycles,
        and with millions of result changes alive its full passes rescanned them again and again
        (a third of an IEDyn push run at 720 inserts); what survives the batch is frozen.
        """
        self._refuse_if_broken()
        return self._run([], changes_by_table, keep)

    def _refuse_if_broken(self) -> None:
        if self.broken:
            raise BrokenViewError(f"an earlier batch failed half way through a stage and could not be undone "
                                  f"({self.broken}): create the view again")

    def run_one(self, changes: TableChanges, state: dict, row_key: RowKey,
                keep: Callable[[Changelog], None]) -> Changelog | None:
        """Probe and run a stream batch's one change (``changes``, one of a table the validator stores
        at once, ``state`` and ``row_key`` its validator state and key) with one call of the table's
        checked function (``Program.checked``: the validator's probe and the change's steps,
        straight-line); ``keep`` takes the result's changes. None, with nothing written anywhere, when
        the change must go the general way (``Validator.apply`` then words the reason, applies the
        policy or raises): it is not plainly valid, the table has no checked function, a selection
        raised (the function took back its probe), or the view is broken (``apply`` refuses it). Raises
        only after the probe wrote, which ``Validator.apply`` then takes back: a stage failing half way
        (the view is broken) or a buffered unit or ``keep`` failing (the stages put back).

        When the change ends in the inline stages (most do): no steps, journal or paused collector,
        which at such batches cost more than the change."""
        function = self._checked.get(changes.table)
        if function is None or self.broken:
            return None
        rows, ops = changes.rows, changes.ops
        try:
            reached = function(rows[0], ops[0], changes.fingerprints[0], state, row_key.width)
        except BaseException as error:
            self._clear_buffers()
            if self._failed_at[0] is None:  # raised inside a stage, half way through the change
                self.broken = f"{type(error).__name__}: {error}"
                raise
            self._failed_at[0] = None  # the selection raised, before any stage and after the probe's take-back
            return None
        if reached == 1:  # the inline stages only
            # what survives the batch is frozen, as in ``apply``: unfrozen, the states a stream of
            # one-change batches builds were rescanned by every full collection
            gc.freeze()
            return []
        if not reached:
            return None  # nothing written
        return self._run([("inline", self._tables[changes.table], ChangeColumns(rows, ops), 1)], None, keep)

    def _run(self, steps: list[tuple], changes_by_table: Mapping[str, Changelog] | None,
             keep: Callable[[Changelog], None] | None = None) -> Changelog:
        """A batch with the collector paused: each table's function on its changes (none when the
        caller ran the batch's one inline step, ``steps``, itself), then ``_finish`` (``keep`` takes the
        result's changes); undone on an error."""
        collecting = gc.isenabled()
        gc.disable()
        # (per batch, not per change: at batches of one change this method's own work is a fourth of the batch)
        journal = self._journal  # empty between batches
        try:
            if changes_by_table is not None:
                tables = self._tables
                for table, changes in changes_by_table.items():
                    function = tables.get(table)
                    if changes and function is not None:
                        self._inline(function, changes, steps)
            return self._finish(steps, journal, keep)
        except BaseException:
            if not self.broken:
                self._undo(steps, journal)
            self._clear_buffers()
            raise
        finally:
            if collecting:
                gc.enable()

    def _finish(self, steps: list[tuple], journal: Journal, keep: Callable[[Changelog], None] | None = None) -> Changelog:
        """The rest of a batch once the table functions ran: each buffered unit in topological order,
        then the result consolidated and given to ``keep`` (the caller undoes ``steps`` and ``journal``
        on an error)."""
        result = self._result
        for unit, buffer in self._buffered:
            if buffer:
                outputs = self._run_buffered(unit, buffer, journal, steps)
                buffer.clear()
                self._forward(unit, outputs, steps)
        delta: Changelog = []
        if result:
            delta = consolidate(result)
            result.clear()
            if keep is not None and delta:
                keep(delta)
        if journal.entries:
            journal.entries.clear()
        # Long-lived state tuples: see LocalRunner.apply for why they are frozen out of the cyclic GC.
        gc.freeze()
        return delta

    def _inline(self, function, changes: Changelog, steps: list[tuple]) -> None:
        """Run an inline step, recording how many changes went through for ``_undo``."""
        steps.append(("inline", function, changes, len(changes)))
        try:
            function(changes)
        except BaseException as error:
            failed_at = self._failed_at
            if failed_at[0] is None:  # raised inside a stage, half way through a change
                self.broken = f"{type(error).__name__}: {error}"
                raise
            steps[-1] = ("inline", function, changes, failed_at[0])
            failed_at[0] = None
            raise

    def _run_buffered(self, unit: Unit, buffer: list, journal: Journal, steps: list[tuple]) -> Changelog:
        stage = unit.stage
        if unit.kind == "ring":
            touched: dict[tuple, list | None] = {}
            steps.append(("ring", unit.id, touched))
            self.program.rings[unit.id](buffer, touched)
            return self._ring_output(unit, touched)
        if unit.kind == "map":
            chain = self._to_result.get(unit.id)
            if chain is not None:  # straight into the result, consolidated once at the end of the batch
                self.program.buffers[RESULT].extend(_through(chain, buffer))
                return []
            return consolidate(_through((stage.mapping,), buffer))
        return run_keyed(stage, self.program.states[unit.id], buffer, journal)

    def _forward(self, unit: Unit, outputs: Changelog, steps: list[tuple]) -> None:
        if not outputs:
            return
        program = self.program
        if unit.downstream == RESULT:
            program.buffers[RESULT].extend(outputs)
            return
        target = program.units[unit.downstream]
        outputs, errors = split_errors(outputs)  # (operators/held_errors.py)
        if errors:  # held errors go to the result, unless the stage downstream takes them
            if unit.port in target.stage.error_ports:
                outputs += errors
            else:
                program.buffers[RESULT].extend(errors)
                if not outputs:
                    return
        if target.inline:
            self._inline(program.entries[(target.id, unit.port)], outputs, steps)
        elif target.kind == "generic":
            program.buffers[target.id].extend(Change(unit.port, row, w) for row, w in outputs)
        else:
            program.buffers[target.id].extend(outputs)

    def _ring_output(self, unit: Unit, touched: dict[tuple, list | None]) -> Changelog:
        """The touched groups' old result rows retracted and new ones inserted (after HAVING and the
        select list); groups left with no row are dropped, sums of no value forgotten (float residue)."""
        stage: GroupAggregateStage = unit.stage
        states = self.program.states[unit.id]
        width = len(stage.aggregates)
        out: Changelog = []
        for key, old in touched.items():
            new = states.get(key)
            if new is not None:
                if new[0] < 0:
                    raise RuntimeError(f"{stage.name}: group {key} has a negative row count (a delete without its insert)")
                for i in range(width):
                    if new[2 + 2 * i] == 0:
                        new[1 + 2 * i] = None
                if new[0] == 0:
                    del states[key]
                    new = None
            before, after = _group_row(stage, key, old), _group_row(stage, key, new)
            if before != after:
                if before is not None:
                    out.append((before, -1))
                if after is not None:
                    out.append((after, 1))
        return out

    def _undo(self, steps: list[tuple], journal: Journal) -> None:
        """Put every state back as it was before the batch (see the module docstring)."""
        states = self.program.states
        for step in reversed(steps):
            if step[0] == "inline":
                _, function, changes, done = step
                function([(row, -w) for row, w in reversed(changes[:done])])
            else:
                _, uid, touched = step
                for key, old in touched.items():
                    if old is None:
                        states[uid].pop(key, None)
                    else:
                        states[uid][key] = old
        journal.undo()

    def _clear_buffers(self) -> None:
        for buffer in self.program.buffers.values():
            buffer.clear()

    def close(self) -> None:
        """Undo ``apply``'s ``gc.freeze()`` (LocalRunner.close says why)."""
        gc.unfreeze()

    def state_size(self) -> dict[str, int]:
        """Number of keys held by each stage (for run statistics); a relation fused with its indexes
        keeps its tuples in the indexes' entries, counted through the first index."""
        sizes = {}
        for unit in self.program.units:
            relation = self.program.relations.get(unit.id)
            if relation is None:
                sizes[unit.stage.name] = len(self.program.states[unit.id])
            else:
                entries = self.program.states[relation.lookups[0].id].values()
                sizes[unit.stage.name] = sum(len(entry[0]) for entry in entries)
        return sizes


def _group_row(stage: GroupAggregateStage, key: tuple, state: list[Any] | None) -> Row | None:
    """A group's result row from the compiled ring state ``[rows, value 1, count 1, ...]``."""
    if state is None or state[0] == 0:
        return stage.empty_result()
    values = tuple(aggregate_value(spec, state[1 + 2 * i], state[2 + 2 * i]) for i, spec in enumerate(stage.aggregates))
    return stage.finish(key + values)


def _through(chain: tuple, changes: Changelog) -> Changelog:
    """``changes`` mapped by each function of ``chain`` in turn, dropping rows one maps to None."""
    if len(chain) == 1:
        (first,) = chain
        return [(mapped, w) for row, w in changes if (mapped := first(row)) is not None]
    if len(chain) == 2:  # (a map's held error passes the maps after it as it is: operators/held_errors.py)
        first, second = chain
        return [(mapped, w) for row, w in changes
                if (mapped := first(row)) is not None and (mapped.__class__ is ErrorRow or (mapped := second(mapped)) is not None)]
    out: Changelog = []
    for row, w in changes:
        for mapping in chain:
            row = row if is_error(row) else mapping(row)
            if row is None:
                break
        else:
            out.append((row, w))
    return out
