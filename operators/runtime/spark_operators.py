"""Which Spark stateful operators run a dataflow: a table's validation folded into the stage it feeds.

Why: every stateful operator of the Spark runner's query costs each micro-batch a shuffle, a Python
pass over its packed rows, a state-store commit and a task per partition, whatever the batch holds
(RESULTS.md, "Spark runner profiled"). A table's validation stage is keyed by the table's primary key;
when the one stage reading the table is keyed, on that port, by columns of the primary key (lineitem →
``l_orderkey`` of ``(l_orderkey, l_linenumber)``), every change of one primary key lands in one bucket
of that stage too. So the check can run in the stage's own operator, on the stage's buckets, its rows
kept in a state variable beside the stage's (``spark_stage_processors.FoldedStageProcessor``): one
shuffle, one Python pass and one commit fewer per folded table.

A table is folded into stage S when it has a primary key, every route of it ends at S through one
port, it has no declared functional dependency that needs a check stage of its own (those run
between validation and the stages, ``spark_dependencies``), S keeps keyed chunks (not top-k's or a
GJT's layout of its own), and S's key on that port is a projection of primary-key columns. The key is
read off the stage's own key function by probing it with a row of distinct markers, so no stage kind
needs to declare its key columns: a key function that computes anything else is not folded.

This module imports no pyspark: EXPLAIN prints the same operators (``spark_operator_lines``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import attrs

from catalog.schema import FunctionalDependency, Table
from operators.runtime.dataflow import Dataflow, SourceRoute
from operators.stages.base import KeyedStage


@attrs.frozen
class FoldedValidation:
    """Table ``table``'s validation runs in stage ``stage``'s operator; its changes are bucketed by the
    stage key, the values at ``key_columns`` (positions in the table's catalog columns, in key order)."""

    table: str
    stage: int
    key_columns: tuple[int, ...]


@attrs.frozen
class SparkOperator:
    """One stateful operator of the query: what it runs and what it reads through its shuffle."""

    name: str
    validates: tuple[str, ...]  # the tables whose validation it runs
    stage: int | None  # the dataflow stage it runs (None: a validation operator of its own)
    key: str  # what its input is shuffled by
    reads: tuple[str, ...]  # its inputs: "<table> changes" or the operators feeding it


class _Marker:
    """A distinct object per column, to see which input columns a key function returns."""

    __slots__ = ("position",)

    def __init__(self, position: int):
        self.position = position


def key_columns(stage: KeyedStage, port: int, route: SourceRoute) -> tuple[int, ...] | None:
    """The table columns (catalog positions, in key order) that ``stage``'s key on ``port`` is made of,
    for rows arriving through ``route``; None when the key is anything but a tuple of input columns."""
    row = tuple(_Marker(position) for position in route.columns)
    try:
        key = stage.key_function(port)(row)
    except Exception:  # a key that computes on its values cannot take markers: not a projection
        return None
    if type(key) is not tuple or not all(type(value) is _Marker for value in key):
        return None
    return tuple(value.position for value in key)


def checked_dependencies(table: Table) -> tuple[FunctionalDependency, ...]:
    """The declared dependencies of ``table`` that need a stage (``spark_dependencies``): all but those
    whose determinant holds the whole primary key (set semantics keep them)."""
    key = set(table.primary_key)
    return tuple(fd for fd in table.functional_dependencies if not key or not key <= set(fd.determinant))


def folded_validations(dataflow: Dataflow, tables: Mapping[str, Table]) -> dict[str, FoldedValidation]:
    """Per table whose validation folds into a stage (module docstring), where and how."""
    from operators.stages.gjt import GjtStage  # (a heavier import, needed only here)
    from operators.stages.top_k import TopKStage

    folded = {}
    for name, table in tables.items():
        routes = [route for route in dataflow.sources if route.table == name]
        if not table.primary_key or not routes or checked_dependencies(table):
            continue
        if len({(route.stage, route.port) for route in routes}) != 1:
            continue
        node = dataflow.stage(routes[0].stage)
        if isinstance(node.stage, TopKStage | GjtStage):
            continue
        primary = {table.column_names.index(column) for column in table.primary_key}
        keys = {key_columns(node.stage, route.port, route) for route in routes}
        if len(keys) != 1:
            continue
        (columns,) = keys
        if columns and set(columns) <= primary:
            folded[name] = FoldedValidation(name, node.id, columns)
    return folded


def spark_operators(dataflow: Dataflow, tables: Mapping[str, Table],
                    folded: Mapping[str, FoldedValidation]) -> list[SparkOperator]:
    """The query's stateful operators in the order data flows through them."""
    operators: list[SparkOperator] = []
    feeding: dict[int, list[str]] = {}
    for name, table in tables.items():
        if name in folded:
            feeding.setdefault(folded[name].stage, []).append(f"{name} changes")
            continue
        key = ", ".join(table.primary_key) if table.primary_key else "the whole row"
        operators.append(SparkOperator(f"validate {name}", (name,), None, key, (f"{name} changes",)))
        for stage in dict.fromkeys(route.stage for route in dataflow.sources if route.table == name):
            feeding.setdefault(stage, []).append(f"validate {name}")
    for node in dataflow.stages:
        validates = tuple(name for name, fold in folded.items() if fold.stage == node.id)
        label = f"[{node.id}]" + "".join(f" + validate {name}" for name in validates)
        operators.append(SparkOperator(label, validates, node.id, _stage_key(node.stage), tuple(feeding.get(node.id, ()))))
        if node.downstream is not None:
            feeding.setdefault(node.downstream, []).append(label)
    return operators


def _stage_key(stage: KeyedStage) -> str:
    return stage.describe().key or "its stage key"


def spark_operator_lines(operators: Sequence[SparkOperator]) -> list[str]:
    """EXPLAIN's lines: one per operator, what it runs, the shuffle into it and what that shuffle reads."""
    lines = [f"Spark operators: {len(operators)} (each, per micro-batch: a shuffle into it, a Python pass, "
             "a state commit)"]
    for operator in operators:
        lines.append(f"  {operator.name} ← {', '.join(operator.reads) or 'nothing'}; shuffled by {operator.key}")
    return lines
