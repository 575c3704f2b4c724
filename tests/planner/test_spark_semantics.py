"""Typed expression evaluation against Spark itself, on generated values (issue 9: Spark is the reference).

Each example draws one row of typed values (NULLs included) and a list of expressions over its
columns and over literals: arithmetic, comparisons, IN lists, CASE, casts, string and date
functions, and every registered scalar function (planner/ir/functions: rounding ties, negative
scales, unicode, Java regular expressions). Spark evaluates them with ``spark.sql`` over a one-row view; we parse the same SQL,
type it (planner/sql/typing.py) and evaluate the compiled closure on the same row
(operators/lowering/expr_eval.py). Both must agree on the result type, on the value, and on
whether evaluation fails (a plan-time refusal or a runtime error on our side, an exception on
Spark's).
"""

from __future__ import annotations

import datetime
import decimal

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from catalog.ddl import catalog_from_ddl
from catalog.schema import Table
from operators.lowering.expr_eval import compile_expr
from planner.ir.expressions import Column, type_of
from planner.ir.values import SqlRuntimeError
from planner.sql.errors import UnsupportedSqlError
from planner.sql.statements import parse_sql

pytestmark = pytest.mark.spark

DDL = """CREATE TABLE r (k INT, i INT, j INT, l BIGINT, d DECIMAL(15,2), e DECIMAL(5,3), f DOUBLE, g DOUBLE,
s STRING, t STRING, dt DATE, du DATE, b BOOLEAN, PRIMARY KEY (k))"""
CATALOG = catalog_from_ddl(DDL)
TABLE: Table = CATALOG.table("r")
SPARK_SCHEMA = ", ".join(f"{c.name} {str(c.type).upper()}" for c in TABLE.columns)


def _maybe_null(values: st.SearchStrategy) -> st.SearchStrategy:
    return st.one_of(st.none(), values, values, values)


def _decimal(precision: int, scale: int) -> st.SearchStrategy:
    bound = decimal.Decimal(10) ** (precision - scale) - decimal.Decimal(1).scaleb(-scale)
    return st.decimals(min_value=-bound, max_value=bound, places=scale, allow_nan=False, allow_infinity=False)


SHORT_TEXT = st.text(alphabet="ab1_% 9", max_size=5)
UNICODE_TEXT = st.text(alphabet="aB ßéΣς😀,\t", max_size=5)
NUMERIC_TEXT = st.sampled_from(["1", "10", "-3", " 5 ", "1.5", "abc", "", "2147483648", "1e3"])
DATE_TEXT = st.sampled_from(["1995-03-15", "1995-3-5", "1995", "2000-02-30", "x"])
DATES = st.dates(datetime.date(1900, 1, 1), datetime.date(2100, 12, 31))
SMALL_INT = st.integers(-20, 20)

rows = st.tuples(
    st.just(1),
    _maybe_null(st.one_of(SMALL_INT, st.integers(-(2**31), 2**31 - 1))),
    _maybe_null(st.one_of(SMALL_INT, st.just(0), st.integers(-(2**31), 2**31 - 1))),
    _maybe_null(st.one_of(SMALL_INT, st.integers(-(2**63), 2**63 - 1))),
    _maybe_null(_decimal(15, 2)),
    _maybe_null(_decimal(5, 3)),
    _maybe_null(st.floats(-1e6, 1e6, allow_nan=False)),
    _maybe_null(st.one_of(st.just(0.0), st.floats(-1e3, 1e3, allow_nan=False))),
    _maybe_null(st.one_of(SHORT_TEXT, NUMERIC_TEXT, DATE_TEXT, UNICODE_TEXT)),
    _maybe_null(st.one_of(SHORT_TEXT, NUMERIC_TEXT)),
    _maybe_null(DATES),
    _maybe_null(DATES),
    _maybe_null(st.booleans()),
)

