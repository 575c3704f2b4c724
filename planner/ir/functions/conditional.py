"""Conditional functions: coalesce (nvl, ifnull), greatest, least, and if / nvl2 / nullif, which
Spark defines as CASE expressions (RuntimeReplaceable) and so are rewritten into ``case``."""

from __future__ import annotations

import math
from collections.abc import Callable

from catalog import types
from catalog.types import BOOLEAN, DOUBLE, INT, NULL, STRING
from planner.ir.expressions import Call, Literal, cast_op, type_of
from planner.ir.functions.registry import Arg, ArgumentTypeError, Function, Signature, common, plain


def _merged(name: str, string_promotion: bool = True) -> Callable[[tuple[Arg, ...]], Signature]:
    """Every argument cast to their common type, which is the result's (a value becomes the result)."""

    def typing(args: tuple[Arg, ...]) -> Signature:
        target = common(args, f"{name} (arguments of one common type)", string_promotion)
        return Signature((target,) * len(args), target)

    return typing


def _coalesce(*thunks: Callable[[], object]) -> object:
    for thunk in thunks:
        value = thunk()
        if value is not None:
            return value
    return None


def _extreme(pick: Callable) -> Callable[..., object]:
    """greatest / least: NULLs skipped, NULL only when every argument is NULL (Spark's semantics);
    a NaN is operators.doubles' NAN by then, which orders above every double as Spark orders it."""

    def evaluate(*values: object) -> object:
        present = [v for v in values if v is not None]
        return pick(present) if present else None

    return evaluate


def _if(call, condition, then, otherwise):
    if type_of(condition) == NULL:  # If coerces a NULL condition to a boolean (CASE WHEN NULL is refused)
        condition = Literal(None, BOOLEAN)
    return call("case", condition, then, otherwise)


def _nvl2(call, value, then, otherwise):
    return call("case", call("is not null", value), then, otherwise)


def _nullif(call, value, other):
    """Spark's NullIf is ``If(EqualTo(a, b), NULL of a's type, a)``; a constant that cannot be cast
    to ``a``'s type fails only when a row compares it (Spark does not fold a failing cast)."""
    target = types.common_type(type_of(value) or NULL, type_of(other) or NULL)
    if isinstance(other, Literal) and other.type == STRING and target not in (None, STRING):
        other = Call(cast_op(target), (other,), target)
    return call("case", call("=", value, other), Literal(None, NULL), value)


def _equal_null(call, left, right):
    """Spark's EqualNullSafe (``a <=> b``): true when both are NULL, false when one is, else a = b; both
    sides are first cast to their common type, as ``=`` casts them (a failing cast fails, as in Spark)."""
    equal = call("=", left, right)
    left, right = equal.args
    return call("case", call("is null", left), call("is null", right), call("is null", right), Literal(False, BOOLEAN),
                equal)


def _nanvl(first: Callable[[], object], second: Callable[[], object]) -> object:
    """Spark's NaNvl: NULL for a NULL first argument, the second only for a NaN (computed only then)."""
    value = first()
    return value if value is None or not math.isnan(value) else second()


def _doubles(name: str, count: int, result: types.DataType) -> Callable[[tuple[Arg, ...]], Signature]:
    def typing(args: tuple[Arg, ...]) -> Signature:
        for arg in args:
            if not (types.is_numeric(arg.type) or arg.type in (NULL, STRING)):
                raise ArgumentTypeError(f"{name}'s arguments (doubles)")
        return Signature((DOUBLE,) * count, result)
    return typing


FUNCTIONS = (
    Function(
        "coalesce", "conditional", "the first argument that is not NULL; later arguments are not computed",
        (1, None), "any of one common type", "the common type", typing=_merged("coalesce"),
        evaluator=lambda bound: _coalesce, aliases=("nvl", "ifnull"), nulls="lazy",
    ),
    Function(
        "greatest", "conditional", "the largest argument, skipping NULLs (NaN is the largest double)",
        (2, None), "any of one common type", "the common type", typing=_merged("greatest", string_promotion=False),
        evaluator=plain(_extreme(max)), nulls="aware",
    ),
    Function(
        "least", "conditional", "the smallest argument, skipping NULLs",
        (2, None), "any of one common type", "the common type", typing=_merged("least", string_promotion=False),
        evaluator=plain(_extreme(min)), nulls="aware",
    ),
    Function(
        "if", "conditional", "CASE WHEN cond THEN a ELSE b END", (3, 3), "boolean, then two of one common type",
        "the common type", rewrite=_if,
    ),
    Function(
        "nvl2", "conditional", "b when a is not NULL, else c", (3, 3), "any, then two of one common type",
        "the common type", rewrite=_nvl2,
    ),
    Function("isnull", "conditional", "x IS NULL", (1, 1), "any", "boolean",
             rewrite=lambda call, value: call("is null", value)),
    Function("isnotnull", "conditional", "x IS NOT NULL", (1, 1), "any", "boolean",
             rewrite=lambda call, value: call("is not null", value)),
    Function("equal_null", "conditional", "a = b, with NULL equal to NULL and not to a value: never NULL (also "
             "a <=> b; a IS [NOT] DISTINCT FROM b)", (2, 2), "two comparable values", "boolean", rewrite=_equal_null),
    Function("isnan", "conditional", "whether x is NaN; false for NULL", (1, 1), "double", "boolean",
             typing=_doubles("isnan", 1, BOOLEAN), evaluator=plain(lambda value: value is not None and math.isnan(value)),
             nulls="aware"),
    Function("nanvl", "conditional", "b when a is NaN, else a (NULL for a NULL a)", (2, 2), "double, double", "double",
             typing=_doubles("nanvl", 2, DOUBLE), evaluator=plain(_nanvl), nulls="lazy"),
    Function("zeroifnull", "conditional", "coalesce(x, 0)", (1, 1), "number", "the common type of x and int",
             rewrite=lambda call, value: call("coalesce", value, Literal(0, INT))),
    Function("nullifzero", "conditional", "nullif(x, 0)", (1, 1), "number", "the type of x",
             rewrite=lambda call, value: _nullif(call, value, Literal(0, INT))),
    Function(
        "nullif", "conditional", "NULL when a = b, else a", (2, 2), "two comparable values", "the type of a",
        rewrite=_nullif,
    ),
)
