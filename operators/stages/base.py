"""The keyed-stage contract every maintenance operator lowers to (ARCHITECTURE.md, "keyed stages").

A stage is partitioned by a key, keeps one state object per key, consumes weighted rows on numbered
input ports and emits weighted rows to exactly one downstream stage (or to the result). It never talks
back upstream. The same ``KeyedStage`` object serves the local runner (dict of states) and the Spark
runner (one ``transformWithState`` processor whose ValueState holds the pickled state per key).

Within one batch the rows of a key arrive in no particular order (Spark does not order them), so
``process`` must give the same answer for any order of ``changes``: stages work on Z-sets, apply the
whole batch of a key, and emit the difference between the key's output before and after.

Atomic batches (the local runner; Spark simply does not commit a failed micro-batch). Two promises
make any error in a batch undoable at O(what the batch touched), without copying whole states:

- ``process`` is atomic per key: if it raises, the key's state is as it was. Stages evaluate every
  expression over the input rows before they mutate anything, and a stage that evaluates
  expressions over its new state (HAVING, the select list) puts the state back itself if that fails.
- ``revert`` undoes a key's completed ``process``. The default replays the negated changes: every
  stage is linear over Z-sets, so state after Δ then −Δ equals the state before, exactly for exact
  numbers (ints, Decimal, the Fractions of index keys) and for the multisets, sorted lists, sets
  and trees stages keep (same contents; a balanced tree may be shaped differently); only a running
  float sum (a DOUBLE column summed in a nested-aggregate index) can end one rounding away. Stages whose
  ``process`` leaves the state it was given untouched (small states rebuilt per batch) return that
  old state instead, which is exact whatever the values.

``run_keyed`` records each processed key in a ``Journal``; ``Journal.undo`` reverts them in reverse
order. A per-key journal entry is (stage, states, key, old state, changes): references the batch
already holds, so the error-free path pays one small tuple per key and stage.

Why not the alternatives: copying each touched key's state before ``process`` costs the size of
that state, and a stage keyed by a constant (top-k, a global MIN, an RPAI tree, the general
algorithm) keeps everything under one key, so every batch would copy everything. Replaying negated
changes alone cannot undo the key whose ``process`` raised half way (how far it got is unknown),
and it rounds float sums; hence the per-key atomicity above, and old states kept where a stage can
rebuild a small state per batch (the group aggregate's sums and counts, live-tuple slots,
DISTINCT and set-operation counts, the per-group totals of ``SumVectorsStage``) so those come back
bit for bit.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import defaultdict
from collections.abc import Callable
from operator import itemgetter
from typing import Any, NamedTuple

import attrs

from operators.zset import Changelog, Row


def key_getter(positions: tuple[int, ...]) -> Callable[[Row], tuple]:
    """A function extracting ``positions`` of a row as a tuple (itemgetter where it returns one)."""
    if not positions:
        return _constant_key
    if len(positions) == 1:
        (only,) = positions
        return lambda row: (row[only],)
    return itemgetter(*positions)


def _constant_key(row: Row) -> tuple:
    return ()


class Change(NamedTuple):
    """One weighted row arriving at a stage on ``port`` (a NamedTuple: created per row, it must be cheap)."""

    port: int
    row: Row
    weight: int


@attrs.frozen
class StageDescription:
    """What EXPLAIN says of one stage, one field per column of its maintenance-plan table.

    Typed rather than a dict so that every stage (and the lowering that words a stage's plan-level
    reasons) fills the same fields, and EXPLAIN's text and JSON read them the same way.
    """

    operator: str
    inputs: str = ""
    state: str = ""
    key: str = ""
    update_cost: str = ""
    why: str = ""


class KeyedStage(ABC):
    """A stateful operator partitioned by ``key_of``; see the module docstring for the contract."""

    #: Human-readable name shown in EXPLAIN and in Spark's plan.
    name: str = "stage"
    #: Column names of the rows this stage emits, in order.
    output_columns: tuple[str, ...] = ()
    #: The input ports on which the stage takes held errors (``ErrorRow``, operators/held_errors.py) as
    #: rows; the runners send an ``ErrorRow`` meant for another port to the result instead.
    error_ports: tuple[int, ...] = ()
    #: How the compiled program (operators/lowering/codegen.py) runs the stage: ``lookup``, ``live`` and
    #: ``join`` inline, from the stage's own template (``source``); ``ring`` and ``map`` buffered, from
    #: theirs; ``generic``: through ``process``, as on the generic runner.
    codegen_kind: str = "generic"

    def chain(self) -> list[tuple[KeyedStage, int]]:
        """The plain stages this one runs, each with the port it feeds the next on (a fused stage is two)."""
        return [(self, 0)]

    @abstractmethod
    def key_of(self, port: int, row: Row) -> tuple:
        """The partition key of an input row arriving on ``port``."""

    def key_function(self, port: int) -> Callable[[Row], tuple]:
        """``key_of`` specialised to one port (runners call it once per port and batch, for speed)."""
        return lambda row: self.key_of(port, row)

    @abstractmethod
    def process(self, key: tuple, state: Any | None, changes: list[Change]) -> tuple[Any | None, Changelog]:
        """Apply one batch of a key's changes; return (new state or None to drop the key, output changes)."""

    def revert(self, key: tuple, old_state: Any, new_state: Any | None, changes: list[Change]) -> Any | None:
        """The key's state before ``process(key, old_state, changes)`` returned ``new_state``.

        ``old_state`` is not None (a key absent before is simply dropped by the journal). The default
        replays the negated changes on the state ``process`` mutated in place (``new_state``, or
        ``old_state`` itself when ``process`` dropped the key) and discards the output; see the module
        docstring for why that is exact. It cannot raise where the forward step did not: it evaluates
        the same expressions over the same rows and states.
        """
        current = old_state if new_state is None else new_state
        restored, _ = self.process(key, current, [Change(c.port, c.row, -c.weight) for c in changes])
        return restored

    def start_output(self) -> Changelog:
        """The rows the stage emits over the empty database, before any change: a global aggregate's
        one row (COUNT 0, SUM NULL), none for most stages. Its state None stands for having emitted
        them: its first change retracts them. Runners send them downstream in the start step
        (``Dataflow.start``), so every stage starts as the query over empty tables has it."""
        return []

    def describe(self) -> StageDescription:
        """What EXPLAIN shows of this stage (overridden by each stage; the default names it only)."""
        return StageDescription(self.name)


