"""EXPLAIN's section on a view tree (Olteanu §4.1): the chosen variable order as an indented tree, the
rejected orders with their estimated costs, the stages with their keys and the bounds of the class;
for a factorized result (Ex. 4.4) also how it is read (enumerated from the views, constant delay).

Everything is read from the ``ViewTreeAggregate`` or ``FactorizedViewTree`` node (the order, the
candidates, the reduct's FDs) and from the lowered stages (the views and keys they hold); the bounds
come from the query's class
(``explain_classes``). Nothing is derived again here.
"""

from __future__ import annotations

from operators.stages.view_stages import GroupViewStage, TotalStage, ViewStage
from operators.stages.view_tree import ViewTreeStage
from planner.compiler import CompiledQuery
from planner.explain_classes import query_classes
from planner.ir.join_query import NotAJoinQuery
from planner.ir.variable_orders import DEFAULT_ROWS, OrderTree, parse_order
from planner.ir.view_tree_plan import FactorizedViewTree, ViewTreeAggregate

DESCRIPTION = ("view tree with ring payloads (F-IVM, Olteanu §4.1): one view per variable of the order, a delta "
               "travels its atom's path to the root; one keyed stage per view with two or more parts (views of one "
               "part fused into their parent's stage), each keyed by the variables all its inputs carry: a view's "
               "variables shared with its parent in a hierarchical query's canonical order")


FACTORIZED = ("view tree with a factorized result (F-IVM, Olteanu Ex. 4.4): count-ring views, the free variables "
              "on top; the join's rows are enumerated from the views with constant delay, never materialized; "
              "one stage keyed by a constant (does not scale out)")


def view_tree_of(compiled: CompiledQuery) -> ViewTreeAggregate | FactorizedViewTree | None:
    return next((n for n in compiled.plan.walk() if isinstance(n, ViewTreeAggregate | FactorizedViewTree)), None)


def _class_line(compiled: CompiledQuery) -> str:
    """``q-hierarchical: O(1) update, O(1) delay`` for the query as maintained (what the rule required)."""
    found = query_classes(compiled)
    if isinstance(found, NotAJoinQuery) or found.maintained.strongest != "q-hierarchical":
        return "class: of the join under the aggregate, q-hierarchical for its group and argument columns: " \
               "O(1) update, O(1) delay"
    of = " (of the Σ-reduct, Thm 4.11)" if found.uses_reduct else ""
    return f"class: q-hierarchical{of}: O(1) update, O(1) delay"


def _output_text(compiled: CompiledQuery) -> str:
    read = ("pull: result() enumerates the views, the view keeps no copy" if compiled.dataflow.enumerated_by is not None
            else "the operators above keep what they need from its delta-enumerated changes")
    return f"output: factorized (Ex. 4.4), each free tuple with its multiplicity (bag); {read}"


def _tree_lines(forest: tuple[OrderTree, ...], depth: int = 1) -> list[str]:
    lines = []
    for variable, children in forest:
        lines.append("  " * depth + variable)
        lines += _tree_lines(children, depth + 1)
    return lines


def _stages(compiled: CompiledQuery) -> list[dict]:
    """The view-tree stages of the dataflow: what each computes (``kind``: a bound view's partial sums,
    a free view's groups, a global total, or the whole tree in one stage), its key and its inputs."""
    found = []
    for node in compiled.dataflow.stages:
        stage = node.stage
        if isinstance(stage, ViewStage | GroupViewStage):
            found.append({"stage": node.id, "kind": "groups" if isinstance(stage, GroupViewStage) else "view",
                          "view": stage.fragment[0], "fused": list(stage.fragment[1:]),
                          "key": list(stage.key_variables), "inputs": [a.name for a in stage.order.atoms]})
        elif isinstance(stage, TotalStage):
            found.append({"stage": node.id, "kind": "total", "view": None, "fused": [], "key": [], "inputs": []})
        elif isinstance(stage, ViewTreeStage):
            found.append({"stage": node.id, "kind": "whole tree", "view": None,
                          "fused": [n.variable for n in stage.layout.nodes], "key": [],
                          "inputs": [a.name for a in stage.order.atoms]})
    return found


def _stage_line(stage: dict) -> str:
    key = f"key ({', '.join(stage['key'])})" if stage["key"] else "key constant (does not scale out)"
    match stage["kind"]:
        case "total":
            return f"[{stage['stage']}] the total of a global aggregate (one group), {key}"
        case "whole tree":
            return f"[{stage['stage']}] the whole tree in one stage, {key}, inputs {', '.join(stage['inputs'])}"
    what = ("groups at " if stage["kind"] == "groups" else "V_") + stage["view"]
    fused = f", fused {', '.join(stage['fused'])}" if stage["fused"] else ""
    return f"[{stage['stage']}] {what}{fused}, {key}, inputs {', '.join(stage['inputs'])}"


def _bounds(compiled: CompiledQuery) -> str:
    found = query_classes(compiled)
    return found.reason if isinstance(found, NotAJoinQuery) else found.bounds()


def view_tree_json(compiled: CompiledQuery) -> dict:
    node = view_tree_of(compiled)
    chosen, *rejected = node.candidates
    factorized = isinstance(node, FactorizedViewTree)
    extra = {"output": "factorized", "free_variables": list(node.free), "query_class": _class_line(compiled),
             "distinct": node.once_each} if factorized else {}
    return {"strategy": "view_tree", "description": FACTORIZED if factorized else DESCRIPTION, **extra, "root": None, "fk_edges": [],
            "variable_order": node.order, "order_chosen_by": node.chosen_by, "ring": node.ring_kind,
            "lifted_variables": list(node.lifted), "fd_reduct_used": list(node.fd_reduct),
            "order_cost": {"state": chosen.state, "update": chosen.update},
            "rejected_orders": [{"order": c.order, "state": c.state, "update": c.update} for c in rejected],
            "static_atoms": list(node.static), "view_stages": _stages(compiled), "bounds": _bounds(compiled)}


def view_tree_text(compiled: CompiledQuery) -> list[str]:
    node = view_tree_of(compiled)
    chosen, *rejected = node.candidates
    how = "forced" if node.chosen_by == "forced" else "least estimated update work, then state"
    lines = [f"Variable order (view tree), {how}: {node.order}", *_tree_lines(parse_order(node.order)),
             f"  estimated state {chosen.state:g} entries, update work {chosen.update:g} per single-tuple update "
             f"(rows from ivm.rows, else {DEFAULT_ROWS} per table)"]
    if node.fd_reduct:
        lines.append(f"  order of the Σ-reduct (Thm 4.11), FDs: {'; '.join(node.fd_reduct)}")
    if node.static:
        lines.append(f"  static (ivm.static, §4.5): {', '.join(node.static)}: loaded by the first batch, "
                     "no delta path; later changes are rejected")
    lines += [f"  rejected: {c.order}: state {c.state:g}, update {c.update:g}" for c in rejected]
    if isinstance(node, FactorizedViewTree):
        lines += [f"  free variables: {', '.join(node.free)}", f"  {_output_text(compiled)}",
                  f"  {_class_line(compiled)}"]
    lines += [f"  ring: {node.ring_kind}, lifted {', '.join(node.lifted) or 'nothing'}",
              "  stages (a view's stage keeps its parts; a view of one part is fused into its parent's stage):",
              *(f"    {_stage_line(stage)}" for stage in _stages(compiled)), f"  bounds: {_bounds(compiled)}"]
    return lines
