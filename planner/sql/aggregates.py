"""Spark's aggregate calls as the IR's few: FILTER, count_if and bool_and/bool_or are definitions.

The IR keeps the aggregates a stage maintains (sum, count, avg, min, max, max_by, min_by); the rest of
Spark's are written over them here, each by a law exact in Spark's semantics, NULLs included:

- ``agg(x) FILTER (WHERE q) = agg(CASE WHEN q THEN x END)``: every aggregate here skips a NULL
  argument, and an aggregate over no values equals one over only NULLs (COUNT 0, the others NULL),
  so a row q does not keep simply contributes nothing. ``COUNT(*)`` counts ``1``; max_by/min_by skip
  a row by its ordering, so the ordering is the argument filtered; DISTINCT is unaffected (NULL is
  no value). Like Spark, the CASE evaluates x only for the rows q keeps.
- ``count_if(p) = COUNT(CASE WHEN p THEN 1 END)`` (Spark's own: ``count(nullif(p, false))``).
- ``count(a, b, ...) = COUNT(CASE WHEN a IS NOT NULL AND b IS NOT NULL ... THEN 1 END)``: Spark counts
  the rows where no argument is NULL; ``count(DISTINCT a, b)`` counts the distinct tuples among them
  (the IR's ``further_args``).
- ``bool_and(p) = CASE WHEN COUNT(p) > 0 THEN count_if(NOT p) = 0 END`` and
  ``bool_or(p) = CASE WHEN COUNT(p) > 0 THEN count_if(p) > 0 END``: NULL when no p is non-NULL, as
  in Spark (which defines them as MIN/MAX over booleans). Written over counts they are ring
  aggregates: O(1) per change with no values kept, where MIN over booleans would keep each group's
  values; DISTINCT does not change them (nor max_by/min_by), so it is dropped.

Why in the front end and not in a rule: these are definitions, not strategies. The IR never holds a
FILTER or a count_if, so no rule, stage or runner needs to know them, and every strategy that takes
COUNT/SUM/MIN/MAX takes them unchanged: a FILTER's CASE over one relation is an argument over one
atom, which the ring aggregate and the GJT's ring payloads take like any other (the F-IVM view tree
lifts only bare columns and products, so there a FILTER falls back to the ring aggregate).

Approximate aggregates are refused: their answer depends on the engine's sketch (and, in Spark, on
the order rows meet it), so no maintained view could equal a recomputation; the exact form is named.
"""

from __future__ import annotations

from catalog.types import BOOLEAN, INT, NULL
from planner.ir.expressions import (
    AggregateCall,
    Expr,
    Literal,
    conjunction,
    contains_aggregate,
    contains_subquery,
    type_of,
)
from planner.ir.notation import print_expr
from planner.sql.errors import UnsupportedSqlError
from planner.sql.typing import typed_aggregate, typed_call

#: Spark's other names of the aggregates written below.
SYNONYMS = {"every": "bool_and", "some": "bool_or", "any": "bool_or"}
#: Aggregates whose value DISTINCT does not change: the flag is dropped.
_IDEMPOTENT = ("bool_and", "bool_or", "max_by", "min_by")
_TWO_ARGUMENTS = ("max_by", "min_by")
_BOOLEAN_ARGUMENT = ("count_if", "bool_and", "bool_or")


def aggregate_call(func: str, args: tuple[Expr | None, ...], distinct: bool, condition: Expr | None,
                   clause: str, written: str, parameters: tuple = ()) -> Expr:
    """``func(args) FILTER (WHERE condition)`` in the IR's aggregates (the module's laws); ``args``
    are converted, ``(None,)`` for ``*``; ``written`` is the call as the user wrote it, for errors;
    ``parameters`` a percentile's constant (fraction, descending order)."""
    for arg in (*args, condition):
        if arg is not None and contains_aggregate(arg):
            raise UnsupportedSqlError(f"nested aggregate functions in {clause} are not supported: {written}")
    _check_arity(func, args, distinct, clause, written)
    if condition is not None:
        args = _filtered(func, args, _filter_condition(condition, clause, written), clause)
    if func in _IDEMPOTENT:
        distinct = False
    if func in _BOOLEAN_ARGUMENT:
        return _over_counts(func, _boolean(func, args[0], clause), distinct, clause)
    if func == "count" and len(args) > 1 and not distinct:
        return typed_aggregate("count", _when(_all_present(args, clause), Literal(1, INT), clause), False, clause)
    return typed_aggregate(func, args[0], distinct, clause, args[1:], parameters)


