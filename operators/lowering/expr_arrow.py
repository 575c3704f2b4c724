"""A selection told on a table's Arrow columns: the Arrow compute one of the three expression compilers.

The stream reader makes a row's other columns only where some route's selection may keep it
(operators/lowering/route_masks.py). This module translates a selection over one table's row to
Arrow compute on the chunk's cast columns, walking the expression and asking
operators/lowering/expr_operators.py what each call is. It may only ever keep *more* rows than the
compiled selection (expr_eval.py: SQL's three-valued logic, a row kept only where the selection is
exactly true), never fewer: a row wrongly left out would have its values None where a route reads
them. So each part is either translated exactly, as Arrow's Kleene logic, or not at all:

- an entry's Arrow kernel (comparisons, NOT, IS [NOT] NULL) over columns of one translated type
  (INT, BIGINT, DECIMAL, DATE, STRING) and literals that convert to that type exactly (``0.055``
  against a DECIMAL(15,2) column does not), or over translated predicates; Arrow's kernels
  propagate NULL as the strict operators do;
- AND and OR as ``and_kleene``/``or_kleene``, [NOT] IN a list of literals, an expansion (BETWEEN) as
  what it expands to;
- a conjunct that is not translated is taken as true for every row (the conjunction of the others
  keeps a superset); anything else that is not makes the selection untold (None: every row kept).
"""

from __future__ import annotations

import datetime
import decimal
from collections.abc import Callable, Mapping, Sequence
from functools import reduce

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from catalog import types
from catalog.schema import Table
from operators.lowering.expr_operators import Aware, Expansion, Kleene, Membership, Strict, operator_of
from operators.runtime.column_types import arrow_type
from operators.runtime.row_masks import CastColumns
from planner.ir.expressions import Call, Column, Expr, Literal

#: a selection or part of one over a chunk's cast columns: its three-valued value per row (NULL: unknown)
Truth = Callable[[CastColumns], pa.Array | pa.ChunkedArray]
#: a superset of the rows a selection keeps, as a boolean per row
Possible = Callable[[CastColumns], np.ndarray]

_TRANSLATED = (types.INT, types.BIGINT, types.DATE, types.STRING)
_PYTHON_TYPES = {types.INT: int, types.BIGINT: int, types.DATE: datetime.date, types.STRING: str}


def possible_rows(expr: Expr, table: Table, layout: Mapping[Column, int]) -> Possible | None:
    """A superset of the rows of ``table`` (laid out as ``layout``, catalog positions) where ``expr``
    is true; None when the selection cannot be told (any row may be kept)."""
    return _possible(expr, _Columns(table, layout))


def _possible(expr: Expr, columns: _Columns) -> Possible | None:
    entry = operator_of(expr) if isinstance(expr, Call) else None
    match entry:
        case Kleene(dominant=False):
            # p ∧ q ⇒ p: a conjunct left out only widens the superset
            parts = [part for part in (_possible(arg, columns) for arg in expr.args) if part is not None]
            if not parts:
                return None
            return parts[0] if len(parts) == 1 else lambda casts: np.logical_and.reduce([part(casts) for part in parts])
        case Kleene(dominant=True):
            parts = [_possible(arg, columns) for arg in expr.args]
            if any(part is None for part in parts):
                return None
            return lambda casts: np.logical_or.reduce([part(casts) for part in parts])
        case Expansion(expand=expand):
            return _possible(expand(expr), columns)
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
    entry = operator_of(expr) if isinstance(expr, Call) else None
    match entry:
        case Kleene(dominant=dominant):
            parts = [_truth(arg, columns) for arg in expr.args]
            if any(part is None for part in parts):
                return None
            combine = pc.or_kleene if dominant else pc.and_kleene
            return lambda casts: reduce(combine, (part(casts) for part in parts))
        case Strict(predicate=True, arrow=str(kernel)) | Aware(predicate=True, arrow=str(kernel)):
            operands = expr.args[:entry.operands(expr)] if isinstance(entry, Strict) else expr.args
            if entry.arrow_operands == "truths":
                return _over_truths(getattr(pc, kernel), operands, columns)
            return _over_values(getattr(pc, kernel), operands, columns)
        case Expansion(expand=expand):
            return _truth(expand(expr), columns)
        case Membership(negated=negated) if isinstance(expr.args[0], Column):
            return _membership(expr.args[0], expr.args[1:], negated, columns)
    return None


def _over_truths(kernel: Callable, operands: Sequence[Expr], columns: _Columns) -> Truth | None:
    parts = [_truth(operand, columns) for operand in operands]
    if any(part is None for part in parts):
        return None
    return lambda casts: kernel(*(part(casts) for part in parts))


def _over_values(kernel: Callable, operands: Sequence[Expr], columns: _Columns) -> Truth | None:
    """``kernel`` over columns of one translated type and literals exactly of that type."""
    positions = [columns.position(o) if isinstance(o, Column) else None for o in operands]
    if any(p is None and not isinstance(o, Literal) for p, o in zip(positions, operands, strict=True)):
        return None
    known = {columns.table.columns[p].type for p in positions if p is not None}
    if len(known) != 1:  # no column, or columns of two types
        return None
    column = next(p for p in positions if p is not None)
    args = [columns.scalar(column, o) if p is None else p for p, o in zip(positions, operands, strict=True)]
    if any(a is None for a in args):  # a literal that is not exactly a value of the columns' type
        return None
    return lambda casts: kernel(*(casts[a] if isinstance(a, int) else a for a in args))


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

    def __init__(self, table: Table, layout: Mapping[Column, int]):
        self.table, self.layout = table, layout

    def position(self, column: Column) -> int | None:
        """The column's catalog position when its type is translated; None otherwise (or not a column
        of the row: an outer reference)."""
        position = self.layout.get(column)
        if position is None or position >= len(self.table.columns):
            return None
        column_type = self.table.columns[position].type
        return position if column_type in _TRANSLATED or isinstance(column_type, types.DecimalType) else None

    def scalar(self, position: int, literal: Literal) -> pa.Scalar | None:
        """``literal`` as a value of the column at ``position``, when it is one exactly and Python would
        compare the two as Arrow does (an int with an int, a DECIMAL with a DECIMAL or an int, a date
        with a date, a string with a string); None otherwise, and for NULL."""
        value, column_type = literal.value, self.table.columns[position].type
        if isinstance(column_type, types.DecimalType):
            fits = type(value) is int or isinstance(value, decimal.Decimal) and value.is_finite()
        else:
            fits = type(value) is _PYTHON_TYPES[column_type]
        if not fits:
            return None
        try:
            scalar = pa.scalar(value, arrow_type(column_type))
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
            return None
        return scalar if scalar.as_py() == value else None