class ConstantKey:
    """Mixin of stages keyed by a constant (a global aggregate, a whole view tree, a triangle count):
    every row goes to the one key ``()``, so the stage does not scale out (EXPLAIN says so)."""

    def key_of(self, port: int, row: Row) -> tuple:
        return ()

    def key_function(self, port: int) -> Callable[[Row], tuple]:
        return key_getter(())


class UnchangedOldState:
    """Mixin of stages whose ``process`` never mutates the state it is given (it builds a new one), so
    the old state is still the exact state before the batch: ``revert`` returns it."""

    def revert(self, key: tuple, old_state: Any, new_state: Any | None, changes: list[Change]) -> Any | None:
        return old_state


def apply_then_read(apply: Callable[[int], None], read: Callable[[], Any]) -> Any:
    """``apply(1)`` (a stage's prepared changes into its state, nothing left to raise), then ``read()``
    (the output over the new state, which evaluates expressions); if reading raises, ``apply(-1)``
    takes the changes back first, so the stage's ``process`` stays atomic per key."""
    apply(1)
    try:
        return read()
    except BaseException:
        apply(-1)
        raise


class Journal:
    """The keys a batch processed, stage by stage, so that an error anywhere undoes all of them.

    Entries are appended in processing order; ``undo`` reverts them newest first, so a stage is put
    back before the stages that fed it, each to its state at the start of the batch.
    """

    __slots__ = ("entries",)

    def __init__(self) -> None:
        self.entries: list[tuple[KeyedStage, dict, tuple, Any, list[Change]]] = []

    def undo(self) -> None:
        for stage, states, key, old_state, changes in reversed(self.entries):
            if old_state is None:
                states.pop(key, None)  # absent before the batch
                continue
            restored = stage.revert(key, old_state, states.get(key), changes)
            if restored is None:
                states.pop(key, None)
            else:
                states[key] = restored
        self.entries.clear()


def run_keyed(stage: KeyedStage, states: dict[tuple, Any], changes: list[Change],
              journal: Journal | None = None) -> Changelog:
    """Group ``changes`` by key, run ``stage.process`` once per key, and keep ``states`` up to date.

    What a runner does for one stage and one batch (the local runner for every stage, a fused stage
    for its second half). Each processed key is recorded in ``journal``; without one, an error undoes
    this call's keys before it propagates, so the call is atomic on its own.
    """
    if journal is None:
        local = Journal()
        try:
            return run_keyed(stage, states, changes, local)
        except BaseException:
            local.undo()
            raise
    by_key: dict[tuple, list[Change]] = defaultdict(list)
    key_functions: dict[int, Callable[[Row], tuple]] = {}
    for change in changes:
        key_of = key_functions.get(change.port)
        if key_of is None:
            key_of = key_functions[change.port] = stage.key_function(change.port)
        by_key[key_of(change.row)].append(change)
    outputs: Changelog = []
    record = journal.entries.append
    nested = getattr(stage, "process_journaled", None)  # a stage running stages inside (FusedStage)
    for key, key_changes in by_key.items():
        old_state = states.get(key)
        if nested is None:
            new_state, emitted = stage.process(key, old_state, key_changes)
        else:
            new_state, emitted = nested(key, old_state, key_changes, journal)
        record((stage, states, key, old_state, key_changes))
        if new_state is None:
            states.pop(key, None)
        else:
            states[key] = new_state
        outputs.extend(emitted)
    return outputs
