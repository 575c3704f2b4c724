"""EXPLAIN for maintenance plans, for two readers: text with stable columns (tabulate), or JSON for tools.

Text EXPLAIN is a compact plan within ``WIDTH`` columns for whoever runs the view: the strategy and
what an update costs (the worst stage rows', ``explain_headline``), a row per stage
``operator | inputs | key | state kept | update cost``, the sources and their selections, the rules
that did not apply and why, and where Spark itself would refuse the query. ``--verbose`` adds the
theory for whoever checks it: the plans in the plan notation, each stage's reason, the strategy's
facts with their papers (foreign-key assertion keys, the GJT, the view tree, the nested aggregate's
index), the query's class and bounds, the rule trace and the generated program. The foreign-key
facts shown are read from the ``ForeignKeyJoin`` node that owns them, never derived here.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable
from typing import TypeVar

import attrs
from tabulate import tabulate

from operators.lowering.codegen import write_program
from operators.runtime.dataflow import StageNode
from operators.runtime.spark_operators import (
    SparkOperator,
    folded_validations,
    spark_operator_lines,
    spark_operators,
)
from operators.runtime.validate import Validator
from planner.compiler import CompiledQuery
from planner.explain_classes import classes_json, classes_text
from planner.explain_derived import derived_tables_json, derived_tables_text
from planner.explain_gjt import gjt_json, gjt_text
from planner.explain_headline import cost_line, strategy_names, worst_costs
from planner.explain_heavy_light import heavy_light_json, heavy_light_text
from planner.explain_outer_join import DESCRIPTION as OUTER_JOINS
from planner.explain_outer_join import outer_join_of, outer_joins_json, outer_joins_text
from planner.explain_scalar import scalar_products_json, scalar_products_text
from planner.explain_spark import compiled_strategy, strategy_json, strategy_lines
from planner.explain_subquery import subqueries_json, subqueries_text
from planner.explain_view_tree import view_tree_json, view_tree_text
from planner.explain_window import windows_json, windows_text
from planner.ir.gjt_maintenance import GeneralizedJoinTree
from planner.ir.heavy_light_plan import HeavyLightTriangleCount
from planner.ir.maintenance import ChangePropagationJoin, ForeignKeyJoin, NestedAggregate
from planner.ir.notation import print_plan
from planner.ir.outer_join import OuterJoin
from planner.ir.outer_references import deep_outer_references
from planner.ir.view_tree_plan import FactorizedViewTree, ViewTreeAggregate

T = TypeVar("T")

MAINTENANCE_COLUMNS = ("operator", "inputs", "state kept", "key", "update cost", "why")
#: the compact plan's stage table, and each column's width: with the gaps, ``WIDTH`` columns in all
COMPACT_COLUMNS = ("operator", "inputs", "key", "state kept", "update cost")
COMPACT_WIDTHS = (26, 16, 20, 24, 26)
WIDTH = 120
#: ``StageDescription`` field → its column in the text table.
STAGE_COLUMNS = dict(zip(("operator", "inputs", "state", "key", "update_cost", "why"), MAINTENANCE_COLUMNS, strict=True))


NESTED_STRATEGIES = {
    "rpai_tree": "RPAI tree (RPAI §2.2.3, §3): q is a prefix sum along one column, so an update shifts a range "
                 "of q values: O(log n) per update",
    "pai_map": "PAI map (RPAI §2.1.3): an update moves one group's q, and its partial aggregate moves with it: "
               "O(1) per update (O(log n) for a range comparison)",
    "per_key_index": "AJU Theorem 15's join-select-aggregate, as per-key RPAI trees (RPAI §4.3): per correlation key "
                     "the outer rows are indexed by the compared value, each node holding its subtree's sums; an "
                     "update re-reads one range sum: O(log n)",
    "general": "RPAI's general algorithm (§4.2): free, bound and result maps, O(n) per update (recomputation: O(n²))",
}

TWO_LEVELS = ("; with a subquery nested two levels (RPAI §5.2.1, NQ2) an update costs O(n log n) instead: that "
              "subquery's rows sit in an RPAI tree keyed by its correlated aggregate, read once per distinct parameter")


def _nested_description(nested: NestedAggregate) -> str:
    text = NESTED_STRATEGIES[nested.strategy]
    return text + TWO_LEVELS if nested.two_levels else text


CHANGE_PROPAGATION = {
    "theorem11": "change propagation over AJU Theorem 11's join tree (forced): O(λ) amortized, every view materialized",
    "forced": "change propagation over a forced left-deep join order: no update-time guarantee, views materialized",
    "fallback": "general fallback: change propagation over binary delta joins with materialized views, "
                "no update-time guarantee",
}


def _first(compiled: CompiledQuery, kind: type[T]) -> T | None:
    return next((n for n in compiled.plan.walk() if isinstance(n, kind)), None)


def theorem11_text(compiled: CompiledQuery) -> str | None:
    """AJU Theorem 11's change-propagation tree for the query's foreign-key join, shown beside the
    live-tuple plan (``--join-tree theorem11`` maintains the query with it instead)."""
    join = _first(compiled, ForeignKeyJoin)
    if join is None or not join.edges:
        return None
    return print_plan(join.theorem11_tree)


JOIN_SELECT = ("join-select (AJU Theorem 15): the tuples of each key ordered by the compared column, the view's value "
               "a pointer into them: O(log n) per tuple, O(log n + rows that flip) when the value changes, so the "
               "join's O(λ) becomes O(λ log n) plus the rows that flip")


def strategy_of(compiled: CompiledQuery) -> dict:
    """The strategies chosen and their guarantees: the section of the first node class of
    ``STRATEGY_SECTIONS`` (in its order) found in the plan, with the nested aggregate and join-selects."""
    nested = _first(compiled, NestedAggregate)
    extra = {"nested_aggregate": nested.strategy, "nested_description": _nested_description(nested)} if nested else {}
    selects = [s for n in compiled.plan.walk() if isinstance(n, ForeignKeyJoin) for s in n.join_selects]
    if selects:
        extra["join_selects"] = [f"{s.row} {s.op} {s.value}" for s in selects]
    for kind, section in STRATEGY_SECTIONS.items():
        node = _first(compiled, kind)
        found = None if node is None else section(compiled, node, extra)
        if found is not None:
            return found
    return {"strategy": "none", "root": None, "fk_edges": [], **extra}


def _outer_join_section(compiled: CompiledQuery, node: OuterJoin, extra: dict) -> dict | None:
    if outer_join_of(compiled) is None:  # an outer join inside another block: that block's section
        return None
    return {"strategy": "outer_join", "root": None, "fk_edges": [], "description": OUTER_JOINS,
            "outer_joins": outer_joins_json(compiled)}


def _propagation_section(compiled: CompiledQuery, node: ChangePropagationJoin, extra: dict) -> dict:
    why = compiled.context.decisions.get("ChooseChangePropagationJoin", "")
    return {"strategy": f"change_propagation_{node.tree_kind}", "root": None, "fk_edges": [], **extra,
            "description": CHANGE_PROPAGATION[node.tree_kind] + (f" ({why})" if why else "")}


def _foreign_key_section(compiled: CompiledQuery, join: ForeignKeyJoin, extra: dict) -> dict:
    return {**extra,
        "strategy": "aju_fk_tree" if join.edges else "single_relation",
        "description": (
            f"AJU live tuples over a foreign-key tree rooted at {join.root}: O(λ) amortized update time, "
            "constant-delay enumeration, state linear in the input (no intermediate views)"
            if join.edges else f"one relation ({join.root}): no join to maintain; each change goes on to the operators above"
        ),
        "root": join.root,
        "fk_edges": [str(e) for e in join.edges],
        "assertion_keys": {r: list(d) for r, d in join.assertion_keys.items()},
        "auxiliary_attributes": {r: list(d) for r, d in join.auxiliary_attributes.items()},
    }


#: The strategy section of EXPLAIN, by the class of the node that stands for the join block, strongest
#: claim first: (compiled query, the first such node, the nested aggregate's and join-selects' fields) → fields.
STRATEGY_SECTIONS: dict[type, Callable[[CompiledQuery, object, dict], dict | None]] = {
    OuterJoin: _outer_join_section,
    GeneralizedJoinTree: lambda compiled, node, extra: gjt_json(compiled),
    ViewTreeAggregate: lambda compiled, node, extra: {**view_tree_json(compiled), **extra},
    FactorizedViewTree: lambda compiled, node, extra: {**view_tree_json(compiled), **extra},
    HeavyLightTriangleCount: lambda compiled, node, extra: {**heavy_light_json(compiled), **extra},
    ChangePropagationJoin: _propagation_section,
    ForeignKeyJoin: _foreign_key_section,
}


def _keys_text(keys: dict[str, list[str]]) -> str:
    return "; ".join(f"{relation}: " + ", ".join(f"PK({d})" for d in found) for relation, found in keys.items())


def stage_fields(node: StageNode) -> dict[str, str]:
    """A stage's ``StageDescription`` as named fields, in column order: what both the text table and
    the JSON document show of it (one reading, so the two cannot drift apart)."""
    return attrs.asdict(node.stage.describe())


def maintenance_rows(compiled: CompiledQuery) -> list[dict[str, str]]:
    dataflow = compiled.dataflow
    rows = []
    for route in dataflow.sources:
        target = dataflow.stage(route.stage).stage
        rows.append({
            "operator": f"Source {route.table}", "inputs": route.table,
            "state kept": "none", "key": f"→ {target.name} (port {route.port})", "update cost": "O(1)",
            "why": f"σ {route.predicate_text}: updates failing it are dropped (AJU §2.3)" if route.predicate_text
            else "every update is routed",
        })
    for node in dataflow.stages:
        fields = stage_fields(node)
        rows.append({column: fields[field] for field, column in STAGE_COLUMNS.items()}
                    | {"operator": f"[{node.id}] {fields['operator']}"})
    return rows


def explain_text(compiled: CompiledQuery, verbose: bool = False) -> str:
    """The compact plan (``compact_text``), and with ``verbose`` the theory after it."""
    return compact_text(compiled) + ("\n\n" + theory_text(compiled) if verbose else "")


def compact_text(compiled: CompiledQuery) -> str:
    """What a user reads: the strategy and its cost (the worst stage rows'), one row per stage with
    its inputs, key, state and cost, the sources, what was not applied and why, Spark's status."""
    stages = [[r[c] for c in COMPACT_COLUMNS] for r in maintenance_rows(compiled) if not r["operator"].startswith("Source ")]
    parts = [*_wrapped(f"Strategy: {'; '.join(strategy_names(compiled))}"),
             *_wrapped(f"Update cost (the worst stages): "
                       f"{cost_line(update_costs(compiled), compiled.plan.guarantee()) or 'none: no stage'}"), ""]
    if stages:
        parts += [tabulate(stages, headers=COMPACT_COLUMNS, tablefmt="simple", maxcolwidths=list(COMPACT_WIDTHS)), ""]
    parts.append("Sources (each change routed in O(1); one failing the selection σ is dropped)")
    for text in _source_texts(compiled):
        parts += _wrapped(f"  {text}")
    join_edges = [str(e) for n in compiled.plan.walk() if isinstance(n, ForeignKeyJoin) for e in n.edges]
    if join_edges:
        parts += _wrapped(f"Foreign-key edges: {', '.join(dict.fromkeys(join_edges))}")
    for line in (*outer_joins_text(compiled), *windows_text(compiled), *derived_tables_text(compiled),
                 *scalar_products_text(compiled), *subqueries_text(compiled)):
        parts += _wrapped(line)
    for line in (*strategy_lines(compiled_strategy(compiled)), *spark_operator_lines(spark_operator_list(compiled))):
        parts += _wrapped(line)
    for rule, why in compiled.context.refusals.items():
        parts += _wrapped(f"Not applied: {rule}: {why}")
    status = spark_status(compiled)
    if status is not None:
        parts += _wrapped(f"Spark: {status}")
    return "\n".join(parts)


def _wrapped(text: str) -> list[str]:
    """``text`` in lines of at most ``WIDTH`` columns, the later ones indented."""
    indent = " " * (len(text) - len(text.lstrip()) + 2)
    return textwrap.wrap(text, WIDTH, subsequent_indent=indent, break_on_hyphens=False)


def _source_texts(compiled: CompiledQuery) -> list[str]:
    """``table → [stage] port p, σ predicate`` per table and stage (a table read twice, once per copy)."""
    ports: dict[tuple[str, int, str | None], list[int]] = {}
    for route in compiled.dataflow.sources:
        ports.setdefault((route.table, route.stage, route.predicate_text), []).append(route.port)
    return [f"{table} → [{stage}] port{'s' if len(found) > 1 else ''} {', '.join(map(str, found))}"
            + (f", σ {predicate}" if predicate else "") for (table, stage, predicate), found in ports.items()]


def spark_operator_list(compiled: CompiledQuery) -> list[SparkOperator]:
    """The stateful operators the Spark engine runs the view as, a validation folded into the stage it
    feeds where the stage's key is part of the table's primary key (``spark_operators``)."""
    dataflow = compiled.dataflow
    tables = {name: compiled.context.catalog.table(name) for name in dataflow.tables()}
    return spark_operators(dataflow, tables, folded_validations(dataflow, tables))


def update_costs(compiled: CompiledQuery) -> dict[int, str]:
    return {node.id: node.stage.describe().update_cost for node in compiled.dataflow.stages}


def spark_status(compiled: CompiledQuery) -> str | None:
    """Where Spark itself would not run the query (the reference everywhere else), and what holds then."""
    deep = deep_outer_references(compiled.logical)
    if not deep:
        return None
    return (f"Spark's analyzer refuses this query: {', '.join(map(str, deep))} is read two or more query levels "
            "below its query, and Spark resolves an outer reference one level out only (UNRESOLVED_COLUMN); "
            "maintained under standard SQL semantics, compared with DuckDB")


def theory_text(compiled: CompiledQuery) -> str:
    """What ``--verbose`` adds: the plans, each stage's reason, the strategy's facts with their papers,
    the query's class and bounds, the rule trace and the generated program."""
    strategy = strategy_of(compiled)
    tree = theorem11_text(compiled)
    parts = [
        "Theory (--verbose)", "",
        tabulate([("logical", print_plan(compiled.logical)), ("maintenance", print_plan(compiled.plan))]
                 + ([("theorem 11 tree", tree)] if tree else []),
                 headers=("stage", "plan"), tablefmt="simple"),
        "",
        "Why each stage",
        *(f"  {r['operator']}: {r['why']}" for r in maintenance_rows(compiled)),
        "",
        f"Strategy in full: {strategy.get('description', strategy['strategy'])}",
    ]
    if strategy["strategy"] == "gjt":
        parts += gjt_text(strategy)
    if strategy.get("assertion_keys"):
        parts.append(f"Assertion keys (AJU §3.2): {_keys_text(strategy['assertion_keys'])}; auxiliary attributes "
                     f"(Condition 5, fewest by brute force): {_keys_text(strategy['auxiliary_attributes']) or 'none'}. "
                     "The stages carry every descendant's key in each live tuple's payload, a superset of these.")
    if "nested_aggregate" in strategy:
        parts.append(f"Nested aggregate: {strategy['nested_description']}")
    if "join_selects" in strategy:
        parts.append(f"Join-select: {', '.join(strategy['join_selects'])}: {JOIN_SELECT}")
    if strategy["strategy"] == "view_tree":
        parts += view_tree_text(compiled)
    if strategy["strategy"] == "heavy_light_triangle":
        parts += heavy_light_text(compiled)
    parts += classes_text(compiled)
    runs = [(r.batch, r.iteration, r.rule, "yes" if r.effective else "", f"{r.elapsed_s * 1000:.2f}") for r in compiled.trace.runs]
    parts += ["", "Rule trace", tabulate(runs, headers=("batch", "iteration", "rule", "effective", "ms"), tablefmt="simple")]
    parts += ["", "Generated program (the local runner's compiled path, operators/lowering/codegen.py)", "",
              program_source(compiled)]
    return "\n".join(parts)


def program_source(compiled: CompiledQuery) -> str:
    """The local runner's generated program as ``MaintainedView`` compiles it: with the one-change checked
    function of each table the validator stores at once (codegen.py's ``_checked_function``)."""
    dataflow = compiled.dataflow
    validator = Validator(compiled.context.catalog, dataflow.tables(), requirements=dataflow.requirements)
    return write_program(dataflow, validator.storable_keys()).source


def explain_json(compiled: CompiledQuery) -> str:
    strategy = strategy_of(compiled)
    stages = []
    for node in compiled.dataflow.stages:
        stages.append({"id": node.id, "name": node.stage.name, **stage_fields(node), "downstream": node.downstream})
    document = {
        **strategy,
        "headline": "; ".join(strategy_names(compiled)),
        "worst_update_costs": [{"cost": cost, "stages": found} for cost, found in worst_costs(update_costs(compiled))],
        "spark_status": spark_status(compiled),
        "stages": stages,
        "sources": [{"table": r.table, "stage": r.stage, "port": r.port, "selection": r.predicate_text}
                    for r in compiled.dataflow.sources],
        "output_columns": list(compiled.dataflow.output_columns),
        "spark_strategy": strategy_json(compiled_strategy(compiled)),
        "spark_operators": [{"name": o.name, "stage": o.stage, "validates": list(o.validates), "shuffled_by": o.key,
                             "reads": list(o.reads)} for o in spark_operator_list(compiled)],
        "rules_applied": compiled.trace.rules_applied(),
        "refusals": compiled.context.refusals,
        "logical_plan": print_plan(compiled.logical),
        "maintenance_plan": print_plan(compiled.plan),
        "theorem11_tree": theorem11_text(compiled),
        "windows": windows_json(compiled),
        "derived_tables": derived_tables_json(compiled),
        "scalar_subqueries": scalar_products_json(compiled),
        "subqueries": subqueries_json(compiled),
        **classes_json(compiled),
    }
    return json.dumps(document, indent=2)
