"""EXPLAIN's section on derived tables read as relations (rules/derived_rows.py): what computes their
rows, what one update costs inside them, and what each of their changed rows costs the operator above.

A derived table of window functions or of a set operation has stages of its own; they emit the
changes of its rows, which the operator reading it (a GROUP BY, a join) takes as a table's changes.
An update therefore costs the derived table's stages, then, per row of it that changes, the reading
stage's cost: both are quoted from the stage rows, never restated here.
"""

from __future__ import annotations

from planner.compiler import CompiledQuery
from planner.explain_headline import cost_line
from planner.ir.maintenance import ViewAtom


def derived_tables_json(compiled: CompiledQuery) -> list[dict]:
    """Per derived table read as a relation: its stages and their worst cost, and the stage it feeds."""
    dataflow = compiled.dataflow
    views = {n.alias: n for n in compiled.plan.walk() if isinstance(n, ViewAtom) and n.key is None}
    feeding: dict[int, list[int]] = {}
    for node in dataflow.stages:
        if node.downstream is not None:
            feeding.setdefault(node.downstream, []).append(node.id)
    found = []
    for alias, last in dataflow.relations:
        own, pending = set(), [last]
        while pending:
            stage = pending.pop()
            own.add(stage)
            pending += feeding.get(stage, [])
        reader = dataflow.stages[last].downstream
        described = dataflow.stages[reader].stage.describe() if reader is not None else None
        found.append({
            "alias": alias,
            "computes": views[alias].computes,
            "stages": sorted(own),
            "update_cost": cost_line({i: dataflow.stages[i].stage.describe().update_cost for i in sorted(own)}),
            "feeds": None if described is None else {"stage": reader, "operator": described.operator,
                                                      "update_cost": described.update_cost},
        })
    return found


def derived_tables_text(compiled: CompiledQuery) -> list[str]:
    """One ``Derived table:`` line per derived table read as a relation."""
    lines = []
    for table in derived_tables_json(compiled):
        feeds = table["feeds"]
        after = (f"; each of its rows that changes is then one change of a relation to [{feeds['stage']}] "
                 f"{feeds['operator']}: {feeds['update_cost']}") if feeds else ""
        lines.append(f"Derived table {table['alias']}: {table['computes']} rows maintained by stages "
                     f"{', '.join(f'[{s}]' for s in table['stages'])}, {table['update_cost']}, read as a relation "
                     f"without a key (a bag of their changes){after}")
    return lines
