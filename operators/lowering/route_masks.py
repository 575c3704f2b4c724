"""The rows of each base table that some route of a dataflow may keep, told on the stream's Arrow
columns: the routes' selections translated to Arrow compute (``RowMask``, for the stream reader).

A table gets a mask only when every route of it has a selection the translation can see through: a
route without one keeps every row, and a selection whose compiled closure carries no expression
cannot be told. The translation is of what the compiled selection computes (operators/lowering/
expr_eval.py: SQL's three-valued logic, a row kept only where its selection is exactly true) and may
only ever keep *more* rows than it, never fewer: a row wrongly left out would have its values None
where a route reads them. So each part is either translated exactly, as Arrow's Kleene logic (a
comparison of a column with a literal or with a column of its type, BETWEEN, IS [NOT] NULL, [NOT]
IN a list of literals, NOT, AND, OR, over INT, BIGINT, DECIMAL, DATE and STRING columns), or not
at all; a conjunct that is not translated is taken as true for every row (the conjunction of the
others keeps a superset), anything else that is not makes the whole table read (no mask). A literal
is compared in its column's Arrow type, and only when it converts to it exactly (``0.055`` against a
DECIMAL(15,2) column does not: no mask). The mask only decides which rows' other columns are made
(``RowMask.always`` keeps the selections' own columns read at every row), so each route's selection
still runs on every row's true values.
"""

from __future__ import annotations

import datetime
import decimal
from collections import defaultdict
from collections.abc import Callable, Sequence
from functools import reduce

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from catalog import types
from catalog.schema import Catalog, Table
from operators.lowering.expr_eval import source_of
from operators.lowering.stream_columns import predicate_columns
from operators.runtime.column_types import arrow_type
from operators.runtime.dataflow import Dataflow, SourceRoute
from operators.runtime.row_masks import CastColumns, RowMask
from planner.ir.expressions import Call, Column, Expr, Literal

#: a selection or part of one over a chunk's cast columns: its three-valued value per row (NULL: unknown)
Truth = Callable[[CastColumns], pa.Array | pa.ChunkedArray]
#: a superset of the rows a selection keeps, as a boolean per row
Possible = Callable[[CastColumns], np.ndarray]

_COMPARE = {"=": pc.equal, "<>": pc.not_equal, "<": pc.less, "<=": pc.less_equal, ">": pc.greater,
            ">=": pc.greater_equal}
_MIRRORED = {"=": "=", "<>": "<>", "<": ">", "<=": ">=", ">": "<", ">=": "<="}  # l op r ⇔ r mirrored(op) l


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
    return _possible(source.expr, _Columns(table, source.layout))


def _either(keeps: Sequence[Possible]) -> Possible:
    if len(keeps) == 1:
        return keeps[0]
    return lambda casts: np.logical_or.reduce([keep(casts) for keep in keeps])


def _possible(expr: Expr, columns: _Columns) -> Possible | None:
    """A superset of the rows where ``expr`` is true; None: any row may be kept."""
    match expr:
        case Call(op="and", args=args):
            # p ∧ q ⇒ p: a conjunct left out only widens the superset
            parts = [part for part in (_possible(arg, columns) for arg in args) if part is not None]
            if not parts:
                return None
            return parts[0] if len(parts) == 1 else lambda casts: np.logical_and.reduce([part(casts) for part in parts])
        case Call(op="or", args=args):
            parts = [_possible(arg, columns) for arg in args]
            if any(part is None for part in parts):
                return None
            return lambda casts: np.logical_or.reduce([part(casts) for part in parts])
    truth = _truth(expr, columns)
    if truth is None:
        return None
    return lambda casts: _booleans(pc.fill_null(truth(casts), False))  # kept only where exactly true


