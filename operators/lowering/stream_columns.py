"""Which columns of each base table a lowered dataflow and its validator read: what the stream reader
must turn into Python values (``OpenStream.batches``'s ``columns``); the others stay None in the rows.

A TPC-H Q3 run reads 5 of lineitem's 16 columns; turning the other 11 (three DECIMALs, two dates, a
44-character comment) into Python objects, and freeing them, was most of the time ``ivm run`` spent
reading its stream. The answer has to be exact, not a guess: a column left out that a stage reads
would be computed on as NULL. So it is the union of what the routes say they read, their
predicates' columns (from the expression each compiled predicate carries), and the primary key (the
validator's key). Whatever cannot be seen through (a predicate without its expression, a table with
row requirements or declared functional dependencies, whose checks are closures over whole rows)
reads every column.
"""

from __future__ import annotations

from catalog.schema import Catalog
from operators.lowering.expr_eval import source_of
from operators.runtime.dataflow import Dataflow
from planner.ir.expressions import deep_columns


def columns_read(dataflow: Dataflow, catalog: Catalog) -> dict[str, frozenset[str]]:
    """For each table ``dataflow`` reads, the names of the columns its stages and validation read."""
    read: dict[str, set[str] | None] = {}
    requirements = {requirement.table for requirement in dataflow.requirements}
    for route in dataflow.sources:
        table = catalog.table(route.table)
        names = read.setdefault(route.table, set(table.primary_key))
        if names is None:
            continue
        if route.table in requirements or table.functional_dependencies:
            read[route.table] = None
            continue
        names.update(table.column_names[position] for position in route.columns)
        if route.predicate is not None:
            predicate = predicate_columns(route.predicate, table.column_names)
            if predicate is None:
                read[route.table] = None
                continue
            names.update(predicate)
    return {name: frozenset(catalog.table(name).column_names if names is None else names)
            for name, names in read.items()}


def predicate_columns(predicate, column_names: tuple[str, ...]) -> set[str] | None:
    """The names of the table columns a route's compiled predicate reads; None when that cannot be told."""
    source = source_of(predicate)
    if source is None:
        return None
    names = set()
    for column in deep_columns(source.expr):
        position = source.layout.get(column)
        if position is None:  # not a column of the row (an outer reference): cannot say
            return None
        names.add(column_names[position])
    return names
