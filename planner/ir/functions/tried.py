"""Spark's ``try_`` arithmetic: the operator in Spark's TRY eval mode, NULL where ANSI mode fails.

``try_add(a, b)`` is ``a + b`` typed and cast exactly as ``+`` (a date plus days too), except that the
operator's own run-time error (ARITHMETIC_OVERFLOW, DIVIDE_BY_ZERO, a DATETIME_OVERFLOW) gives NULL.
An error computing an argument is not the operator's and still fails: ``try_add(1 / 0, 1)`` raises in
Spark too. Each is written as the internal ``try`` call around the operator (planner/sql/typing.py
types it, operators/lowering/expr_eval.py evaluates it), the same node TRY_CAST is.
"""

from __future__ import annotations

from planner.ir.functions.registry import Function


def _tried(operator: str):
    return lambda call, left, right: call("try", call(operator, left, right))


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
