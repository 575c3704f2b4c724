"""The change-propagation join: a binary equi-join with both inputs materialized, keyed by the join key.

Per key it keeps the left and right rows (multisets) and emits Δ(L ⋈ R) = ΔL ⋈ R + L' ⋈ ΔR, where
R is the right side before the batch and L' the left side after it. Unlike the live-tuple stages
this materializes every intermediate view, and a join that is not along a key can emit
|L|·|ΔR| rows per batch: the framework AJU compares against (§3.5), and the general fallback.

``where`` (optional) filters the joined rows: the conditions of the query that this join is the
first to see all columns of (an inequality join has an empty, constant key and only ``where``).
The materialized view this stage's output feeds is then the filtered sub-join. A row whose join key
holds a NULL matches no row (``NULL = x`` is never true), so it is neither kept nor joined.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import attrs

from operators.stages.base import Change, KeyedStage, StageDescription, key_getter
from operators.stages.source_text import ProgramText, SourceUnit, indented, key_source
from operators.zset import Changelog, Row, apply_changes


@attrs.define
class JoinState:
    left: Counter = attrs.field(factory=Counter)
    right: Counter = attrs.field(factory=Counter)


class BinaryJoinStage(KeyedStage):
    LEFT, RIGHT = 0, 1
    codegen_kind = "join"

    def __init__(self, name: str, left_key: tuple[int, ...], right_key: tuple[int, ...],
                 output_columns: tuple[str, ...], description: StageDescription,
                 where: Callable[[Row], bool] | None = None):
        self.name, self.left_key, self.right_key = name, left_key, right_key
        self.output_columns, self.description, self.where = output_columns, description, where
        self._left, self._right = key_getter(left_key), key_getter(right_key)

    def __getstate__(self):
        state = dict(self.__dict__)
        del state["_left"], state["_right"]
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._left, self._right = key_getter(self.left_key), key_getter(self.right_key)

    def key_of(self, port: int, row: Row) -> tuple:
        return tuple(self._left(row) if port == self.LEFT else self._right(row))

    def key_function(self, port: int):
        return self._left if port == self.LEFT else self._right

    def process(self, key: tuple, state: JoinState | None, changes: list[Change]) -> tuple[JoinState | None, Changelog]:
        if None in key:  # SQL's = is never true of a NULL: such a row joins nothing, and is not kept
            return state, []
        state = state or JoinState()
        left = [(c.row, c.weight) for c in changes if c.port == self.LEFT]
        right = [(c.row, c.weight) for c in changes if c.port == self.RIGHT]
        out: Changelog = []
        # ΔL ⋈ R (R before the batch), then L' ⋈ ΔR (L after it): every new pair counted once
        for row, weight in left:
            out.extend((row + other, weight * count) for other, count in state.right.items())
        apply_changes(state.left, left)
        for other, weight in right:
            out.extend((row + other, count * weight) for row, count in state.left.items())
        apply_changes(state.right, right)
        if self.where is not None:
            out = [(row, weight) for row, weight in out if self.where(row)]
        return (state if state.left or state.right else None), out

    def describe(self) -> StageDescription:
        return self.description

    def source(self, program: ProgramText, unit: SourceUnit, port: int, row: str, w: str) -> list[str]:
        """The compiled program's lines applying one change (``row``, ``w``: names) arriving on ``port``,
        ``process`` one change at a time: the state ``_S<unit>`` maps a key to [left rows → count,
        right rows → count]; the change meets the other side's rows of its key, then joins its own."""
        stage = self
        u = unit.id
        key = stage.left_key if port == stage.LEFT else stage.right_key
        other, own = (1, 0) if port == stage.LEFT else (0, 1)
        joined = f"{row} + q{u}" if port == stage.LEFT else f"q{u} + {row}"
        if stage.where is None:
            emitted = program.emit(unit, joined, f"{w} * n{u}", False)
        else:  # the conditions placed on this join filter what it emits
            program.bind(f"_W{u}", stage.where)
            emitted = [f"j{u} = {joined}", f"if _W{u}(j{u}):", *indented(program.emit(unit, f"j{u}", f"{w} * n{u}", False))]
        body = [f"st{u} = _S{u}_get(k{u})", f"if st{u} is None:",
                f"    st{u} = _S{u}[k{u}] = [{{}}, {{}}]",
                f"for q{u}, n{u} in st{u}[{other}].items():", *indented(emitted),
                f"side{u} = st{u}[{own}]", f"n{u} = side{u}.get({row}, 0) + {w}", f"if n{u}:",
                f"    side{u}[{row}] = n{u}", "else:", f"    del side{u}[{row}]",
                f"if not st{u}[0] and not st{u}[1]:", f"    del _S{u}[k{u}]"]
        if not key:  # a constant key: every row joins
            return [f"k{u} = ()", *body]
        # a key holding a NULL joins nothing and is not kept (BinaryJoinStage.process)
        present = f"k{u} is not None" if len(key) == 1 else f"None not in k{u}"
        return [f"k{u} = {key_source(row, key)}", f"if {present}:", *indented(body)]