NUMBERS = ["i", "j", "l", "d", "e", "f", "g", "1", "0", "2.5", "0.06", "1e1", "-7", "3000000000"]
TEXTS = ["s", "t", "'1'", "'abc'", "'1995-03-15'"]
DAYS = ["dt", "du", "date '1995-03-15'"]
ANY = NUMBERS + TEXTS + DAYS + ["b", "null"]
TYPES = ["int", "bigint", "decimal(15,2)", "decimal(4,1)", "double", "string", "date", "boolean"]


def _expressions() -> st.SearchStrategy[str]:
    pick = st.sampled_from
    arithmetic = st.builds("({}) {} ({})".format, pick(NUMBERS + ["s", "'10'"]), pick(["+", "-", "*", "/", "%", "div"]),
                           pick(NUMBERS + ["t", "'2'"]))
    comparison = st.builds("({}) {} ({})".format, pick(ANY), pick(["=", "<>", "<", "<=", ">", ">="]), pick(ANY))
    membership = st.builds("{} {} ({}, {}, {})".format, pick(["i", "l", "d", "e", "f", "s", "t"]), pick(["in", "not in"]),
                           pick(NUMBERS + ["null"]), pick(NUMBERS + TEXTS), pick(["1", "null", "2.5"]))
    # a column as the subject: with constants on all three sides Spark's optimizer simplifies
    # `false AND x` before folding x, an optimizer order this comparison does not model
    between = st.builds("{} between {} and {}".format, pick(["i", "l", "d", "e", "f", "dt"]), pick(NUMBERS + TEXTS + ["null"]),
                        pick(NUMBERS + TEXTS + ["null"]))
    logic = st.builds("({} > {}) {} ({} is null)".format, pick(NUMBERS), pick(NUMBERS), pick(["and", "or"]),
                      pick(ANY))
    case = st.builds("case when {} then {} else {} end".format, pick(["b", "i > j", "s like 'a%'", "null"]),
                     pick(NUMBERS + TEXTS), pick(NUMBERS + TEXTS + ["null"]))
    coalesce = st.builds("coalesce({}, {})".format, pick(NUMBERS + ["null"]), pick(NUMBERS))
    cast = st.builds("cast({} as {})".format, pick(ANY), pick(TYPES))
    text = st.one_of(
        st.builds("substring({}, {}, {})".format, pick(["s", "t", "'hello'", "i"]), pick(["i", "-3", "0", "2", "-9"]),
                  pick(["j", "2", "-1", "0", "10"])),
        st.builds("substring({}, {})".format, pick(["s", "'hello'"]), pick(["-2", "0", "3"])),
        st.builds("{} {} '{}'".format, pick(["s", "t", "i", "d"]), pick(["like", "not like"]),
                  st.text(alphabet="ab1%_\\", max_size=4).filter(lambda p: not p.endswith("\\"))),
    )
    dates = st.one_of(
        # day counts that keep the dates within years 1..9999, which Python's dates cover
        st.builds("{} {} {}".format, pick(DAYS), pick(["+", "-"]), pick(["k", "3", "-40", "1000"])),
        st.builds("{} {} interval '{}' {}".format, pick(DAYS), pick(["+", "-"]), pick(["1", "13", "-2"]),
                  pick(["day", "month", "year"])),
        st.builds("{}({})".format, pick(["year", "month", "day"]), pick(DAYS + ["'1995-03-15'"])),
        st.builds("datediff({}, {})".format, pick(DAYS + ["s", "'1995-03-01'"]), pick(DAYS)),
        st.builds("extract({} from {})".format, pick(["year", "quarter", "month", "week", "day"]), pick(DAYS)),
    )
    return st.one_of(arithmetic, comparison, membership, between, logic, case, coalesce, cast, text, dates)


