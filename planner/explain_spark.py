"""EXPLAIN's Spark part: the strategy the Spark engine takes for the view (``planner/spark_delta.py``),
and for the JVM delta queries their terms, so a reader sees what runs per micro-batch."""

from __future__ import annotations

from planner.compiler import CompiledQuery
from planner.spark_delta import SparkStrategy, spark_strategy


def compiled_strategy(compiled: CompiledQuery) -> SparkStrategy:
    """The strategy ``spark_strategy="auto"`` takes for ``compiled`` on the Spark engine."""
    dataflow = compiled.dataflow
    return spark_strategy(compiled.sql, compiled.context.catalog, dataflow.visible_width, len(dataflow.output_columns))


def strategy_lines(strategy: SparkStrategy) -> list[str]:
    """``Spark strategy: …`` and, where the JVM delta queries apply, one line per delta term (its join order)."""
    lines = [f"Spark strategy (auto): {strategy.reason}"]
    plan = strategy.delta
    if plan is None:
        return lines
    lines.append("  JVM delta queries, per micro-batch one delta term per table read, joined from its changes Δ "
                 "outwards (the rows so far broadcast, each table's stored rows scanned; t' is t after the batch):")
    for term in plan.terms:
        lines.append("    " + " ⋈ ".join(("Δ" if s.kind == "delta" else "") + plan.occurrences[s.occurrence].alias
                                          + ("'" if s.kind == "new" else "") for s in term.steps))
    if plan.aggregated:
        shape = "top-k from the whole aggregate" if plan.recomputes_top else "changed groups only"
        lines.append(f"  then summed per group into {len(plan.aggregates)} ring aggregate(s) ({shape}); "
                     f"state: Parquet logs of {', '.join(plan.tables)} and the partial sums")
    else:
        lines.append(f"  the terms' rows are the result's changes; state: Parquet logs of {', '.join(plan.tables)}")
    return lines


def strategy_json(strategy: SparkStrategy) -> dict:
    """The strategy for EXPLAIN's JSON: name, reason and the delta terms' join orders."""
    plan = strategy.delta
    terms = [] if plan is None else [[{"table": plan.occurrences[s.occurrence].table, "read_as": s.kind}
                                      for s in term.steps] for term in plan.terms]
    return {"name": strategy.name, "reason": strategy.reason, "jvm_delta_terms": terms}
