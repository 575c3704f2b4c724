"""Combine per-relation aggregates into the aggregate over their cross product (RPAI §4.3, PSP).

Keyed by a constant. Each input port carries one part's single result row ``(_n, _f0, _f1, ...)``
(count and factor sums of that relation's qualifying rows) as ``-old, +new``; the output is
``Σ_k c_k · Π_parts part[column]`` per outer aggregate, recomputed in O(terms) per batch.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from math import prod

from operators.doubles import canonical
from operators.stages.average import average
from operators.stages.base import Change, KeyedStage, StageDescription, apply_then_read
from operators.zset import Changelog, Row, apply_changes, consolidate


class ProductCombineStage(KeyedStage):
    def __init__(self, layouts: tuple[tuple[str, ...], ...],
                 funcs: tuple[str, ...], sums: tuple[tuple[tuple[float, tuple[tuple[int, str], ...]], ...], ...],
                 finish: Callable[[Row], Row | None], output_columns: tuple[str, ...],
                 grouped_part: int = -1, group_width: int = 0):
        self.name = "cross-product combine"
        self.positions = tuple({name: i for i, name in enumerate(layout)} for layout in layouts)
        self.funcs, self.sums, self.finish = funcs, sums, finish
        self.output_columns = output_columns
        # GROUP BY (MST): one part has a row per group (group columns first); the others one row
        self.grouped_part, self.group_width = grouped_part, group_width

    def key_of(self, port: int, row: Row) -> tuple:
        return ()

    def _rows(self, parts: list[Counter]) -> list[Row]:
        """The result rows: one, or one per group of the grouped part whose product is not empty."""
        current = []
        for rows in parts:
            present = [row for row, count in rows.items() if count > 0]
            current.append(present[0] if present else None)
        if self.grouped_part < 0:
            row = self._row(current)
            return [] if row is None else [row]
        out = []
        for grouped, count in parts[self.grouped_part].items():
            if count > 0:
                current[self.grouped_part] = grouped
                row = self._row(current, grouped[: self.group_width])
                if row is not None:
                    out.append(row)
        return out

    def _row(self, current: list[Row | None], group: Row = ()) -> Row | None:
        counts = [0 if row is None else row[self.positions[i]["_n"]] for i, row in enumerate(current)]
        pairs = prod(counts)
        values = []
        if group and pairs == 0:
            return None  # a group shows only if it has pairs
        for func, terms in zip(self.funcs, self.sums, strict=True):
            if func == "count":
                values.append(pairs)
                continue
            if pairs == 0:
                values.append(None)
                continue
            total = sum(coefficient * prod(current[i][self.positions[i][name]] or 0 for i, name in factors)
                        for coefficient, factors in terms)
            values.append(canonical(average(total, pairs) if func == "avg" else total))  # the one NaN
        return self.finish(group + tuple(values))

    def process(self, key: tuple, state: list | None, changes: list[Change]) -> tuple[list, Changelog]:
        parts = state if state is not None else [Counter() for _ in self.positions]
        before = self._rows(parts)
        def apply(sign: int) -> None:
            for change in changes:
                apply_changes(parts[change.port], [(change.row, sign * change.weight)])

        after = apply_then_read(apply, lambda: self._rows(parts))
        return parts, consolidate([(row, -1) for row in before] + [(row, 1) for row in after])

    def start_output(self) -> Changelog:
        """A global aggregate's row over no pairs (COUNT 0, SUM NULL); the parts' own rows over empty
        input arrive as changes in the start step."""
        if self.grouped_part >= 0:
            return []
        return [(row, 1) for row in self._rows([Counter() for _ in self.positions])]

    def describe(self) -> StageDescription:
        return StageDescription(operator="CrossProductAggregate (product of per-relation sums)",
                                inputs=f"{len(self.positions)} one-row aggregates, one per relation",
                                state="each relation's current count and factor sums",
                                key="constant (does not scale out)", update_cost="O(terms) per batch",
                                why="Σ over A×B of f(a)·g(b) = (Σ_A f)(Σ_B g) (RPAI §4.3)")