def _ours(sql: str, row: tuple) -> tuple[str, object]:
    """("value", (type, value)) or ("error", message) as spark-ivm evaluates ``sql`` over ``row``."""
    try:
        expr = parse_sql(f"select {sql} as v from r", CATALOG).items[0].expr
        layout = {Column("r", c): i for i, c in enumerate(TABLE.column_names)}
        return "value", (str(type_of(expr)), compile_expr(expr, layout)(row))
    except (UnsupportedSqlError, SqlRuntimeError) as error:
        return "error", str(error)


def _spark(spark, sql: str) -> tuple[str, object]:
    try:
        frame = spark.sql(f"select {sql} as v from r")
        return "value", (frame.schema["v"].dataType.simpleString(), frame.collect()[0][0])
    except Exception as error:  # Spark's analysis or runtime exception: the expression fails there
        return "error", str(error).splitlines()[0]


def _same(ours: tuple[str, object], theirs: tuple[str, object]) -> bool:
    if ours[0] != theirs[0]:
        # a regular expression refused where Java would split a surrogate pair (Spark's result is not text)
        return ours[0] == "error" and "UNSUPPORTED_REGEX" in ours[1]
    if ours[0] == "error":
        return True
    (our_type, our_value), (their_type, their_value) = ours[1], theirs[1]
    if isinstance(their_value, datetime.timedelta) or our_type.startswith("interval"):
        return our_type == their_type and our_value == their_value
    if isinstance(their_value, float) and isinstance(our_value, float):
        return our_type == their_type and (our_value == their_value or abs(our_value - their_value) <= 1e-12 * abs(their_value))
    return our_type == their_type and our_value == their_value and type(our_value) is type(their_value)