def _check_arity(func: str, args: tuple[Expr | None, ...], distinct: bool, clause: str, written: str) -> None:
    wanted = 2 if func in _TWO_ARGUMENTS else None if func == "count" else 1
    if None in args and (func != "count" or distinct or len(args) > 1):
        raise UnsupportedSqlError(f"{written} in {clause} is not supported: only count(*) takes *")
    if wanted is not None and len(args) != wanted:
        raise UnsupportedSqlError(
            f"{func} takes {'one argument' if wanted == 1 else f'{wanted} arguments'} (as in Spark), "
            f"not {len(args)}: {written}")


def _filter_condition(condition: Expr, clause: str, written: str) -> Expr:
    """A FILTER's condition: a BOOLEAN without subqueries (Spark: INVALID_AGGREGATE_FILTER)."""
    if type_of(condition) not in (BOOLEAN, None):
        raise UnsupportedSqlError(
            f"the FILTER expression {print_expr(condition)} of {written} in {clause} is not BOOLEAN "
            f"({type_of(condition)}); Spark rejects it (INVALID_AGGREGATE_FILTER.NOT_BOOLEAN)")
    if contains_subquery(condition):
        raise UnsupportedSqlError(f"a subquery in the FILTER of {written} in {clause} is not supported")
    return condition


def _filtered(func: str, args: tuple[Expr | None, ...], condition: Expr, clause: str) -> tuple[Expr | None, ...]:
    """The arguments with the one that decides whether a row counts made NULL where ``condition``
    is not true: the ordering of max_by/min_by, ``1`` for count(*), else the first."""
    decisive = 1 if func in _TWO_ARGUMENTS else 0
    value = Literal(1, INT) if args[decisive] is None else args[decisive]
    return (*args[:decisive], _when(condition, value, clause), *args[decisive + 1:])


def _when(condition: Expr, value: Expr, clause: str) -> Expr:
    """``CASE WHEN condition THEN value END``: NULL unless ``condition`` is true."""
    return typed_call("case", (condition, value), clause)


def _all_present(args: tuple[Expr, ...], clause: str) -> Expr:
    return conjunction([typed_call("is not null", (arg,), clause) for arg in args])


def _boolean(func: str, arg: Expr, clause: str) -> Expr:
    if type_of(arg) not in (BOOLEAN, NULL, None):
        raise UnsupportedSqlError(
            f"{func}({print_expr(arg)}) in {clause}: {func} needs a BOOLEAN argument, not {type_of(arg)} "
            "(Spark rejects it: DATATYPE_MISMATCH)")
    return arg


def _over_counts(func: str, predicate: Expr, distinct: bool, clause: str) -> Expr:
    """count_if, bool_and and bool_or as counts (the module's laws)."""
    def count_if(p: Expr) -> AggregateCall:
        return typed_aggregate("count", _when(p, Literal(1, INT), clause), distinct, clause)

    if func == "count_if":
        return count_if(predicate)
    zero = Literal(0, INT)
    if func == "bool_and":
        verdict = typed_call("=", (count_if(typed_call("not", (predicate,), clause)), zero), clause)
    else:
        verdict = typed_call(">", (count_if(predicate), zero), clause)
    present = typed_call(">", (typed_aggregate("count", predicate, False, clause), zero), clause)
    return typed_call("case", (present, verdict), clause)


def approximate_refusal(written: str, exact: str, clause: str) -> UnsupportedSqlError:
    """Why an approximate aggregate is refused, with the exact form to write instead."""
    return UnsupportedSqlError(
        f"{written} in {clause} is refused: an approximate aggregate is not a deterministic function of its "
        "input (its answer depends on the engine's sketch and on the order rows arrive), so a maintained "
        f"view could not equal a recomputation; write the exact {exact}")


def order_dependent_refusal(written: str, clause: str) -> UnsupportedSqlError:
    """Why first/last/any_value are refused: Spark documents them as non-deterministic (the value of
    whichever row the engine meets first, which depends on partitioning and arrival order, whether or
    not the query sorts), so no maintained view could equal a recomputation; the deterministic forms."""
    return UnsupportedSqlError(
        f"{written} in {clause} is refused: first, last and any_value return the value of whichever row Spark "
        "meets first (non-deterministic, by partitioning and arrival order), so a maintained view could not "
        "equal a recomputation; write min(x) or max(x), or max_by(x, ordering) / min_by(x, ordering) for the "
        "value at the latest or earliest ordering")
