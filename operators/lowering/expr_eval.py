"""Compile scalar expressions into Python closures over row tuples, with Spark's semantics.

Stages evaluate selections, projections and aggregate arguments once per row, so expressions are
compiled once at lowering time into nested closures (no tree walk per row). This is the evaluating
one of the three expression compilers: each operator is an entry of operators/lowering/
expr_operators.py, whose kind says how NULL flows through it and which this module turns into a
closure once per kind. NULL is ``None``: it propagates through strict operators, AND/OR/IN use
three-valued logic, and a predicate keeps a row only when it is exactly true. The front end typed
every expression and inserted Spark's implicit casts (planner/sql/typing.py); what a type decides at
run time (decimal rounding, integer overflow, division by zero, casts) comes from
planner/ir/values.py, the one implementation of Spark's value semantics, which raises
``SqlRuntimeError`` where Spark raises.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from functools import partial
from types import FunctionType

import attrs

from operators.doubles import canonical
from operators.lowering.expr_operators import (
    Aware,
    Case,
    Expansion,
    ExpressionError,
    Kleene,
    Lazy,
    Membership,
    Operator,
    Strict,
    Tried,
    operator_of,
)
from operators.zset import Compiled, Row
from planner.ir import values
from planner.ir.expressions import Call, Column, Expr, Literal, Subquery

__all__ = ["ExpressionError", "ExpressionSource", "compile_expr", "compile_predicate", "source_of"]


def _strict(fn: Callable, *args: Compiled) -> Compiled:
    """Apply ``fn`` to the evaluated args; NULL if any arg is NULL."""
    if len(args) == 1:
        (a,) = args

        def unary(row):
            x = a(row)
            return None if x is None else fn(x)

        return unary
    if len(args) == 2:
        a, b = args

        def binary(row):
            x = a(row)
            if x is None:
                return None
            y = b(row)
            return None if y is None else fn(x, y)

        return binary

    def nary(row):
        values = [arg(row) for arg in args]
        return None if any(v is None for v in values) else fn(*values)

    return nary


def compile_expr(expr: Expr, layout: Mapping[Column, int]) -> Compiled:
    """A closure computing ``expr`` over rows whose columns sit at ``layout`` positions.

    The closure carries ``expr`` and ``layout`` (``source_of``), so the local runner's plan compiler
    (operators/lowering/codegen.py) can write the same expression as inline Python instead of calling it.
    """
    return _with_source(_compile(expr, layout), expr, layout, predicate=False)


@attrs.frozen
class ExpressionSource:
    """What a compiled closure computes: ``expr`` over rows laid out as ``layout``; ``predicate``: the
    closure is ``compile_predicate``'s, true exactly when ``expr`` is true."""

    expr: Expr
    layout: Mapping[Column, int] = attrs.field(eq=False)
    predicate: bool


def source_of(function: Callable) -> ExpressionSource | None:
    """The expression a closure made by ``compile_expr``/``compile_predicate`` computes, else None."""
    return getattr(function, "ivm_source", None)


def _with_source(function: Compiled, expr: Expr, layout: Mapping[Column, int], predicate: bool) -> Compiled:
    if isinstance(function, FunctionType):  # an itemgetter (a bare column) takes no attribute: it is not needed
        function.ivm_source = ExpressionSource(expr, dict(layout), predicate)
    return function


def _compile(expr: Expr, layout: Mapping[Column, int]) -> Compiled:
    match expr:
        case Column():
            if expr not in layout:
                known = ", ".join(str(c) for c in layout)
                raise ExpressionError(f"column {expr} is not available here (available: {known})")
            return operator.itemgetter(layout[expr])
        case Literal(value=(amount, unit), type=type_) if str(type_).startswith("interval"):
            raise ExpressionError(f"interval {amount} {unit} is only supported added to or subtracted from a date")
        case Literal(value=value):
            value = canonical(value) if isinstance(value, float) else value
            return lambda row: value
        case Call():
            entry = operator_of(expr)
            if entry is None:
                raise ExpressionError(f"unsupported expression {expr!r}")
            return _closure(entry, expr, layout)
        case Subquery():
            raise ExpressionError("a subquery cannot be evaluated row by row; it must be decorrelated first")
    raise ExpressionError(f"unsupported expression {expr!r}")


