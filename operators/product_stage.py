"""Combine per-relation aggregates into the aggregate over their cross product (RPAI §4.3, PSP).

Keyed by a constant. Each input port carries one part's single result row ``(_n, _f0, _f1, ...)``
(count and factor sums of that relation's qualifying rows) as ``-old, +new``; the output is
``Σ_k c_k · Π_parts part[column]`` per outer aggregate, recomputed in O(terms) per batch.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from math import prod

from operators.stage import Change, KeyedStage
from operators.zset import Changelog, Row, apply_changes, consolidate


class ProductCombineStage(KeyedStage):
    def __init__(self, layouts: tuple[tuple[str, ...], ...], initial: tuple[tuple[Row, ...], ...],
                 funcs: tuple[str, ...], sums: tuple[tuple[tuple[float, tuple[tuple[int, str], ...]], ...], ...],
                 finish: Callable[[Row], Row | None], output_columns: tuple[str, ...]):
        self.name = "cross-product combine"
        self.positions = tuple({name: i for i, name in enumerate(layout)} for layout in layouts)
        self.initial, self.funcs, self.sums, self.finish = initial, funcs, sums, finish
        self.output_columns = output_columns

    def key_of(self, port: int, row: Row) -> tuple:
        return ()

    def _row(self, parts: list[Counter]) -> Row | None:
        current = []
        for rows in parts:
            present = [row for row, count in rows.items() if count > 0]
            current.append(present[0] if present else None)
        counts = [0 if row is None else row[self.positions[i]["_n"]] for i, row in enumerate(current)]
        pairs = prod(counts)
        values = []
        for func, terms in zip(self.funcs, self.sums, strict=True):
            if func == "count":
                values.append(pairs)
                continue
            if pairs == 0:
                values.append(None)
                continue
            total = sum(coefficient * prod(current[i][self.positions[i][name]] or 0 for i, name in factors)
                        for coefficient, factors in terms)
            values.append(total / pairs if func == "avg" else total)
        return self.finish(tuple(values))

    def process(self, key: tuple, state: list | None, changes: list[Change]) -> tuple[list, Changelog]:
        parts = state if state is not None else [Counter(rows) for rows in self.initial]
        before = self._row(parts)
        for change in changes:
            apply_changes(parts[change.port], [(change.row, change.weight)])
        after = self._row(parts)
        out = ([(before, -1)] if before is not None else []) + ([(after, 1)] if after is not None else [])
        return parts, consolidate(out)

    def empty_result(self) -> Row | None:
        return self._row([Counter(rows) for rows in self.initial])

    def describe(self) -> dict[str, str]:
        return {"operator": "CrossProductAggregate (product of per-relation sums)",
                "inputs": f"{len(self.positions)} one-row aggregates, one per relation",
                "state": "each relation's current count and factor sums", "key": "constant (does not scale out)",
                "update_cost": "O(terms) per batch", "why": "Σ over A×B of f(a)·g(b) = (Σ_A f)(Σ_B g) (RPAI §4.3)"}
