"""What the user wrote, in Spark's words: how a refusal names a SQL construct.

sqlglot parses ``current_date()`` into ``exp.CurrentDate`` (``key`` "currentdate"), ``date_trunc`` into
``exp.TimestampTrunc`` and ``a || b`` into ``exp.DPipe``; a message built from those names speaks
sqlglot, not Spark. The node's Spark SQL text (``node.sql(dialect="spark")``) is what the user wrote,
so the name is taken from it: the word before a call's parenthesis, or the operator between the
operands' texts.
"""

from __future__ import annotations

import re

from sqlglot import exp

_CALL = re.compile(r"([A-Za-z_][A-Za-z_0-9.]*)\s*\(")
_LONGEST = 120  # characters of a construct's text shown when it has no name


def spark_name(node: exp.Expression) -> str:
    """``node`` as a refusal names it: ``function DATE_TRUNC``, ``operator ||``, else its Spark SQL text.

    >>> import sqlglot
    >>> [spark_name(sqlglot.parse_one(sql, read="spark")) for sql in ("current_date()", "date_trunc('month', d)", "a || b", "x[1]")]
    ['function CURRENT_DATE', 'function DATE_TRUNC', 'operator ||', 'x[1]']
    """
    text = node.sql(dialect="spark")
    operator = _operator(node, text)
    if operator is not None:
        return f"operator {operator}"
    if isinstance(node, exp.Func):
        call = _CALL.match(text)
        return f"function {call.group(1) if call else text.split()[0]}"
    return text[:_LONGEST]


def _operator(node: exp.Expression, text: str) -> str | None:
    """The operator of a two-operand node as its Spark text writes it (``||``, ``RLIKE``, ``<=>``), or None."""
    left, right = node.args.get("this"), node.args.get("expression")
    if not (isinstance(left, exp.Expression) and isinstance(right, exp.Expression)):
        return None
    left_text, right_text = left.sql(dialect="spark"), right.sql(dialect="spark")
    if not (text.startswith(left_text) and text.endswith(right_text)) or len(text) <= len(left_text) + len(right_text):
        return None
    return text[len(left_text) : len(text) - len(right_text)].strip() or None
