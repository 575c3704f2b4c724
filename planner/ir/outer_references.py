"""Outer references that reach past the enclosing query, which Spark's analyzer refuses.

Spark resolves a column a subquery does not produce against the query immediately enclosing it (an
``OuterReference``) and reports ``UNRESOLVED_COLUMN`` for a name only a query further out produces:
``spark.sql`` refuses the order book's NQ2, whose innermost subquery reads the outermost bid
(tests/maintenance/test_spark_reference.py). Standard SQL resolves the name in the nearest
enclosing query that has it, which is how the front end reads it (``planner/sql/scope.py``) and how
the view is maintained; EXPLAIN says so, since Spark is the reference everywhere else.
"""

from __future__ import annotations

from collections.abc import Iterator

from planner.ir.expressions import Column, Subquery, walk
from planner.ir.logical import LogicalPlan, Scan, SubqueryAlias


def deep_outer_references(plan: LogicalPlan) -> list[Column]:
    """The columns of ``plan``'s subqueries that read a query two or more levels out, in text order.

    >>> from planner.ir.expressions import Call
    >>> from planner.ir.logical import Filter
    >>> def scan(alias): return Scan("t", alias, ("k",))
    >>> def where(alias, condition): return Filter(condition, scan(alias))
    >>> inner = Subquery("exists", where("c", Call("=", (Column("c", "k"), Column("a", "k")))))
    >>> middle = Subquery("exists", where("b", inner))
    >>> [str(c) for c in deep_outer_references(where("a", middle))]
    ['a.k']
    """
    return sorted(set(_references(plan, ())), key=str)


def _aliases(plan: LogicalPlan) -> frozenset[str]:
    return frozenset(n.alias for n in plan.walk() if isinstance(n, Scan | SubqueryAlias))


def _references(plan: LogicalPlan, enclosing: tuple[frozenset[str], ...]) -> Iterator[Column]:
    """Columns of ``plan`` (a query ``len(enclosing)`` levels down) that only a query beyond its
    immediate parent produces; ``enclosing`` holds each enclosing query's aliases, outermost first."""
    own = _aliases(plan)
    for node in plan.walk():
        for expr in node.expressions():
            for e in walk(expr):
                if isinstance(e, Subquery):
                    yield from _references(e.plan, (*enclosing, own))
                elif (isinstance(e, Column) and e.table is not None and e.table not in own
                      and not (enclosing and e.table in enclosing[-1]) and any(e.table in s for s in enclosing)):
                    yield e
