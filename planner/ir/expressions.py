"""Scalar expressions of logical plans: frozen values, compared by structure.

One generic ``Call(op, args)`` node carries every operator and function (arithmetic, comparison,
boolean logic, LIKE, IN lists, CASE, EXTRACT, SUBSTRING, CAST), so rules match on ``op`` strings and
new functions need no new class. Subqueries are expressions holding a logical plan.

Operator names (``Call.op``):
  arithmetic ``+ - * / neg``; comparison ``= <> < <= > >=``; logic ``and or not``;
  ``like``, ``not like``, ``in`` (args: operand, *values), ``not in``, ``between`` (x, lo, hi),
  ``is null``, ``is not null``, ``case`` (when1, then1, ..., [else]), ``extract_year`` etc.
  (``extract_<unit>``), ``cast`` (to ``dtype``), ``date_diff`` (date - date, in days), ``div``
  (integral division), ``%``; and every scalar function of the registry (planner/ir/functions) by
  its Spark name: ``substring``, ``coalesce``, ``greatest``, ``upper``, ``round``, ``rlike``...

Types: the SQL front end (planner/sql/typing.py) types every expression the way Spark's analyzer
does and inserts its implicit casts, so ``dtype`` is the Spark type of the value. ``dtype`` is not
part of equality (a rule's pattern or a plan parsed from the notation, which carries no types,
still matches); ``transform`` keeps it. An expression built without types (the plan notation,
rule tests) evaluates with Python's semantics on the values it meets.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import attrs

from catalog.types import BOOLEAN, DataType, to_type

if TYPE_CHECKING:
    from planner.ir.logical import LogicalPlan

#: The comparisons whose passing values form a range of sorted values (``<>`` does not): what an
#: index or a join-select can answer (operators/structures/aggregate_index.py holds their functions).
RANGE_COMPARISONS = ("=", "<", "<=", ">", ">=")
FLIPPED = {"=": "=", "<>": "<>", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


@attrs.frozen
class Column:
    """A column reference; ``table`` is the alias of the relation it comes from (None if unresolved)."""

    table: str | None
    name: str
    dtype: DataType | None = attrs.field(default=None, eq=False, repr=False)

    def __str__(self) -> str:
        return f"{self.table}.{self.name}" if self.table else self.name


@attrs.frozen
class Literal:
    """A constant of Spark type ``type`` (a name is parsed: ``Literal(1, "int")``). DECIMAL values
    are ``decimal.Decimal``; an interval's value is ``(n, unit)``."""

    value: object
    type: DataType = attrs.field(converter=to_type)

    @property
    def dtype(self) -> DataType:
        return self.type


@attrs.frozen
class Call:
    op: str
    args: tuple[Expr, ...]
    dtype: DataType | None = attrs.field(default=None, eq=False, repr=False)


@attrs.frozen
class AggregateCall:
    """``func`` is sum, count, avg, min, max, max_by, min_by, one of Spark's variance family (stddev,
    stddev_samp, stddev_pop, std, variance, var_samp, var_pop) or exact percentiles (median,
    percentile, percentile_cont, percentile_disc); ``arg`` None means ``count(*)``.

    ``further_args`` are the arguments after ``arg``: max_by/min_by's ordering (``max_by(x, y)`` is
    ``arg`` x, ``further_args`` (y,)) and the other columns of ``count(DISTINCT a, b, ...)``.
    ``parameters`` are an aggregate's constant arguments: a percentile's (fraction, descending order).
    """

    func: str
    arg: Expr | None
    distinct: bool = False
    dtype: DataType | None = attrs.field(default=None, eq=False, repr=False)
    further_args: tuple[Expr, ...] = ()
    parameters: tuple = ()


@attrs.frozen
class Subquery:
    """``kind`` is scalar, exists or in; ``operand`` is the left side of IN; ``negated`` for NOT."""

    kind: str
    plan: LogicalPlan
    operand: Expr | None = None
    negated: bool = False
    dtype: DataType | None = attrs.field(default=None, eq=False, repr=False)


