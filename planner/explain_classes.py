"""EXPLAIN's section on the query's class (Olteanu §4): the class with its witness and bounds, and
the Σ-reduct with the dependencies it used, as text lines and as JSON fields.

The class is computed on the plan as normalization left it (one join block of atoms, its GROUP BY),
read from the plan trace: the strategy that runs is not chosen from it yet.
"""

from __future__ import annotations

from planner.compiler import CompiledQuery
from planner.ir.join_query import NotAJoinQuery, join_query
from planner.ir.logical import LogicalPlan
from planner.ir.query_classes import QueryClasses, classify_with_dependencies
from planner.optimizer.batches import BATCHES

NORMALIZE_BATCH = BATCHES[0].name  # normalization runs first (batches.py)


def normalized_plan(compiled: CompiledQuery) -> LogicalPlan:
    """The plan as the first batch, normalization, left it (every rule runs at least once, so it ran)."""
    return [run for run in compiled.trace.runs if run.batch == NORMALIZE_BATCH][-1].after


def query_classes(compiled: CompiledQuery) -> QueryClasses | NotAJoinQuery:
    found = join_query(normalized_plan(compiled))
    if isinstance(found, NotAJoinQuery):
        return found
    return classify_with_dependencies(found.query, compiled.context.catalog, found.conditions)


def _fd_json(classes: QueryClasses) -> list[dict] | None:
    used = classes.fd_reduct
    if used is None:
        return None
    return [{"table": fd.table, "from": list(fd.determinant), "to": list(fd.dependent),
             "declared": fd.declared} for fd in used]


def classes_json(compiled: CompiledQuery) -> dict:
    """``query_classes`` (of the query as maintained), ``fd_reduct`` and the details behind them."""
    found = query_classes(compiled)
    if isinstance(found, NotAJoinQuery):
        return {"query_classes": [], "fd_reduct": None,
                "query_classification": {"applies": False, "reason": found.reason}}
    maintained = found.maintained
    return {
        "query_classes": list(maintained.classes),
        "fd_reduct": _fd_json(found),
        "query_classification": {
            "applies": True, "reason": None,
            "query": str(found.original.query),
            "classes_without_fds": list(found.original.classes),
            "witnesses": maintained.witnesses,
            "witnesses_without_fds": found.original.witnesses,
            "reduct": str(found.reduct.query) if found.reduct.changed else None,
            "reduct_classes": list(found.reduct_classes.classes) if found.reduct_classes else None,
            "bounds": found.bounds(),
            "conditions_as_atoms": dict(found.conditions),
            "static_tables": list(found.static_tables),
        },
    }


def classes_text(compiled: CompiledQuery) -> list[str]:
    found = query_classes(compiled)
    if isinstance(found, NotAJoinQuery):
        return [f"Query class (Olteanu §4): not classified: {found.reason}"]
    original, maintained = found.original, found.maintained
    lines = [f"Query class (Olteanu §4): {', '.join(maintained.classes) or 'cyclic'}"
             + (" (of the Σ-reduct, Def. 4.9)" if found.uses_reduct else ""),
             f"  query: {original.query}"]
    lines += [f"  {alias}: the condition {text} (a pseudo-atom over its variables)" for alias, text in found.conditions]
    if found.uses_reduct:
        lines.append(f"  without FDs: {', '.join(original.classes) or 'cyclic'}")
        lines += [f"    not {name}: {why}" for name, why in original.witnesses.items()]
    if found.reduct.changed:
        gained = "used" if found.uses_reduct else "not used: it gains no class"
        lines.append(f"  Σ-reduct ({gained}): {found.reduct.query}")
        lines.append(f"    FDs: {'; '.join(map(str, found.reduct.used))}")
        if not found.uses_reduct and found.reduct_classes is not None:
            lines.append(f"    its classes: {', '.join(found.reduct_classes.classes) or 'cyclic'}")
    lines += [f"  not {name}: {why}" for name, why in maintained.witnesses.items()]
    lines.append(f"  bounds: {found.bounds()}")
    if found.static_tables and maintained.strongest != "q-hierarchical":
        lines.append(f"  static tables {', '.join(found.static_tables)}: Olteanu §4.5 may still give constant update "
                     "time if each dynamic view's schema covers its siblings' (not checked here)")
    return lines
