"""Lower a query block closed by a window or a set operation, and the stateless layers above it.

A window closes a query block the way an aggregate does: ``Filter? / SubqueryAlias? / Project``
layers (the derived table and the outer WHERE of the top-N pattern) above one or more stacked
``MaintainedWindow`` nodes, above the body they number. A derived table of a set operation read as
a relation (rules/derived_rows.py) is such layers over the ``SetOperation``. The body is lowered as a
query of its own (``StageBuilder.lower``, keeping the columns the layers read); each window adds a
stage keyed by its partition (``window.py``); each layer above becomes a stateless map, an alias only
renames the layout.
"""

from __future__ import annotations

from operators.lowering.builder import StageBuilder, finish_function
from operators.lowering.window import window_stage
from operators.stages.base import StageDescription
from operators.stages.map import MapStage
from planner.ir.expressions import Call, Column
from planner.ir.logical import Filter, LogicalPlan, NamedExpr, Project, SetOperation, SubqueryAlias
from planner.ir.notation import print_expr
from planner.ir.reads import columns_read
from planner.ir.window import MaintainedWindow, window_columns

_LAYERS = (Filter, SubqueryAlias, Project, MaintainedWindow)


def is_layered_query(plan: LogicalPlan) -> bool:
    """Whether ``plan`` is layers of filters, aliases and projections over a ``MaintainedWindow``, or at
    least one such layer over a ``SetOperation`` (a bare one is lowered as a query's body)."""
    top = plan
    while isinstance(plan, _LAYERS):
        if isinstance(plan, MaintainedWindow):
            return True
        plan = plan.child
    return isinstance(plan, SetOperation) and plan is not top


def lower_layered_query(builder: StageBuilder, plan: LogicalPlan, items: tuple[NamedExpr, ...] | None):
    """The stages of ``plan`` (``is_layered_query``) and the select list ``items`` above it: a ``Body``."""
    layers = []
    while isinstance(plan, _LAYERS) and is_layered_query(plan):
        layers.append(plan)
        plan = plan.child
    layer_ids = {id(layer) for layer in layers}
    body = builder.lower(plan, frozenset(columns_read(layers[0], lambda node, field: id(node) not in layer_ids)))
    last, layout = body.last, body.layout
    rows = "window rows" if any(isinstance(layer, MaintainedWindow) for layer in layers) else "set operation rows"
    condition = None  # a WHERE above the windows, applied with the select list that follows it
    for layer in reversed(layers):
        match layer:
            case MaintainedWindow():
                last, layout = _add_stage(builder, window_stage(layer, layout), last), layout + window_columns(layer.functions)
            case SubqueryAlias(alias=alias):
                layout = tuple(Column(alias, c.name) for c in layout)
            case Filter():
                condition = layer.condition if condition is None else Call("and", (condition, layer.condition))
            case Project(items=projected):
                last, layout = _project(builder, projected, condition, layout, last, rows)
                condition = None
    if items is not None or condition is not None:
        last, layout = _project(builder, items, condition, layout, last, rows)
    return last, layout


def _project(builder: StageBuilder, items: tuple[NamedExpr, ...] | None, condition, layout: tuple[Column, ...],
             last: int, rows: str) -> tuple[int, tuple[Column, ...]]:
    """A map stage applying ``condition`` then ``items`` (either may be None) to ``rows`` of ``layout``."""
    out = layout if items is None else tuple(Column(None, item.name) for item in items)
    what = ", ".join(([f"σ {print_expr(condition)}"] if condition is not None else []) + (["π"] if items is not None else []))
    stage = MapStage(rows.replace("rows", "output"), finish_function(items, condition, layout), tuple(map(str, out)),
                     StageDescription(operator=f"Map ({what})", inputs=rows, state="none", key="none (stateless)",
                                      update_cost="O(1) per change", why=f"selection and projection over {rows} are linear"))
    return _add_stage(builder, stage, last), out


def _add_stage(builder: StageBuilder, stage, upstream: int) -> int:
    index = builder.add(stage)
    builder.downstream[upstream] = (index, 0)
    return index