def _closure(entry: Operator, call: Call, layout: Mapping[Column, int]) -> Compiled:
    """The closure of ``call``, an operator of kind ``entry`` (expr_operators.py): one case per kind."""
    match entry:
        case Strict(divisor_first=True):
            compute, (dividend, divisor) = entry.value(call), (_compile(a, layout) for a in call.args)
            return _strict(lambda d, n: compute(n, d), divisor, dividend)
        case Strict():
            return _strict(entry.value(call), *(_compile(a, layout) for a in call.args[:entry.operands(call)]))
        case Aware():
            return _aware(entry.value(call), [_compile(a, layout) for a in call.args])
        case Lazy():
            evaluate, args = entry.value(call), [_compile(a, layout) for a in call.args]
            return lambda row: evaluate(*(partial(arg, row) for arg in args))
        case Kleene(dominant=dominant):
            return _three_valued([_compile(a, layout) for a in call.args], dominant)
        case Membership(negated=negated):
            subject, *members = (_compile(a, layout) for a in call.args)
            return _in_list(subject, members, negated)
        case Expansion(expand=expand):
            return _compile(expand(call), layout)
        case Case():
            return _compile_case([_compile(a, layout) for a in call.args])
        case Tried(whole=True):
            return _null_on_error(_compile(call.args[0], layout))
        case Tried():
            return _tried(call.args[0], layout)
    raise ExpressionError(f"unsupported expression {call!r}")


def _aware(evaluate: Callable, args: list[Compiled]) -> Compiled:
    """``evaluate`` of every argument's value, NULL as None."""
    if len(args) == 1:
        (a,) = args
        return lambda row: evaluate(a(row))
    return lambda row: evaluate(*(arg(row) for arg in args))


def _tried(inner: Expr, layout: Mapping[Column, int]) -> Compiled:
    """``try(op(args))`` (TRY_CAST, try_add...): op's own run-time error is NULL, as in Spark's TRY eval
    mode, while an error computing an argument still fails (``try_add(1 / 0, 1)`` raises in Spark too).
    So the operands are all computed outside the ``try`` and op's evaluation over their values inside it."""
    entry = operator_of(inner) if isinstance(inner, Call) else None
    if not isinstance(entry, Strict):
        raise ExpressionError(f"try of {inner!r}: only a strict operator runs in Spark's TRY mode")
    compute = entry.value(inner)
    arguments = [_compile(arg, layout) for arg in inner.args[:entry.operands(inner)]]

    def tried(row):
        operands = [argument(row) for argument in arguments]
        if any(v is None for v in operands):
            return None
        try:
            return compute(*operands)
        except values.SqlRuntimeError:
            return None

    return tried


def _null_on_error(compute: Compiled) -> Compiled:
    """``compute``, NULL where it raises Spark's run-time error (Spark's TryEval)."""
    def tried(row):
        try:
            return compute(row)
        except values.SqlRuntimeError:
            return None

    return tried


def _in_list(subject: Compiled, members: list[Compiled], negate: bool) -> Compiled:
    """``x [NOT] IN (v1, ...)`` in three-valued logic: true on a match; else NULL if x or any member is NULL."""

    def member_of(row):
        x = subject(row)
        if x is None:
            return None
        unknown = False
        for member in members:
            v = member(row)
            if v is None:
                unknown = True
            elif v == x:
                return not negate
        return None if unknown else negate

    return member_of


def _three_valued(parts: list[Compiled], dominant: bool) -> Compiled:
    """AND (dominant False) / OR (dominant True) in SQL's three-valued logic: the dominant value wins,
    else NULL if any part is NULL, else the other value."""

    def evaluate(row):
        result = not dominant
        for part in parts:
            value = part(row)
            if value is dominant:
                return dominant
            if value is None:
                result = None
        return result

    return evaluate


def _compile_case(parts: list[Compiled]) -> Compiled:
    pairs = [(parts[i], parts[i + 1]) for i in range(0, len(parts) - 1, 2)]
    otherwise = parts[-1] if len(parts) % 2 else (lambda row: None)

    def case(row):
        for when, then in pairs:
            if when(row) is True:
                return then(row)
        return otherwise(row)

    return case


def compile_predicate(expr: Expr | None, layout: Mapping[Column, int]) -> Callable[[Row], bool] | None:
    """A row filter keeping rows where ``expr`` is exactly true; None when there is no predicate."""
    if expr is None:
        return None
    inner = _compile(expr, layout)
    return _with_source(lambda row: inner(row) is True, expr, layout, predicate=True)
