"""Two keyed stages run as one when the second's key is owned by one key of the first.

If every row the first stage emits for key k goes to second-stage keys that no other first-stage
key ever reaches (the second key contains the first, e.g. Q3's group (l_orderkey, o_orderdate,
o_shippriority) and the lineitem stage keyed by l_orderkey), the second stage's state for those
keys can live inside the first stage's state for k. That saves a shuffle and a round of per-key
state access, which is what a micro-batch on Spark pays for.

Undo (operators/stages/base.py): the inner stage's keys are journaled like any stage's, in the
runner's journal when there is one (``process_journaled``), so each is reverted by its own stage;
the fused stage's own ``revert`` puts back only the first stage's part.
"""

from __future__ import annotations

from operators.stages.base import Change, Journal, KeyedStage, StageDescription, run_keyed
from operators.zset import Changelog, Row


class FusedStage(KeyedStage):
    def __init__(self, first: KeyedStage, second: KeyedStage, second_port: int = 0):
        if first.start_output() or second.start_output():  # fusion owns groups: a grouped aggregate has none
            raise ValueError(f"{self.__class__.__name__}: {first.name} or {second.name} emits rows over empty "
                             "input; a fused stage has no start step of its own")
        self.first, self.second, self.second_port = first, second, second_port
        self.name = f"{first.name} + {second.name}"
        self.output_columns = second.output_columns

    def chain(self) -> list[tuple[KeyedStage, int]]:
        first, second = self.first.chain(), self.second.chain()
        first[-1] = (first[-1][0], self.second_port)
        return first + second

    def key_of(self, port: int, row: Row) -> tuple:
        return self.first.key_of(port, row)

    def key_function(self, port: int):
        return self.first.key_function(port)

    def process(self, key: tuple, state: list | None, changes: list[Change]) -> tuple[list | None, Changelog]:
        return self.process_journaled(key, state, changes, None)

    def process_journaled(self, key: tuple, state: list | None, changes: list[Change],
                          journal: Journal | None) -> tuple[list | None, Changelog]:
        """``process``, recording the inner stage's keys in ``journal`` (atomic on its own without one).

        The state is ``[first stage's state, inner stage's states by key]``.
        """
        old_first, second_states = state if state is not None else (None, {})
        first_state, emitted = self.first.process(key, old_first, changes)
        try:
            out = run_keyed(self.second, second_states, [Change(self.second_port, row, w) for row, w in emitted], journal)
        except BaseException:
            # the inner keys are put back by run_keyed (or the journal's undo); the first stage's step
            # for this key had completed, so it is reverted here: process stays atomic per key
            if old_first is not None:
                state[0] = self.first.revert(key, old_first, first_state, changes)
            raise
        if first_state is None and not second_states:
            return None, out
        return [first_state, second_states], out

    def revert(self, key: tuple, old_state: list, new_state: list | None, changes: list[Change]) -> list | None:
        """Only the first stage's part: the inner stage's keys have journal entries of their own."""
        old_first, second_states = old_state
        first_new = None if new_state is None else new_state[0]
        if old_first is None:
            return [None, second_states]
        return [self.first.revert(key, old_first, first_new, changes), second_states]

    def describe(self) -> StageDescription:
        first, second = self.first.describe(), self.second.describe()
        return StageDescription(
            operator=f"{first.operator} + {second.operator}",
            inputs=first.inputs,
            state=f"{first.state}; and per key: {second.state}",
            key=first.key,
            update_cost=f"{first.update_cost}; then {second.update_cost}",
            why=f"{first.why}. Fused: the group key contains this stage's key, so each group "
                "lives in one key's state (one shuffle less)",
        )
