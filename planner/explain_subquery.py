"""EXPLAIN's ``Subquery:`` lines: what a decorrelated subquery's views maintain and at what cost, where
that is more than a join on a view's key (rules/not_in.py's null-aware NOT IN, rules/exists_inequality.py's
correlations with an inequality). The rule that builds the views writes the note on them."""

from __future__ import annotations

from planner.compiler import CompiledQuery
from planner.ir.maintenance import ViewAtom


def subqueries_json(compiled: CompiledQuery) -> list[dict]:
    """Per decorrelated subquery with a note: its views and the note (strategy and per-update cost)."""
    notes: dict[str, list[str]] = {}
    for node in compiled.plan.walk():
        if isinstance(node, ViewAtom) and node.note:
            notes.setdefault(node.note, []).append(node.alias)
    return [{"views": views, "strategy": note} for note, views in notes.items()]


def subqueries_text(compiled: CompiledQuery) -> list[str]:
    """One ``Subquery:`` line per noted subquery."""
    return [f"Subquery ({', '.join(s['views'])}): {s['strategy']}" for s in subqueries_json(compiled)]
