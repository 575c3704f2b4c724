"""The maintenance plan as a graph for the page, read off EXPLAIN's JSON document.

Cquirrel's demo drew a picture per TPC-H query by hand; here every node and edge comes from the
document ``explain_json`` prints (its ``sources`` and ``stages`` with ``downstream``), so any query
the planner maintains is drawn, and the drawing cannot disagree with ``ivm explain``. The layout is
layered: a node's column is one more than the deepest node feeding it.
"""

from __future__ import annotations

import json

from planner.compiler import CompiledQuery
from planner.explain import explain_json

RESULT_NODE = "result"


def plan_document(compiled: CompiledQuery) -> dict:
    """EXPLAIN's JSON document, plus the graph and the rule trace the page shows on demand."""
    document = json.loads(explain_json(compiled))
    document["graph"] = plan_graph(document)
    document["rule_trace"] = [
        {"batch": r.batch, "iteration": r.iteration, "rule": r.rule, "effective": r.effective,
         "ms": round(r.elapsed_s * 1000, 3)}
        for r in compiled.trace.runs
    ]
    return document


def plan_graph(document: dict) -> dict:
    """Nodes (sources, stages, the result) with a layer and a row each, and the edges between them."""
    tables = dict.fromkeys(s["table"] for s in document["sources"])  # a table may feed several stages
    nodes = [{"id": f"source:{table}", "kind": "source", "label": table, "detail": "base table changes"} for table in tables]
    nodes += [{"id": f"stage:{s['id']}", "kind": "stage", "stage": s["id"], "label": s["name"],
               "operator": s["operator"], "key": s["key"], "update_cost": s["update_cost"], "why": s["why"],
               "state": s["state"]} for s in document["stages"]]
    nodes.append({"id": RESULT_NODE, "kind": "result", "label": "result",
                  "detail": ", ".join(document["output_columns"])})
    edges = [{"from": f"source:{s['table']}", "to": f"stage:{s['stage']}",
              "label": f"σ {s['selection']}" if s["selection"] else ""} for s in document["sources"]]
    edges += [{"from": f"stage:{s['id']}", "to": RESULT_NODE if s["downstream"] is None else f"stage:{s['downstream']}",
               "label": ""} for s in document["stages"]]
    if not document["stages"]:  # a plan with no stage still shows its result
        edges += [{"from": f"source:{s['table']}", "to": RESULT_NODE, "label": ""} for s in document["sources"]]
    _layout(nodes, edges)
    return {"nodes": nodes, "edges": edges}


def _layout(nodes: list[dict], edges: list[dict]) -> None:
    """Sets each node's ``layer`` (longest path from a source) and ``row`` (its place in the layer)."""
    inputs: dict[str, list[str]] = {node["id"]: [] for node in nodes}
    for edge in edges:
        inputs[edge["to"]].append(edge["from"])
    layers: dict[str, int] = {}

    def layer(node_id: str) -> int:
        if node_id not in layers:
            layers[node_id] = 0  # the dataflow is a DAG; this guards the recursion all the same
            layers[node_id] = 1 + max((layer(i) for i in inputs[node_id]), default=-1)
        return layers[node_id]

    rows: dict[int, int] = {}
    for node in nodes:
        node["layer"] = layer(node["id"])
        node["row"] = rows.get(node["layer"], 0)
        rows[node["layer"]] = node["row"] + 1
