"""Two keyed stages run as one when the second's key is owned by one key of the first.

If every row the first stage emits for key k goes to second-stage keys that no other first-stage
key ever reaches (the second key contains the first, e.g. Q3's group (l_orderkey, o_orderdate,
o_shippriority) and the lineitem stage keyed by l_orderkey), the second stage's state for those
keys can live inside the first stage's state for k. That saves a shuffle and a round of per-key
state access, which is what a micro-batch on Spark pays for.
"""

from __future__ import annotations

from typing import Any

from operators.stages.base import Change, KeyedStage, StageDescription, run_keyed
from operators.zset import Changelog, Row


class FusedStage(KeyedStage):
    def __init__(self, first: KeyedStage, second: KeyedStage, second_port: int = 0):
        self.first, self.second, self.second_port = first, second, second_port
        self.name = f"{first.name} + {second.name}"
        self.output_columns = second.output_columns

    def key_of(self, port: int, row: Row) -> tuple:
        return self.first.key_of(port, row)

    def key_function(self, port: int):
        return self.first.key_function(port)

    def process(self, key: tuple, state: Any | None, changes: list[Change]) -> tuple[Any | None, Changelog]:
        first_state, second_states = state if state is not None else (None, {})
        first_state, emitted = self.first.process(key, first_state, changes)
        out = run_keyed(self.second, second_states, [Change(self.second_port, row, w) for row, w in emitted])
        if first_state is None and not second_states:
            return None, out
        return (first_state, second_states), out

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
