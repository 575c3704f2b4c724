"""The rows of each base table that some route of a dataflow may keep, told on the stream's Arrow
columns (``RowMask``, for the stream reader).

A table gets a mask only when every route of it has a selection the translation can see through: a
route without one keeps every row, and a selection whose compiled closure carries no expression
cannot be told. Each selection is translated by the Arrow compiler of expressions
(operators/lowering/expr_arrow.py), which may only ever keep *more* rows than the compiled
selection, never fewer; a table's mask keeps a row that any route's translation keeps. The mask only
decides which rows' other columns are made (``RowMask.always`` keeps the selections' own columns read
at every row), so each route's selection still runs on every row's true values.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from catalog.schema import Catalog, Table
from operators.lowering.expr_arrow import Possible, possible_rows
from operators.lowering.expr_eval import source_of
from operators.lowering.stream_columns import predicate_columns
from operators.runtime.dataflow import Dataflow, SourceRoute
from operators.runtime.row_masks import RowMask


def row_masks(dataflow: Dataflow, catalog: Catalog) -> dict[str, RowMask]:
    """For each table of ``dataflow`` whose every route's selection translates, its ``RowMask``."""
    routes: dict[str, list[SourceRoute]] = defaultdict(list)
    for route in dataflow.sources:
        routes[route.table].append(route)
    requirements = {requirement.table for requirement in dataflow.requirements}
    masks = {}
    for name, table_routes in routes.items():
        table = catalog.table(name)
        if name in requirements or table.functional_dependencies:  # their checks read whole rows (stream_columns)
            continue
        keeps = [_route_keeps(route, table) for route in table_routes]
        if any(keep is None for keep in keeps):
            continue
        always = set(table.primary_key)
        for route in table_routes:
            always |= predicate_columns(route.predicate, table.column_names) or set(table.column_names)
        masks[name] = RowMask(_either(keeps), frozenset(always))
    return masks


def _route_keeps(route: SourceRoute, table: Table) -> Possible | None:
    """A superset of the rows ``route``'s selection keeps; None for a route without one, or whose
    selection does not translate at all."""
    source = None if route.predicate is None else source_of(route.predicate)
    if source is None or not source.predicate:  # not compile_predicate's: what it keeps cannot be told
        return None
    return possible_rows(source.expr, table, source.layout)


def _either(keeps: Sequence[Possible]) -> Possible:
    if len(keeps) == 1:
        return keeps[0]
    return lambda casts: np.logical_or.reduce([keep(casts) for keep in keeps])
