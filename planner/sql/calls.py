"""Any sqlglot function node → the Spark function it calls: its name and its argument nodes.

sqlglot parses Spark's functions into typed classes (``exp.Upper``, ``exp.StrPosition`` for
``instr``/``locate``, ``exp.DPipe`` for ``||``) and unknown names into ``exp.Anonymous``. The name is
found generically: the name the user wrote for an unknown function, else the function name of the
node printed back as Spark SQL (``exp.SafeDivide`` prints as ``TRY_DIVIDE(...)``), else sqlglot's
``sql_name``; the arguments are the node's expression arguments in declaration order, which is the
call's order. ``_SHAPES`` lists the few classes whose Spark name or argument order the generic way
gets wrong; a function whose parse loses what the user wrote is kept as written by ``DIALECT``.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import sqlglot
from sqlglot import exp
from sqlglot.dialects.spark import Spark
from sqlglot.tokens import TokenType

Shape = Callable[[exp.Expression], tuple[str, list[exp.Expression]]]
_CALLED = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\(")


def as_written(node: exp.Expression | None) -> exp.Expression | None:
    """A date argument without the ``TO_DATE`` sqlglot wraps it in: typing inserts Spark's own cast."""
    return node.this if isinstance(node, exp.TsOrDsToDate) else node


def _present(*nodes: exp.Expression | None) -> list[exp.Expression]:
    return [n for n in nodes if n is not None]


def _trim(node: exp.Expression) -> tuple[str, list[exp.Expression]]:
    position = (node.args.get("position") or "").upper()
    name = {"LEADING": "ltrim", "TRAILING": "rtrim"}.get(position, "trim")
    return name, _present(node.this, node.args.get("expression"))


_SPARK_GENERATOR = Spark().generator()


def _with_format(name: str, subject: exp.Expression, node: exp.Expression) -> tuple[str, list[exp.Expression]]:
    """A datetime function whose pattern sqlglot turned into strftime's: the pattern as Spark spells it."""
    pattern = node.args.get("format")
    tail = [] if pattern is None else [sqlglot.parse_one(_SPARK_GENERATOR.format_time(node), read="spark")]
    return name, [subject, *tail]


def _date_add(node: exp.TsOrDsAdd) -> tuple[str, list[exp.Expression]]:
    """``date_add(d, n)``; sqlglot reads ``date_sub(d, n)`` as ``date_add(d, n * -1)``."""
    days = node.expression
    if isinstance(days, exp.Mul) and isinstance(days.expression, exp.Neg) and days.expression.this.name == "1":
        return "date_sub", [node.this, days.this]
    return "date_add", [node.this, days]


_SHAPES: dict[type[exp.Expression], Shape] = {
    # initcap(s): sqlglot's parse adds the delimiter ' ' as a second argument Spark's initcap lacks
    exp.Initcap: lambda n: ("initcap", [n.this] if n.expression == exp.Literal.string(" ") else [n.this, n.expression]),
    # date_trunc(unit, ts): sqlglot keeps the unit as a name and puts it second
    exp.TimestampTrunc: lambda n: ("date_trunc", [exp.Literal.string(n.unit.name) if isinstance(n.unit, exp.Var) else n.unit,
                                                  n.this]),
    exp.DateTrunc: lambda n: ("trunc", [n.this, n.unit]),
    exp.TsOrDsAdd: _date_add,
    exp.StrToUnix: lambda n: _with_format("unix_timestamp", n.this, n),
    exp.UnixToStr: lambda n: _with_format("from_unixtime", n.this, n),
    exp.StrToTime: lambda n: _with_format("to_timestamp", n.this, n),
    exp.TsOrDsToDate: lambda n: _with_format("to_date", n.this, n),
    exp.TimeToStr: lambda n: _with_format("date_format", n.this.this if isinstance(n.this, exp.TimeStrToTime) else n.this, n),
    # timestampdiff(unit, start, end): sqlglot keeps the unit as a name and the end first
    exp.TimestampDiff: lambda n: ("timestampdiff", [exp.Literal.string(n.unit.name), n.expression, n.this]),
    exp.Space: lambda n: ("space", [n.this]),  # printed back as repeat(' ', n)
    exp.DayOfWeek: lambda n: ("dayofweek", [as_written(n.this)]),
    exp.Trim: _trim,
    exp.Pad: lambda n: ("lpad" if n.args.get("is_left") else "rpad",
                        _present(n.this, n.expression, n.args.get("fill_pattern"))),
    # instr(str, substr), locate(substr, str[, pos]) and position(substr IN str) are one class
    exp.StrPosition: lambda n: ("locate", _present(n.args.get("substr"), n.this, n.args.get("position"))),
    exp.RegexpLike: lambda n: ("rlike", [n.this, n.expression]),
    exp.DPipe: lambda n: ("concat", [n.this, n.expression]),
    exp.Log: lambda n: ("log", [n.this, n.expression]) if n.expression else ("ln", [n.this]),
}


