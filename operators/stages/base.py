"""The keyed-stage contract every maintenance operator lowers to (ARCHITECTURE.md, "keyed stages").

A stage is partitioned by a key, keeps one state object per key, consumes weighted rows on numbered
input ports and emits weighted rows to exactly one downstream stage (or to the result). It never talks
back upstream. The same ``KeyedStage`` object serves the local runner (dict of states) and the Spark
runner (one ``transformWithState`` processor whose ValueState holds the pickled state per key).

Within one batch the rows of a key arrive in no particular order (Spark does not order them), so
``process`` must give the same answer for any order of ``changes``: stages work on Z-sets, apply the
whole batch of a key, and emit the difference between the key's output before and after.
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

    @abstractmethod
    def key_of(self, port: int, row: Row) -> tuple:
        """The partition key of an input row arriving on ``port``."""

    def key_function(self, port: int) -> Callable[[Row], tuple]:
        """``key_of`` specialised to one port (runners call it once per port and batch, for speed)."""
        return lambda row: self.key_of(port, row)

    @abstractmethod
    def process(self, key: tuple, state: Any | None, changes: list[Change]) -> tuple[Any | None, Changelog]:
        """Apply one batch of a key's changes; return (new state or None to drop the key, output changes)."""

    def describe(self) -> StageDescription:
        """What EXPLAIN shows of this stage (overridden by each stage; the default names it only)."""
        return StageDescription(self.name)


def run_keyed(stage: KeyedStage, states: dict[tuple, Any], changes: list[Change]) -> Changelog:
    """Group ``changes`` by key, run ``stage.process`` once per key, and keep ``states`` up to date.

    What a runner does for one stage and one batch (the local runner for every stage, a fused stage
    for its second half).
    """
    by_key: dict[tuple, list[Change]] = defaultdict(list)
    key_functions: dict[int, Callable[[Row], tuple]] = {}
    for change in changes:
        key_of = key_functions.get(change.port)
        if key_of is None:
            key_of = key_functions[change.port] = stage.key_function(change.port)
        by_key[key_of(change.row)].append(change)
    outputs: Changelog = []
    for key, key_changes in by_key.items():
        new_state, emitted = stage.process(key, states.get(key), key_changes)
        if new_state is None:
            states.pop(key, None)
        else:
            states[key] = new_state
        outputs.extend(emitted)
    return outputs