def _function_calls() -> st.SearchStrategy[str]:
    """Calls of the registered scalar functions (planner/ir/functions) over columns and constants:
    rounding ties, negative scales, NULLs, empty strings, unicode, Java regular expressions."""
    pick = st.sampled_from
    number = pick(NUMBERS + ["s", "null", "-2.5", "0.125", "15", "-15", "1.005", "2.675e0", "-0.5e0"])
    scale = pick(["0", "1", "2", "-1", "-2", "5", "null"])
    text = pick(["s", "t", "'hello'", "''", "'ßΣ😀é'", "' a b '", "i", "d", "dt", "null"])
    count = pick(["-1", "0", "2", "7", "k", "null"])
    pattern = pick(["'a'", "'^a'", "'a$'", "'[ab]+'", "'(a)(b)?'", "'\\\\d+'", "'.'", "'a*'", "'(?i)A'", "'1|9'", "''",
                    "'(\\\\w)(\\\\w)'", "t"])
    numeric = st.one_of(
        st.builds("{}({}, {})".format, pick(["round", "bround"]), number, scale),
        st.builds("{}({})".format, pick(["round", "bround", "ceil", "ceiling", "floor", "abs", "sign", "signum", "sqrt",
                                         "ln", "log", "log10", "log2", "exp"]), number),
        st.builds("{}({}, {})".format, pick(["ceil", "floor"]), number, pick(["0", "1", "-1"])),
        st.builds("{}({}, {})".format, pick(["mod", "pmod", "power", "pow", "log"]), number, number),
    )
    strings = st.one_of(
        st.builds("{}({})".format, pick(["upper", "lower", "initcap", "ucase", "lcase", "length", "char_length", "trim",
                                         "ltrim", "rtrim"]), text),
        st.builds("trim({} {} from {})".format, pick(["both", "leading", "trailing"]), pick(["'a'", "' '", "'ab'", "t"]),
                  text),
        st.builds("btrim({}, {})".format, text, pick(["'a'", "'ß '", "t"])),
        st.builds("concat({}, {})".format, text, text),
        st.builds("concat({}, {}, {})".format, text, text, text),
        st.builds("({}) || ({})".format, text, text),
        st.builds("concat_ws({}, {}, {}, {})".format, pick(["','", "''", "t", "null"]), text, text, text),
        st.builds("{}({}, {})".format, pick(["left", "right"]), text, count),
        st.builds("replace({}, {}, {})".format, text, pick(["'a'", "''", "'l'", "t"]), pick(["'X'", "''", "s"])),
        st.builds("replace({}, {})".format, text, pick(["'a'", "' '", "t"])),
        st.builds("{}({}, {}, {})".format, pick(["lpad", "rpad"]), text, count, pick(["'xy'", "''", "t", "null"])),
        st.builds("{}({}, {})".format, pick(["lpad", "rpad"]), text, count),
        st.builds("instr({}, {})".format, text, text),
        st.builds("locate({}, {}, {})".format, text, text, pick(["0", "1", "2", "9", "-1", "null", "k"])),
        st.builds("position({} in {})".format, text, text),
        st.builds("split_part({}, {}, {})".format, text, pick(["','", "'a'", "''", "' '", "t"]),
                  pick(["1", "2", "-1", "0", "3", "k"])),
        st.builds("{}({}, {})".format, pick(["startswith", "endswith", "contains"]), text, text),
        st.builds("{}({}, {})".format, pick(["repeat", "left"]), text, count),
        st.builds("{}({})".format, pick(["reverse", "ascii", "space", "chr", "char"]), pick(["s", "t", "''", "'ßΣ😀é'", "k",
                                                                                          "i", "-1", "321", "null"])),
        st.builds("translate({}, {}, {})".format, text, pick(["'ab'", "'aab'", "''", "t", "'ß😀'"]), pick(["'x'", "''", "'xyz'", "s"])),
    )
    regex = st.one_of(
        st.builds("{} {} {}".format, text, pick(["rlike", "regexp"]), pattern),
        st.builds("regexp_like({}, {})".format, text, pattern),
        st.builds("regexp_extract({}, {}, {})".format, text, pattern, pick(["0", "1", "2"])),
        st.builds("regexp_extract({}, {})".format, text, pattern),
        st.builds("regexp_replace({}, {}, {})".format, text, pattern, pick(["'x'", "'$1'", "'<$0>'", "''", "'\\\\$'"])),
        st.builds("regexp_replace({}, {}, {}, {})".format, text, pattern, pick(["'x'", "'$0$0'"]), pick(["1", "2", "4"])),
    )
    values = pick(NUMBERS + TEXTS + DAYS + ["b", "null"])
    conditional = st.one_of(
        st.builds("{}({}, {})".format, pick(["nvl", "ifnull", "nullif", "coalesce"]), values, values),
        st.builds("nvl2({}, {}, {})".format, values, values, values),
        st.builds("if({}, {}, {})".format, pick(["b", "i > j", "null", "s like 'a%'"]), values, values),
        st.builds("{}({}, {}, {})".format, pick(["greatest", "least"]), values, values, values),
        st.builds("{}({}, {})".format, pick(["greatest", "least"]), pick(["f", "g", "cast('NaN' as double)", "null"]),
                  pick(["f", "g", "1e0"])),
        st.builds("{}({})".format, pick(["isnull", "isnotnull", "zeroifnull", "nullifzero"]), values),
        st.builds("{}({})".format, pick(["isnan"]), pick(["f", "g", "cast('NaN' as double)", "null", "i", "s"])),
        st.builds("nanvl({}, {})".format, pick(["f", "cast('NaN' as double)", "null", "i"]), pick(["g", "null", "1e0", "d"])),
        st.builds("equal_null({}, {})".format, values, values),
        st.builds("({}) {} ({})".format, values, pick(["<=>", "is distinct from", "is not distinct from"]), values),
    )
    tried = st.one_of(
        st.builds("try_cast({} as {})".format, pick(ANY), pick(TYPES)),
        st.builds("{}({}, {})".format, pick(["try_add", "try_subtract", "try_multiply", "try_divide", "try_mod"]),
                  number, number),
        st.builds("{}({}, {})".format, pick(["try_add", "try_subtract"]), pick(DAYS), pick(["k", "3", "i", "null"])),
        st.builds("({}) {} (null)".format, pick(ANY), pick(["+", "-", "*", "/", "%", "div"])),
        st.builds("(null) {} ({})".format, pick(["+", "-", "*", "/", "%", "div"]), pick(ANY)),
        st.builds("-({})".format, pick(["null", "i", "d"])),
    )
    dates = st.one_of(
        st.builds("{}({})".format, pick(["last_day", "weekofyear", "dayofmonth", "dayofyear", "weekday"]), pick(DAYS + ["s"])),
        st.builds("next_day({}, {})".format, pick(DAYS), pick(["'MO'", "'tue'", "'Sunday'", "'xx'", "s", "null"])),
        st.builds("make_date({}, {}, {})".format, pick(["2024", "1999", "k", "null"]), pick(["2", "12", "13", "k", "i"]),
                  pick(["29", "30", "31", "1", "0", "j"])),
        st.builds("months_between({}, {})".format, pick(DAYS + ["s"]), pick(DAYS)),
        st.builds("months_between({}, {}, {})".format, pick(DAYS), pick(DAYS), pick(["true", "false", "b", "null"])),
        st.builds("date_part({}, {})".format, pick(["'year'", "'Q'", "'qtr'", "'MONTH'", "'week'", "'d'", "'dow'", "'doy'"]),
                  pick(DAYS)),
    )
    return st.one_of(numeric, strings, regex, conditional, tried, dates)


