"""The Spark dialect the front end parses with: sqlglot's, where it would silently lose an argument.

sqlglot reads ``percentile(x, p, frequency)`` as ``Quantile(x, p)``, dropping the frequency: a view
planned from it would count every row once where Spark counts it ``frequency`` times. Here a
``percentile`` call of any other arity than two stays an ``Anonymous`` function, which the front
end refuses naming it (planner/sql/expressions.py). Writing Spark SQL back (the Spark reference of the
tests, planner/workloads/spark_reference.py) keeps ``percentile_cont/disc ... WITHIN GROUP``, which
sqlglot's Spark writer turns into the approximate ``PERCENTILE_APPROX``.
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.dialects.spark import Spark
from sqlglot.tokens import TokenType


def _percentile(parser) -> exp.Expression:
    """``percentile([DISTINCT] x, p)`` as sqlglot's ``Quantile``; any other arity kept whole."""
    distinct = parser._match(TokenType.DISTINCT)
    if not distinct:
        parser._match(TokenType.ALL)
    args = [parser._parse_lambda()]
    if parser._match(TokenType.COMMA):
        args.extend(parser._parse_function_args())
    if len(args) != 2:
        return exp.Anonymous(this="percentile", expressions=args)
    value = exp.Distinct(expressions=[args[0]]) if distinct else args[0]
    return exp.Quantile(this=value, quantile=args[1])


class SparkSql(Spark):
    """Spark's dialect with ``percentile``'s arguments kept (see the module docstring)."""

    class Parser(Spark.Parser):
        FUNCTION_PARSERS = {**Spark.Parser.FUNCTION_PARSERS, "PERCENTILE": _percentile}

    class Generator(Spark.Generator):
        # sqlglot writes Spark's percentile_cont/disc(p) WITHIN GROUP (ORDER BY x) as an approximate
        # PERCENTILE_APPROX(x, p): another function. Spark 4 parses WITHIN GROUP, so it is kept.
        TRANSFORMS = {key: value for key, value in Spark.Generator.TRANSFORMS.items() if key is not exp.WithinGroup}