def spark_call(node: exp.Expression) -> tuple[str, list[exp.Expression]]:
    """(the Spark function name, as the user wrote it where sqlglot keeps it; the argument nodes)."""
    if isinstance(node, exp.Anonymous):
        return node.name, list(node.expressions)
    if (shape := _SHAPES.get(type(node))) is not None:
        return shape(node)
    if isinstance(node, exp.DateDiff) and node.args.get("unit") is None:
        # Spark's datediff(end, start); sqlglot wraps both in TO_DATE
        return "datediff", [as_written(node.this), as_written(node.expression)]
    if isinstance(node, exp.DateDiff):  # datediff(unit, start, end) is Spark's timestampdiff
        return "timestampdiff", [exp.Literal.string(node.unit.name), as_written(node.expression), as_written(node.this)]
    return _generic_name(node), _generic_args(node)


def _generic_name(node: exp.Expression) -> str:
    try:
        printed = node.sql(dialect="spark")
    except Exception:  # noqa: BLE001 — a node sqlglot cannot print as Spark SQL: its class's SQL name
        printed = ""
    if match := _CALLED.match(printed):
        return match.group(1).lower()
    name = node.sql_name() if isinstance(node, exp.Func) else node.key
    return name.lower()


def _generic_args(node: exp.Expression) -> list[exp.Expression]:
    args: list[exp.Expression] = []
    for key in node.arg_types:
        value = node.args.get(key)
        if isinstance(value, exp.Expression):
            args.append(value)
        elif isinstance(value, list):
            args += [v for v in value if isinstance(v, exp.Expression)]
    return args


def _percentile(parser: Spark.Parser) -> exp.Expression:
    """``percentile([DISTINCT] x, p)`` as sqlglot's ``Quantile``; any other arity kept whole as an
    ``Anonymous`` call (sqlglot's own parse drops a third argument, the frequency, so a view would
    count each row once where Spark counts it ``frequency`` times; the front end refuses it)."""
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


class _Parser(Spark.Parser):
    # log10(x) is Spark's Log10 (StrictMath.log10), which sqlglot would read as log(10, x): a
    # different double in the last place (log10(1000) is 3.0, ln(1000)/ln(10) is not)
    FUNCTIONS = {**Spark.Parser.FUNCTIONS, "LOG10": lambda args: exp.Anonymous(this="log10", expressions=args)}
    FUNCTION_PARSERS = {**Spark.Parser.FUNCTION_PARSERS, "PERCENTILE": _percentile}


class _Generator(Spark.Generator):
    # sqlglot writes Spark's percentile_cont/disc(p) WITHIN GROUP (ORDER BY x) as the approximate
    # PERCENTILE_APPROX(x, p), another function; Spark 4 parses WITHIN GROUP, so it is kept (what the
    # tests' Spark reference, planner/workloads/spark_reference.py, sends to spark.sql)
    TRANSFORMS = {key: value for key, value in Spark.Generator.TRANSFORMS.items() if key is not exp.WithinGroup}


class SparkIvm(Spark):
    """Spark's dialect with the parses that would lose which function was written kept as written."""

    Parser = _Parser
    Generator = _Generator


DIALECT = SparkIvm
