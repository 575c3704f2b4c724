"""Spark's ``try_`` arithmetic: the operator in Spark's TRY eval mode, NULL where ANSI mode fails.

``try_add(a, b)`` is ``a + b`` typed and cast exactly as ``+`` (a date plus days too), except that the
operator's own run-time error (ARITHMETIC_OVERFLOW, DIVIDE_BY_ZERO, a DATETIME_OVERFLOW) gives NULL.
Over two numbers an error computing an argument is not the operator's and still fails: ``try_add(1 / 0,
1)`` raises in Spark too; over other types Spark wraps the whole call (``_tried``). Each is written as the internal ``try`` call around the operator (planner/sql/typing.py
types it, operators/lowering/expr_eval.py evaluates it), the same node TRY_CAST is, or ``try_eval``.
"""

from __future__ import annotations

from catalog import types
from planner.ir.expressions import type_of
from planner.ir.functions.registry import Function


def _tried(operator: str):
    """Spark's replacement: the operator in TRY mode over two numbers; over anything else (a string read as a
    number, a date, a NULL) ``TryEval`` of the ANSI operator, which makes any error inside it NULL, the
    arguments' and their implicit casts' included (``try_add('x', 1)`` is NULL, ``try_add(1 / 0, 1)`` fails)."""
    def rewrite(call, left, right):
        numbers = types.is_numeric(type_of(left)) and types.is_numeric(type_of(right))
        return call("try" if numbers else "try_eval", call(operator, left, right))
    return rewrite


FUNCTIONS = tuple(
    Function(name, "numeric", f"a {operator} b, NULL where it fails ({failure})", (2, 2), "two numbers (a date and days for "
             "add/subtract)" if operator in "+-" else "two numbers", f"as a {operator} b", rewrite=_tried(operator))
    for name, operator, failure in (
        ("try_add", "+", "an overflow"),
        ("try_subtract", "-", "an overflow"),
        ("try_multiply", "*", "an overflow"),
        ("try_divide", "/", "a zero divisor or an overflow"),
        ("try_mod", "%", "a zero divisor"),
    )
)
