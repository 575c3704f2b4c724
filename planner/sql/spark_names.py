"""What the user wrote, in Spark's words: how a refusal names a SQL construct.

sqlglot parses ``current_date()`` into ``exp.CurrentDate`` (``key`` "currentdate"), ``date_trunc`` into
``exp.TimestampTrunc`` and ``a || b`` into ``exp.DPipe``; a message built from those names speaks
sqlglot, not Spark. A function is named as the function registry finds it (``calls.spark_call``: the
name the user wrote, or the Spark name of sqlglot's class); an operator is taken from the node's Spark
SQL text, between the operands' texts.
"""

from __future__ import annotations

from sqlglot import exp

from planner.sql.calls import DIALECT, spark_call

_LONGEST = 120  # characters of a construct's text shown when it has no name


def spark_name(node: exp.Expression) -> str:
    """``node`` as a refusal names it: ``function date_trunc``, ``operator ||``, else its Spark SQL text.

    >>> import sqlglot
    >>> [spark_name(sqlglot.parse_one(sql, read=DIALECT)) for sql in ("current_date()", "date_trunc('month', d)", "a || b", "x[1]")]
    ['function current_date', 'function date_trunc', 'operator ||', 'x[1]']
    """
    text = node.sql(dialect=DIALECT)
    operator = _operator(node, text)
    if operator is not None:
        return f"operator {operator}"
    if isinstance(node, exp.Func):
        return f"function {spark_call(node)[0]}"
    return text[:_LONGEST]


def _operator(node: exp.Expression, text: str) -> str | None:
    """The operator of a two-operand node as its Spark text writes it (``||``, ``RLIKE``, ``<=>``), or None."""
    left, right = node.args.get("this"), node.args.get("expression")
    if not (isinstance(left, exp.Expression) and isinstance(right, exp.Expression)):
        return None
    left_text, right_text = left.sql(dialect=DIALECT), right.sql(dialect=DIALECT)
    if not (text.startswith(left_text) and text.endswith(right_text)) or len(text) <= len(left_text) + len(right_text):
        return None
    return text[len(left_text) : len(text) - len(right_text)].strip() or None
