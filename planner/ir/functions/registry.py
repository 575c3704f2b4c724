"""What one Spark scalar function is to spark-ivm: its names, typing rule, evaluator and doc.

A ``Function`` is declared once (in a category module beside this one) and read by every layer:
the SQL front end finds it by the name the user wrote, typing (planner/sql/typing.py) applies its
``typing`` rule, the lowering takes it as an operator of the expression compilers
(operators/lowering/expr_operators.py: its ``evaluator``, of the kind ``nulls`` says), and the
supported-functions table (planner/ir/functions/table.py) prints its doc.

This module sits in ``planner/ir``, below the SQL front end, so a typing rule speaks only of types:
it sees each argument's type (and its value when the argument is a constant) and answers with the
type each argument is cast to and the result type, or raises ``ArgumentTypeError`` naming what
Spark's analyzer refuses; the front end turns that into its one-line refusal naming the clause.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal as Kind

import attrs

from catalog import types
from catalog.types import DOUBLE, NULL, STRING, DataType, DecimalType
from planner.ir.expressions import Expr, Literal, type_of


class ArgumentTypeError(ValueError):
    """The arguments' types are ones Spark's analyzer refuses (DATATYPE_MISMATCH); the message says
    what the function needs, e.g. ``round's scale (an integer constant)``."""


class UnsupportedArgumentError(ValueError):
    """An argument Spark accepts that spark-ivm cannot evaluate exactly as Spark does (a datetime
    pattern it cannot read as Spark does, a regular expression whose meaning differs in Python):
    refused with the reason, as unsupported SQL, not as Spark's type error."""


#: The value of an argument that is not a constant.
NOT_CONSTANT = object()


@attrs.frozen
class Arg:
    """One argument as a typing rule or an evaluator factory sees it: its Spark type (None in an
    untyped plan) and, for a constant, its value."""

    type: DataType | None
    value: object = NOT_CONSTANT

    @property
    def constant(self) -> bool:
        return self.value is not NOT_CONSTANT


@attrs.frozen
class Signature:
    """A typing rule's answer: the type each argument is cast to (None: left as it is) and the
    result type."""

    params: tuple[DataType | None, ...]
    result: DataType


@attrs.frozen
class Bound:
    """What an evaluator is made for: the arguments after their casts, and the result type (None in
    an untyped plan, which evaluates with Python's semantics on the values it meets)."""

    args: tuple[Arg, ...]
    result: DataType | None


Typing = Callable[[tuple[Arg, ...]], Signature]
Evaluator = Callable[[Bound], Callable[..., object]]


@attrs.frozen
class Function:
    """One Spark scalar function.

    ``nulls`` says what the evaluator receives: ``strict`` — only non-NULL values (a NULL argument
    makes the result NULL without calling it); ``aware`` — every value, NULL as None; ``lazy`` — one
    zero-argument callable per argument, so an argument that is never needed is never computed
    (``coalesce(x, 1 / 0)`` does not fail when x is not NULL, as in Spark).

    ``rewrite`` instead of ``typing``/``evaluator``: the function is another expression (Spark's
    RuntimeReplaceable: ``nvl2(a, b, c)`` is ``CASE WHEN a IS NOT NULL THEN b ELSE c END``); it gets
    ``call`` (the front end's typed call builder: ``call(op, *args)``) and the argument expressions.

    ``refusal``: the function is known and refused for this reason (a non-deterministic function
    cannot be maintained).
    """

    name: str
    category: str
    doc: str
    arity: tuple[int, int | None]
    params: str
    returns: str
    typing: Typing | None = None
    evaluator: Evaluator | None = None
    aliases: tuple[str, ...] = ()
    nulls: Kind["strict", "aware", "lazy"] = "strict"
    rewrite: Callable[..., object] | None = None
    refusal: str | None = None

    @property
    def deterministic(self) -> bool:
        return self.refusal is None

    def check_arity(self, count: int) -> None:
        """Spark's WRONG_NUM_ARGS, as a refusal naming the function."""
        low, high = self.arity
        if count < low or (high is not None and count > high):
            expected = str(low) if low == high else f"at least {low}" if high is None else f"{low} to {high}"
            raise ArgumentCountError(
                f"{self.name} takes {expected} argument{'s' if expected != '1' else ''}, not {count} "
                "(Spark rejects it: WRONG_NUM_ARGS)"
            )


class ArgumentCountError(ValueError):
    """A call with a number of arguments the function does not take."""


def arguments(exprs: tuple[Expr, ...]) -> tuple[Arg, ...]:
    """What a typing rule or an evaluator factory sees of ``exprs``: their types, constants' values."""
    return tuple(Arg(type_of(e), e.value if isinstance(e, Literal) else NOT_CONSTANT) for e in exprs)


def plain(function: Callable[..., object]) -> Evaluator:
    """The evaluator factory of a function whose evaluation does not depend on the types."""
    return lambda bound: function


# --- typing building blocks --------------------------------------------------------------------


def is_null(arg: Arg) -> bool:
    return arg.type == NULL


def string_param(arg: Arg, what: str) -> DataType:
    """A string parameter: Spark reads any atomic value as its text (a NULL stays NULL)."""
    if arg.type == NULL or arg.type == STRING or arg.type in types.INTEGRAL or arg.type in (DOUBLE, types.BOOLEAN, types.DATE) or isinstance(arg.type, DecimalType):
        return STRING
    raise ArgumentTypeError(what)


def numeric_type(arg: Arg, what: str) -> DataType:
    """A numeric parameter as Spark's ANSI coercion reads it: a number as it is, a string as a
    double, a NULL as a double; anything else is refused naming ``what``."""
    if types.is_numeric(arg.type):
        return arg.type
    if arg.type in (STRING, NULL):
        return DOUBLE
    raise ArgumentTypeError(what)


def integer_param(arg: Arg, what: str) -> DataType:
    """An INT parameter (a position, a length): any number (a decimal or double is truncated, a
    bigint out of the int range fails), a NULL, or a string read as an int, as Spark's ANSI
    coercion casts them."""
    if types.is_numeric(arg.type) or arg.type in (NULL, STRING):
        return types.INT
    raise ArgumentTypeError(what)


def common(args: tuple[Arg, ...], what: str, string_promotion: bool = True) -> DataType:
    """The one type ``args`` are merged as (``findWiderCommonType``); refused when there is none.
    Without ``string_promotion`` (``findWiderTypeWithoutStringPromotion``, greatest and least) a
    string does not meet another type."""
    kinds = {a.type for a in args} - {NULL}
    if not string_promotion and STRING in kinds and len(kinds) > 1:
        raise ArgumentTypeError(what)
    result: DataType = NULL
    for arg in args:
        widened = types.common_type(result, arg.type)
        if widened is None:
            raise ArgumentTypeError(what)
        result = widened
    return result