@pytest.fixture(scope="module")
def spark():
    from operators.runtime.spark_session import make_spark_session

    return make_spark_session(app="spark-ivm-semantics", cores=1)


def _compare(spark, row: tuple, expressions: list[str]) -> None:
    """Each of ``expressions`` over ``row`` as spark-ivm evaluates it and as ``spark.sql`` does: equal
    type and value, or both failing."""
    spark.createDataFrame([row], SPARK_SCHEMA).createOrReplaceTempView("r")
    ours = {sql: _ours(sql, row) for sql in expressions}
    computed = [sql for sql, result in ours.items() if result[0] == "value"]
    theirs: dict[str, tuple[str, object]] = {}
    if computed:
        try:  # the expressions we compute, in one Spark query; one by one only when Spark fails
            frame = spark.sql("select " + ", ".join(f"{sql} as v{i}" for i, sql in enumerate(computed)) + " from r")
            values = frame.collect()[0]
            theirs = {sql: ("value", (frame.schema[f"v{i}"].dataType.simpleString(), values[i]))
                      for i, sql in enumerate(computed)}
        except Exception:
            theirs = {sql: _spark(spark, sql) for sql in computed}
    theirs |= {sql: _spark(spark, sql) for sql, result in ours.items() if result[0] == "error"}
    differing = {sql: (ours[sql], theirs[sql]) for sql in expressions if not _same(ours[sql], theirs[sql])}
    assert not differing, f"row {row}: spark-ivm vs Spark differ on " + "\n".join(
        f"{sql}: ours {o}, Spark {t}" for sql, (o, t) in differing.items()
    )


# no shrinking: the failure message already lists every differing expression of the example
_SETTINGS = settings(max_examples=25, deadline=None, derandomize=True, phases=[Phase.explicit, Phase.reuse, Phase.generate],
                     suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@_SETTINGS
@given(row=rows, expressions=st.lists(_expressions(), min_size=30, max_size=30, unique=True))
def test_typed_expressions_evaluate_as_spark_evaluates_them(spark, row, expressions):
    _compare(spark, row, expressions)


@_SETTINGS
@given(row=rows, expressions=st.lists(_function_calls(), min_size=40, max_size=40, unique=True))
def test_functions_evaluate_as_spark_evaluates_them(spark, row, expressions):
    _compare(spark, row, expressions)