Expr = Column | Literal | Call | AggregateCall | Subquery


def children(expr: Expr) -> tuple[Expr, ...]:
    match expr:
        case Call(args=args):
            return args
        case AggregateCall(arg=arg, further_args=further) if arg is not None:
            return (arg, *further)
        case Subquery(operand=operand) if operand is not None:
            return (operand,)
    return ()


def walk(expr: Expr) -> Iterator[Expr]:
    """Pre-order traversal; does not descend into subquery plans."""
    yield expr
    for child in children(expr):
        yield from walk(child)


def columns(expr: Expr) -> set[Column]:
    return {e for e in walk(expr) if isinstance(e, Column)}


def deep_columns(expr: Expr) -> set[Column]:
    """Every column ``expr`` mentions, including inside subquery plans (outer references too)."""
    found = set()
    for e in walk(expr):
        if isinstance(e, Column):
            found.add(e)
        elif isinstance(e, Subquery):
            for node in e.plan.walk():
                for inner in node.expressions():
                    found |= deep_columns(inner)
    return found


def transform(expr: Expr, fn: Callable[[Expr], Expr]) -> Expr:
    """Rebuild bottom-up applying ``fn``; returns the same object when nothing changed."""
    match expr:
        case Call(args=args):
            new_args = tuple(transform(a, fn) for a in args)
            if any(n is not o for n, o in zip(new_args, args, strict=True)):
                expr = attrs.evolve(expr, args=new_args)
        case AggregateCall(arg=arg, further_args=further) if arg is not None:
            new_arg = transform(arg, fn)
            new_further = tuple(transform(a, fn) for a in further)
            if new_arg is not arg or any(n is not o for n, o in zip(new_further, further, strict=True)):
                expr = attrs.evolve(expr, arg=new_arg, further_args=new_further)
        case Subquery(operand=operand) if operand is not None:
            new_operand = transform(operand, fn)
            if new_operand is not operand:
                expr = attrs.evolve(expr, operand=new_operand)
    return fn(expr)


#: The calls whose value is a truth value, whatever their arguments.
PREDICATES = frozenset(
    {"=", "<>", "<", "<=", ">", ">=", "and", "or", "not", "like", "not like", "in", "not in", "between",
     "is null", "is not null"}
)


def cast_op(target: DataType) -> str:
    """The ``Call.op`` of a cast: the target type is part of the operator, so casts to two types differ."""
    return f"cast as {target}"


def cast_target(op: str) -> DataType | None:
    """The target type of a cast operator, None for any other operator."""
    return to_type(op.removeprefix("cast as ")) if op.startswith("cast as ") else None


def type_of(expr: Expr) -> DataType | None:
    """The Spark type of ``expr`` as the front end resolved it; None for an untyped expression."""
    if isinstance(expr, Call) and expr.dtype is None and expr.op in PREDICATES:
        return BOOLEAN
    return expr.dtype


def conjuncts(expr: Expr | None) -> list[Expr]:
    """Split a predicate on AND: ``a AND (b AND c)`` → [a, b, c]."""
    if expr is None:
        return []
    if isinstance(expr, Call) and expr.op == "and":
        return [c for arg in expr.args for c in conjuncts(arg)]
    return [expr]


def conjunction(parts: list[Expr]) -> Expr | None:
    """The AND of ``parts`` (left-deep), None for the empty list."""
    if not parts:
        return None
    result = parts[0]
    for part in parts[1:]:
        result = Call("and", (result, part))
    return result


def contains_aggregate(expr: Expr) -> bool:
    return any(isinstance(e, AggregateCall) for e in walk(expr))


def contains_subquery(expr: Expr) -> bool:
    return any(isinstance(e, Subquery) for e in walk(expr))