def _booleans(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    return values.to_numpy(zero_copy_only=False)


def _truth(expr: Expr, columns: _Columns) -> Truth | None:
    """``expr``'s three-valued value on each row exactly as the compiled selection computes it; None
    when it is not translated."""
    match expr:
        case Call(op=("and" | "or") as op, args=args):
            parts = [_truth(arg, columns) for arg in args]
            if any(part is None for part in parts):
                return None
            combine = pc.and_kleene if op == "and" else pc.or_kleene
            return lambda casts: reduce(combine, (part(casts) for part in parts))
        case Call(op="not", args=(arg,)):
            inner = _truth(arg, columns)
            return None if inner is None else lambda casts: pc.invert(inner(casts))  # NOT NULL is NULL
        case Call(op=op, args=(left, right)) if op in _COMPARE:
            return _comparison(op, left, right, columns)
        case Call(op="between", args=(subject, low, high)):
            parts = [_comparison(">=", subject, low, columns), _comparison("<=", subject, high, columns)]
            if any(part is None for part in parts):
                return None
            return lambda casts: pc.and_kleene(parts[0](casts), parts[1](casts))
        case Call(op=("is null" | "is not null") as op, args=(Column() as subject,)):
            position = columns.position(subject)
            if position is None:
                return None
            test = pc.is_null if op == "is null" else pc.is_valid
            return lambda casts: test(casts[position])
        case Call(op=("in" | "not in") as op, args=(Column() as subject, *members)):
            return _membership(subject, members, op == "not in", columns)
    return None


def _comparison(op: str, left: Expr, right: Expr, columns: _Columns) -> Truth | None:
    """``left op right`` for a column and a literal (either side), or two columns of one type."""
    if isinstance(left, Literal) and isinstance(right, Column):
        op, left, right = _MIRRORED[op], right, left
    if not isinstance(left, Column):
        return None
    compare, position = _COMPARE[op], columns.position(left)
    if position is None:
        return None
    if isinstance(right, Literal):
        value = columns.scalar(position, right)
        return None if value is None else lambda casts: compare(casts[position], value)
    other = columns.position(right) if isinstance(right, Column) else None
    if other is None or columns.table.columns[other].type != columns.table.columns[position].type:
        return None
    return lambda casts: compare(casts[position], casts[other])


def _membership(subject: Column, members: Sequence[Expr], negated: bool, columns: _Columns) -> Truth | None:
    """``subject [NOT] IN (literals)``: true on a match; else NULL when the subject or a member is NULL."""
    position = columns.position(subject)
    if position is None or not all(isinstance(member, Literal) for member in members):
        return None
    known = [columns.scalar(position, member) for member in members if member.value is not None]
    if any(value is None for value in known):
        return None
    value_set = pa.array([value.as_py() for value in known], arrow_type(columns.table.columns[position].type))
    null_member, unknown_value = len(known) < len(members), pa.scalar(None, pa.bool_())

    def member_of(casts: CastColumns) -> pa.Array | pa.ChunkedArray:
        column = casts[position]
        found = pc.is_in(column, value_set=value_set)  # False at a NULL subject: the set holds no NULL
        unknown = pc.or_(pc.is_null(column), pc.invert(found)) if null_member else pc.is_null(column)
        truth = pc.if_else(unknown, unknown_value, found)
        return pc.invert(truth) if negated else truth

    return member_of


class _Columns:
    """The columns a selection reads: where each sits in the row (``layout``, catalog positions) and,
    for a literal compared with one, that literal in the column's Arrow type."""

    def __init__(self, table: Table, layout):
        self.table, self.layout = table, layout

    def position(self, column: Column) -> int | None:
        """The column's catalog position when its type is translated; None otherwise (or not a column
        of the row: an outer reference)."""
        position = self.layout.get(column)
        if position is None or position >= len(self.table.columns):
            return None
        column_type = self.table.columns[position].type
        translated = column_type in (types.INT, types.BIGINT, types.DATE, types.STRING)
        return position if translated or isinstance(column_type, types.DecimalType) else None

    def scalar(self, position: int, literal: Literal) -> pa.Scalar | None:
        """``literal`` as a value of the column at ``position``, when it is one exactly and Python would
        compare the two as Arrow does (an int with an int, a DECIMAL with a DECIMAL or an int, a date
        with a date, a string with a string); None otherwise, and for NULL."""
        value, column_type = literal.value, self.table.columns[position].type
        if isinstance(column_type, types.DecimalType):
            fits = type(value) is int or isinstance(value, decimal.Decimal) and value.is_finite()
        else:
            fits = type(value) is {types.INT: int, types.BIGINT: int, types.DATE: datetime.date,
                                   types.STRING: str}[column_type]
        if not fits:
            return None
        try:
            scalar = pa.scalar(value, arrow_type(column_type))
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
            return None
        return scalar if scalar.as_py() == value else None
