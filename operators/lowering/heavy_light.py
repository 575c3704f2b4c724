"""Lower a ``HeavyLightTriangleCount``: one ``TriangleCountStage``, then a map to the SQL row.

Each atom's source sends only its two join columns, in the stage's row layout (first variable,
then second: R(A,B), S(B,C), T(C,A) on ports 0, 1, 2); a self-join routes one table to all three
ports. The stage emits the count as −old/+new (0 included, as a global aggregate shows over empty
input: its start output), so the map is linear: it repeats the count for every COUNT item, then
applies HAVING and the select list. The result starts as Spark's row over empty tables: COUNT 0.
"""

from __future__ import annotations

from operators.lowering.builder import StageBuilder, finish_function
from operators.stages.base import StageDescription
from operators.stages.map import MapStage
from operators.stages.triangle_count import TriangleCountStage
from planner.ir.expressions import Column, Expr
from planner.ir.heavy_light_plan import HeavyLightTriangleCount


def lower_heavy_light(builder: StageBuilder, node: HeavyLightTriangleCount, items: tuple | None,
                      having: Expr | None) -> tuple[int, tuple[Column, ...]]:
    """The stages of ``node``; returns (last stage, result layout)."""
    names = " ⋈ ".join(f"{a.alias}({', '.join(node.column_names(a.alias))})" for a in node.atoms)
    stage = builder.add(TriangleCountStage(f"triangle count {names}", node.epsilon))
    for port, atom in enumerate(node.atoms):
        builder.route(atom, node.column_names(atom.alias), stage, port)
    agg_layout = node.output
    finish = finish_function(items, having, agg_layout, hold=True)
    layout = tuple(Column(None, i.name) for i in items) if items is not None else agg_layout
    width = len(node.aggregates)

    def result(row):
        return finish(row * width)

    project = builder.add(MapStage("triangle count result", result, tuple(map(str, layout)), StageDescription(
        operator="Map (count → COUNT items)", inputs="count changes (−old, +new)", state="none",
        key="none (stateless)", update_cost="O(1) per count change",
        why="repeating the count per COUNT item is linear in the changes")))
    builder.downstream[stage] = (project, 0)
    return project, layout
