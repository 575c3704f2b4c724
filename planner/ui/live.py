"""What the page shows of a running view, kept small: a bounded table, deltas, a chart, state sizes.

The result can hold millions of rows at SF 0.1 and up, so nothing here sends it whole: the table is
its first ``TABLE_ROWS`` rows in ORDER BY, a delta at most ``DELTA_ROWS`` rows each way (with the
full counts), a bar chart the first ``BARS`` rows. Cells travel as display strings (``cell``), so the
page shows exactly what the server formatted and a test can compare text with ``result()``.
"""

from __future__ import annotations

import datetime
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from decimal import Decimal
from itertools import islice

from planner.compiler import CompiledQuery
from planner.ir.expressions import Column, walk
from planner.ir.logical import Aggregate, LogicalPlan, Project

TABLE_ROWS = 100
DELTA_ROWS = 50
BARS = 20
SIZE_SAMPLE = 32  # keys per stage whose state is measured to estimate its bytes


def cell(value: object) -> str:
    """A result value as the page shows it: ``str`` (dates ISO, DECIMAL exact), NULL for None."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def cells(rows: Iterable[tuple]) -> list[list[str]]:
    return [[cell(v) for v in row] for row in rows]


def delta_summary(delta: Counter) -> dict:
    """The rows a batch (or the batches since the last message) inserted and deleted, bounded."""
    inserted = [row for row, weight in delta.items() if weight > 0]
    deleted = [row for row, weight in delta.items() if weight < 0]
    return {"inserted": cells(inserted[:DELTA_ROWS]), "deleted": cells(deleted[:DELTA_ROWS]),
            "inserted_count": sum(w for w in delta.values() if w > 0),
            "deleted_count": -sum(w for w in delta.values() if w < 0)}


def chart_spec(compiled: CompiledQuery, columns: Sequence[str]) -> dict:
    """What to chart, from the plan: grouped aggregate → bars of the first aggregate column per group
    (the other columns label a bar); global aggregate → that value over batches; else nothing."""
    aggregate = next((n for n in compiled.logical.walk() if isinstance(n, Aggregate)), None)
    if aggregate is None:
        return {"kind": "none", "why": "the query has no aggregate to chart"}
    value = next((i for i, is_aggregate in enumerate(_aggregate_outputs(compiled.logical, aggregate))
                  if is_aggregate and i < len(columns)), None)
    if value is None:
        return {"kind": "none", "why": "no aggregate is an output column"}
    labels = [i for i in range(len(columns)) if i != value]
    return {"kind": "bars" if aggregate.group_by else "line", "value": value, "labels": labels,
            "title": columns[value]}


def _aggregate_outputs(plan: LogicalPlan, aggregate: Aggregate) -> list[bool]:
    """Per output column of the select list above ``aggregate``: does it read an aggregate's value?"""
    names = {named.name for named in aggregate.aggregates}
    above = next((n for n in plan.walk() if any(child is aggregate for child in n.children)), None)
    if not isinstance(above, Project):
        return [False] * len(aggregate.group_by) + [True] * len(aggregate.aggregates)
    return [any(isinstance(e, Column) and e.name in names for e in walk(item.expr)) for item in above.items]


def number(value: object) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float | Decimal):
        return float(value)
    return None


def chart_data(spec: dict, rows: Sequence[tuple]) -> dict:
    """Bars: the first ``BARS`` rows in ORDER BY; line: the global aggregate's current value."""
    if spec["kind"] == "bars":
        return {"bars": [{"label": " · ".join(cell(row[i]) for i in spec["labels"]), "value": number(row[spec["value"]])}
                         for row in rows[:BARS]]}
    if spec["kind"] == "line":
        return {"value": number(rows[0][spec["value"]]) if rows else None}
    return {}


ATOMS = (str, bytes, int, float, Decimal, datetime.date, type(None))


def deep_size(root: object, limit: int = 50_000) -> int | None:
    """Bytes of ``root`` and what it holds (containers, ``__dict__``, ``__slots__``), each object once;
    None when it holds more than ``limit`` objects (a stage keyed by a constant holds everything)."""
    seen: set[int] = set()
    pending = [root]
    size = 0
    while pending:
        value = pending.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        if len(seen) > limit:
            return None
        size += sys.getsizeof(value)
        if isinstance(value, ATOMS):
            continue
        if isinstance(value, dict):
            pending.extend(value.keys())
            pending.extend(value.values())
        elif isinstance(value, list | tuple | set | frozenset):
            pending.extend(value)
        else:
            if hasattr(value, "__dict__"):
                pending.append(vars(value))
            pending.extend(getattr(value, slot) for slot in getattr(type(value), "__slots__", ()) if hasattr(value, slot))
    return size


def estimated_bytes(state: dict) -> int | None:
    """A stage's state in bytes, estimated: the ``deep_size`` of ``SIZE_SAMPLE`` keys' entries scaled
    to the number of keys (exact below that many keys); None when a sampled entry is too large to walk.
    Objects shared between keys are counted once per sampled key, so the estimate errs high."""
    if not state:
        return 0
    sample = dict(islice(state.items(), SIZE_SAMPLE))
    measured = deep_size(sample)
    return None if measured is None else round((measured - sys.getsizeof(sample)) * len(state) / len(sample))
