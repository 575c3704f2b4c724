"""The plan text notation: what EXPLAIN prints, what tests write, and what parses back to a plan.

One node a line, two spaces of indentation a level, ``Kind[variant] key=value ...``, the children on
the following lines one level deeper. The printer and the parser are generic over plan classes:
``Kind`` is the class name of any ``@attrs.frozen`` subclass of ``LogicalPlan`` (found by walking
``LogicalPlan.__subclasses__()`` when parsing), ``[variant]`` shows the class's ``variant_field``,
the ``child_fields`` are the indented lines, and every other field is ``key=value`` in declaration
order. So a module that adds plan nodes (maintenance plans, say) gets the notation for free.

Short lines. A field at its default, or None where the field's type admits None and it has no
default, is not written; the parser fills it back in (writing it out still parses). A line longer
than ``WIDTH`` (150) wraps: the fields that do not fit go on continuation lines four spaces deeper
than the node (its children are two deeper), each such line starting ``name=``, and a list or value
object too long for its line puts its items on lines two deeper still. Line breaks inside ``[...]``
and ``(...)`` mean nothing to the parser. The printer, in ``planner.ir.notation_printer``, is the
only writer; the parser, in ``planner.ir.notation_parser``, reads what it writes.

>>> from planner.ir.logical import Filter, Scan
>>> from decimal import Decimal
>>> from planner.ir.expressions import Call, Column, Literal
>>> plan = Filter(Call(">", (Column("o", "o_totalprice"), Literal(Decimal("10.5"), "decimal(3,1)"))),
...               Scan("orders", "o", ("o_orderkey", "o_totalprice")))
>>> print(print_plan(plan))
Filter condition=o.o_totalprice > 10.5
  Scan table=orders alias=o columns=[o_orderkey, o_totalprice]
>>> parse_plan(print_plan(plan)) == plan
True

Values. ``None``, ``True``, ``False``; numbers (``1`` is an int, ``1.0`` a float; inside an
expression, literals read as Spark types them: ``1`` int, ``1.0`` decimal, ``1.0e0`` double); a str is a bare
name when it is an identifier (``alias=o``) and ``'single quoted'`` with backslash escapes
otherwise; tuples are ``[a, b]``; ``NamedExpr`` is ``expr AS name``; ``SortKey`` is ``expr ASC`` or
``expr DESC`` (upper case; the other keywords are lower case); a class registered with
``@notation_value`` is ``TypeName(field=value, ...)``, and the one registered with
``@notation_edge`` (the foreign-key edge) is an arrow ``lineitem(l_orderkey)→orders(o_orderkey)``,
the columns at each end comma-separated; a plan held in a field (not a child) is a
block like a subquery's; anything else must be an expression. Because a bare name, a number and a
quoted string already mean a Python value, an expression that would print exactly like one is put
in parentheses there: ``(x)`` is the column ``x``, ``(1)`` and ``('a')`` are literals.

Expressions read like SQL with the fewest parentheses that keep the tree: ``a - b - c`` is
``(a - b) - c``, ``a - (b - c)`` keeps its parentheses, ``not (a and b)``, ``x in (1, 2)``,
``x between lo and hi``, ``case when c then v else e end``, ``date '1995-03-15'``,
``interval '3' month``, ``null``/``true``/``false``, ``sum(x)``, ``count(*)``,
``count(distinct x)``. Every other ``Call`` is function syntax ``op(args)``; the op is double-quoted
(``"sum"(x)``, ``"Upper"(x)``, ``"||"(a, b)``) when a bare name would read as something else, and so
is a column name that is not a plain identifier (``t."order"``). A negative number literal is
``-1``; negation of an expression is ``-x`` and of a literal ``-(1)``.

Subqueries print their plan inline as an indented block between braces: ``exists{``, ``scalar{``,
``x in {``, ``x not in {`` and ``not exists{`` open it, the plan follows on its own lines four
spaces deeper than the node that holds the expression, and ``}`` closes it on a line of its own
two spaces deeper, after which the expression (and the node's fields) go on::

    Filter condition=exists{
        Scan table=lineitem alias=l columns=[l_orderkey]
      } and o.o_totalprice > 10
      Scan table=orders alias=o columns=[o_orderkey, o_totalprice]

``not (exists{...})`` is the ``not`` of a subquery, ``not exists{...}`` the negated subquery.

Limits: field names must be identifiers that are not keywords of the notation (``and``, ``end``,
``date``...); a node may have at most one child field holding a tuple of plans; literal floats are
finite; ``AggregateCall.func`` is one of ``AGGREGATE_FUNCTIONS`` (``sum count avg min max max_by
min_by``, the variance family and the percentiles): further arguments follow the first
(``max_by(x, y)``, ``count(distinct a, b)``), and a percentile's parameters follow its argument as
literals (``percentile_disc(x, 0.25, true)``).
"""

from __future__ import annotations

from planner.ir.notation_parser import expr_from_tree, parse_expr, parse_plan
from planner.ir.notation_printer import print_expr, print_plan
from planner.ir.notation_syntax import (
    AGGREGATE_FUNCTIONS,
    PARAMETERIZED_AGGREGATES,
    format_identifier,
    identifier_from_token,
    load_grammar,
    notation_edge,
    notation_value,
    parse_with,
)

__all__ = [
    "AGGREGATE_FUNCTIONS",
    "PARAMETERIZED_AGGREGATES",
    "expr_from_tree",
    "format_identifier",
    "identifier_from_token",
    "load_grammar",
    "notation_edge",
    "notation_value",
    "parse_expr",
    "parse_plan",
    "parse_with",
    "print_expr",
    "print_plan",
]
