"""Spark's scalar functions (planner/ir/functions) on their edge cases, without Spark: rounding ties
and negative scales, NULLs, overflow, empty strings, unicode, Java regular expressions and their
refusals, non-deterministic and unknown functions. The expected values are Spark 4's (ANSI mode),
read from ``spark.sql`` when these tests were written; tests/planner/test_spark_semantics.py
compares the same functions with Spark on generated values."""

from __future__ import annotations

import math
from decimal import Decimal

import pytest

from catalog.ddl import catalog_from_ddl
from operators.lowering.expr_eval import compile_expr
from planner.ir.expressions import Column, type_of
from planner.ir.functions import FUNCTIONS, lookup
from planner.ir.functions.regex import UnsupportedRegex, java_regex
from planner.ir.functions.table import DOCS_FILE, supported_functions_table
from planner.ir.values import SqlRuntimeError
from planner.sql.errors import UnsupportedSqlError
from planner.sql.statements import parse_sql

CATALOG = catalog_from_ddl("CREATE TABLE r (k INT PRIMARY KEY, i INT, l BIGINT, d DECIMAL(5,2), f DOUBLE, s STRING, p STRING)")
COLUMNS = CATALOG.table("r").column_names


def evaluate(sql: str, **row: object) -> tuple[str, object]:
    """(Spark type, value) of ``sql`` over one row of r (columns not given are NULL)."""
    expr = parse_sql(f"select {sql} as v from r", CATALOG).items[0].expr
    layout = {Column("r", c): n for n, c in enumerate(COLUMNS)}
    return str(type_of(expr)), compile_expr(expr, layout)(tuple(row.get(c) for c in COLUMNS))


def value(sql: str, **row: object) -> object:
    return evaluate(sql, **row)[1]


@pytest.mark.parametrize(("sql", "expected"), [
    ("round(2.5)", ("decimal(2,0)", Decimal(3))),
    ("bround(2.5)", ("decimal(2,0)", Decimal(2))),
    ("round(-2.5)", ("decimal(2,0)", Decimal(-3))),
    ("bround(-3.5)", ("decimal(2,0)", Decimal(-4))),
    ("round(d, 1)", ("decimal(5,1)", Decimal("123.5"))),
    ("round(d, -1)", ("decimal(4,0)", Decimal(120))),
    ("round(d, -5)", ("decimal(6,0)", Decimal(0))),
    ("round(d, 3)", ("decimal(6,2)", Decimal("123.45"))),
    ("bround(d, 1)", ("decimal(5,1)", Decimal("123.4"))),
    ("round(cast(15 as int), -1)", ("int", 20)),
    ("bround(cast(25 as bigint), -1)", ("bigint", 20)),
    ("round(2.675e0, 2)", ("double", 2.68)),  # the decimal of the double's text, as Scala's BigDecimal(d)
    ("bround(2.5e0)", ("double", 2.0)),
    ("round(-0.4e0)", ("double", 0.0)),
    ("round(1e300, -300)", ("double", 1e300)),
    ("round('2.5')", ("double", 3.0)),
    ("round(2.5, null)", ("decimal(2,0)", None)),
    ("floor(d)", ("decimal(4,0)", Decimal(123))),
    ("ceil(cast(-1.5 as decimal(2,1)))", ("decimal(2,0)", Decimal(-1))),
    ("ceiling(f)", ("bigint", 3)),
    ("floor(f, 1)", ("decimal(17,1)", Decimal("2.5"))),
    ("ceil(d, -1)", ("decimal(4,0)", Decimal(130))),
    ("floor(i, -1)", ("decimal(11,0)", Decimal(0))),
    ("ceil(cast('NaN' as double))", ("bigint", 0)),
    ("ceil(0.05)", ("decimal(1,0)", Decimal(1))),  # every digit rounded away, yet ceil gives 1
    ("floor(-0.05)", ("decimal(1,0)", Decimal(-1))),
    ("round(0.05)", ("decimal(1,0)", Decimal(0))),
])
def test_rounding_ties_negative_scales_and_result_types(sql, expected):
    assert evaluate(sql, d=Decimal("123.45"), f=2.5, i=5) == expected


@pytest.mark.parametrize("sql", [
    "abs(i)", "abs(l - 1)", "round(cast(2147483647 as int), -1)", "ceil(1e20)", "floor(cast('Infinity' as double))",
])
def test_overflow_raises_as_spark_ansi_does(sql):
    with pytest.raises(SqlRuntimeError, match="ARITHMETIC_OVERFLOW"):
        evaluate(sql, i=-(2**31), l=-(2**63) + 1)


@pytest.mark.parametrize(("sql", "expected"), [
    ("sign(-2)", -1.0), ("signum(0.0)", 0.0), ("pmod(-7, 3)", 2), ("pmod(7, -3)", 1), ("pmod(-7.5, 2)", Decimal("0.5")),
    ("mod(-7, 3)", -1), ("power(2, 10)", 1024.0), ("pow(0, -1)", math.inf), ("sqrt(4)", 2.0), ("ln(0)", None),
    ("log(-1)", None), ("log(10, 100)", 2.0), ("log(0, 5)", None), ("log10(1000)", 3.0), ("log2(8)", 3.0),
    ("exp(1000)", math.inf), ("exp(0)", 1.0),
])
def test_numeric_functions(sql, expected):
    assert value(sql) == expected


def test_double_functions_follow_java_special_cases():
    assert math.isnan(value("sqrt(-1)")) and math.isnan(value("power(-8, 1.0 / 3)")) and math.isnan(value("log(1, 1)"))
    assert value("power(1, cast('NaN' as double))") != 1.0  # Java's pow gives NaN where C's gives 1
    with pytest.raises(SqlRuntimeError, match="DIVIDE_BY_ZERO"):
        value("pmod(i, 0)", i=3)


@pytest.mark.parametrize(("sql", "expected"), [
    ("upper('ß')", "SS"), ("initcap('hELLO wORLD-x  y')", "Hello World-x  Y"), ("initcap('ßa')", "ßa"), ("lower('ΑΣ')", "ας"), ("length('😀é')", 2), ("char_length('')", 0),
    ("trim('\ta ')", "\ta"), ("trim(both 'x' from 'xxaxx')", "a"), ("ltrim('xxa', 'x')", ""), ("btrim('xxaxx', 'x')", "a"),
    ("concat('a', null)", None), ("concat('a', 1, true)", "a1true"), ("'a' || 2.50", "a2.50"),
    ("concat_ws(',', 'a', null, 'b')", "a,b"), ("concat_ws(null, 'a')", None), ("concat_ws(',', null)", ""),
    ("left('hello', -1)", ""), ("right('hello', 2)", "lo"), ("left(12345, 2)", "12"), ("right('hi', 10)", "hi"),
    ("replace('abc', '', 'X')", "abc"), ("replace('abcb', 'b')", "ac"),
    ("lpad('hi', 5, 'xy')", "xyxhi"), ("rpad('hello', 2)", "he"), ("lpad('hi', 5, '')", "hi"), ("lpad('hi', -1)", ""),
    ("instr('hello', 'l')", 3), ("instr('hello', '')", 1), ("locate('l', 'hello', 4)", 4), ("locate('', 'hello', 9)", 1),
    ("locate('l', 'hello', 0)", 0), ("locate('l', 'hello', null)", 0), ("locate(null, 'hello', 1)", None),
    ("position('l' in 'hello')", 3),
    ("split_part('a,b,c', ',', -1)", "c"), ("split_part('a,b,c', ',', 5)", ""), ("split_part('a,b', '', 1)", "a,b"),
    ("split_part('', ',', 1)", ""),
    # substring_index, each checked in Spark 4: overlapping delimiters as Spark searches them
    ("substring_index('www.apache.org', '.', 2)", "www.apache"), ("substring_index('www.apache.org', '.', -2)", "apache.org"),
    ("substring_index('aaa', 'aa', 2)", "a"), ("substring_index('aaa', 'aa', -2)", "a"), ("substring_index('a.b', '.', 5)", "a.b"),
    ("substring_index('a.b', '.', 0)", ""), ("substring_index('a.b', '', 1)", ""), ("substring_index('a@b@c', '@', -5)", "a@b@c"),
    ("startswith('hello', '')", True), ("endswith('hello', 'lo')", True), ("contains(123, 2)", True),
    ("substr('hello', -3, 2)", "ll"), ("substring('hello', '2')", "ello"),
])
def test_string_functions(sql, expected):
    assert value(sql) == expected


def test_nullif_casts_a_constant_only_when_a_row_compares_it():
    assert value("nullif(cast(s as date), 'x')") is None  # Spark: the NULL side is not compared
    with pytest.raises(SqlRuntimeError, match="CAST_INVALID_INPUT"):
        value("nullif(cast(s as date), 'x')", s="2020-01-31")


def test_an_empty_match_splitting_a_character_outside_the_bmp_fails_loudly():
    assert value("regexp_replace(s, 'a*', '-')", s="ßé") == "-ß-é-"
    with pytest.raises(SqlRuntimeError, match="UNSUPPORTED_REGEX"):
        value("regexp_replace(s, 'a*', '-')", s="x😀")  # Java writes '-x-?-?-': half characters


@pytest.mark.parametrize("sql", ["s / cast(null as double)", "s % cast(null as int)", "pmod(s, cast(null as int))"])
def test_a_null_divisor_is_computed_first_and_the_dividend_never(sql):
    assert value(sql, s="not a number") is None  # Spark's DivModLike: the malformed s is never cast


def test_split_part_index_zero_raises():
    with pytest.raises(SqlRuntimeError, match="INVALID_INDEX_OF_ZERO"):
        value("split_part(s, ',', 0)", s="a,b")


@pytest.mark.parametrize(("sql", "expected"), [
    ("coalesce(i, 1 / 0)", 5),  # later arguments are not computed
    ("nvl(null, 'x')", "x"), ("ifnull(s, 'x')", "x"), ("nvl2(i, 'set', 'unset')", "set"), ("nullif(i, 5)", None),
    ("nullif(i, 6)", 5), ("if(i > 3, 'big', 'small')", "big"), ("if(null, 1, 2)", 2),
    ("greatest(1, null, 3)", 3), ("least(null, null)", None), ("greatest(f, cast('NaN' as double))", "NaN"),
    ("coalesce(true, 'abc')", True),
])
def test_conditional_functions(sql, expected):
    result = value(sql, i=5, f=1.0)
    assert (math.isnan(result) if expected == "NaN" else result == expected)


@pytest.mark.parametrize(("sql", "expected"), [
    ("regexp_extract('abc123', '([a-z]+)(\\\\d+)', 2)", "123"),
    ("regexp_extract('abc', '([a-z]+)(\\\\d+)?', 2)", ""),
    ("regexp_extract('abc', '(\\\\d+)', 1)", ""),  # no match: no group-index check
    ("regexp_replace('abcabc', '(b)(c)', '$2$1')", "acbacb"),
    ("regexp_replace('abcabc', '(b)', '\\\\$1')", "a$1ca$1c"),
    ("regexp_replace('aaa', 'a*?', 'X')", "XaXaXaX"),  # Java moves on after an empty match; Python's sub would not
    ("regexp_replace('abc', 'x*', '-')", "-a-b-c-"),
    ("regexp_replace('abcabc', 'b', 'X', 3)", "abcaXc"),
    ("regexp_replace('abc', 'x', '$9')", "abc"),  # an invalid replacement fails only when something matches
    ("regexp_replace('a\\r\\nb', '.', '-')", "-\r\n-"),  # Java's . stops at \r too
    ("'ab\\r\\n' rlike 'ab$'", True),
    ("'ab\\r' rlike 'b$'", True),
    ("'aé' rlike '^\\\\w+$'", False),  # \\w is ASCII in Java
    ("'A' rlike '(?i)a'", True),
    ("'a+b' rlike '\\\\Qa+b\\\\E'", True),
    ("regexp_like(null, 'a')", None),
    ("s regexp p", True),
])
def test_regular_expressions_as_java(sql, expected):
    assert value(sql, s="xay", p="a") == expected


@pytest.mark.parametrize(("pattern", "construct"), [
    ("\\p{Alpha}+", "\\p"), ("[[:alpha:]]", "nested"), ("[a-z&&[^b]]", "&&"), ("\\bword", "\\b"), ("(?m)^a", "inline"),
    ("a{,2}", "quantifier"), ("\\h", "\\h"), ("\\012", "\\0"),
])
def test_java_patterns_python_reads_differently_are_refused(pattern, construct):
    with pytest.raises(UnsupportedRegex, match=construct.replace("\\", "\\\\")):
        java_regex(pattern)
    with pytest.raises(UnsupportedSqlError, match="regular expression .* of rlike is not supported"):
        evaluate(f"s rlike '{pattern.replace(chr(92), chr(92) * 2)}'")


def test_a_pattern_from_a_column_is_checked_on_each_row():
    assert value("s rlike p", s="abc", p="^a.c$") is True
    with pytest.raises(SqlRuntimeError, match="UNSUPPORTED_REGEX"):
        value("s rlike p", s="abc", p="\\p{L}")
    with pytest.raises(SqlRuntimeError, match="INVALID_PARAMETER_VALUE.PATTERN"):
        value("s rlike p", s="abc", p="(")
    with pytest.raises(SqlRuntimeError, match="REGEX_GROUP_INDEX"):
        value("regexp_extract(s, p, 2)", s="abc", p="(b)")
    with pytest.raises(SqlRuntimeError, match="INVALID_REGEXP_REPLACE"):
        value("regexp_replace(s, p, '$9')", s="abc", p="b")


@pytest.mark.parametrize(("sql", "message"), [
    ("rand()", "rand in SELECT cannot be maintained: it returns a different value"),
    ("now()", "now in SELECT cannot be maintained: its value depends on when"),
    ("current_date", "current_date in SELECT cannot be maintained"),
    ("uuid()", "uuid in SELECT cannot be maintained"),
    ("monotonically_increasing_id()", "monotonically_increasing_id in SELECT cannot be maintained"),
    ("Frobnicate(s)", "function Frobnicate in SELECT is not supported"),
    ("soundex(s)", "function soundex in SELECT is not supported"),  # a class of sqlglot's, named as Spark names it
    ("round(d, i)", "round's scale \\(an integer constant\\)"),
    ("bround(d, 1, 2)", "bround takes 1 to 2 arguments, not 3"),
    ("greatest(1, '2')", "greatest \\(arguments of one common type\\)"),
    ("pmod(s, null)", "pmod of a string and NULL"),
    ("regexp_replace(s, 'a', 'b', 0)", "regexp_replace's position"),
])
def test_refusals_name_the_function_as_written(sql, message):
    with pytest.raises(UnsupportedSqlError, match=message):
        evaluate(sql)


def test_every_registered_name_resolves_to_its_function():
    for function in FUNCTIONS:
        for name in (function.name, *function.aliases):
            assert lookup(name) is function and lookup(name.upper()) is function
        assert function.doc and function.category


def test_docs_list_every_registered_function_as_the_registry_renders_it():
    """docs/supported-functions.md is generated (python -m planner.ir.functions.table): it must not drift."""
    assert DOCS_FILE.read_text() == supported_functions_table(), "run: python -m planner.ir.functions.table"
    for function in FUNCTIONS:
        assert f"| `{function.name}` |" in DOCS_FILE.read_text()


@pytest.mark.parametrize(("sql", "expected"), [
    # Spark's documented examples, and its rule's branches (same day, both month ends, 31-day fraction)
    ("months_between(timestamp '1997-02-28 10:30:00', date '1996-10-30')", ("double", 3.94959677)),
    ("months_between(timestamp '1997-02-28 10:30:00', date '1996-10-30', false)", ("double", 3.9495967741935485)),
    ("months_between(date '2024-03-31', date '2024-02-29')", ("double", 1.0)),
    ("months_between(date '2024-03-15', date '2023-03-15')", ("double", 12.0)),
    ("months_between(date '2024-03-30', date '2024-02-29')", ("double", 1.03225806)),
    ("months_between(date '2024-01-01', date '2024-03-30', null)", ("double", None)),
    ("last_day(date '2024-02-10')", ("date", __import__("datetime").date(2024, 2, 29))),
    ("next_day(date '2024-03-15', 'fr')", ("date", __import__("datetime").date(2024, 3, 22))),
    ("weekofyear(date '2021-01-03')", ("int", 53)),
    ("dayofyear(date '2024-12-31')", ("int", 366)),
    ("weekday(date '2024-03-17')", ("int", 6)),
    ("date_part('doy', date '2024-02-01')", ("int", 32)),
    ("translate('hello', 'llo', 'xy')", ("string", "hexx")),  # o pairs with the third character: none
    ("translate('hello', 'lo', 'L')", ("string", "heLL")),
    ("chr(321)", ("string", "A")),
    ("ascii('')", ("int", 0)),
    ("repeat('ab', -1)", ("string", "")),
    ("reverse('😀ab')", ("string", "ba😀")),
    ("nanvl(cast('NaN' as double), 1e0)", ("double", 1.0)),
    ("isnan(cast(null as double))", ("boolean", False)),
    ("equal_null(null, null)", ("boolean", True)),
    ("1 <=> null", ("boolean", False)),
    ("zeroifnull(d)", ("decimal(12,2)", Decimal(0))),
    # TRY mode: the operator's own failure is NULL
    ("try_cast('x' as int)", ("int", None)),
    ("try_cast(s as int)", ("int", None)),
    ("try_cast(l as int)", ("int", None)),
    ("try_divide(i, 0)", ("double", None)),
    ("try_add(i, 2147483647)", ("int", None)),
    ("try_mod(i, 0)", ("int", None)),
    ("try_multiply(l, l)", ("bigint", None)),
    # arithmetic with a NULL literal: the NULL read as the other side's type
    ("d * null", ("decimal(11,4)", None)),
    ("i div null", ("bigint", None)),
    ("null div null", ("bigint", None)),
    ("-null", ("double", None)),
])
def test_functions_of_the_second_library_stop(sql, expected):
    assert evaluate(sql, i=1, l=2**62, s="x") == expected


@pytest.mark.parametrize(("sql", "message"), [
    ("cast(s as int)", "CAST_INVALID_INPUT"),
    ("try_add(1 / i, 1)", "DIVIDE_BY_ZERO"),  # over numbers an argument's error is not the operator's: Spark raises it
    ("try_cast(cast(s as int) as bigint)", "CAST_INVALID_INPUT"),
    ("next_day(date '2024-03-15', 'xx')", "ILLEGAL_DAY_OF_WEEK"),
    ("make_date(2024, 2, 30)", "DATETIME_FIELD_OUT_OF_BOUNDS"),
])
def test_errors_outside_try_still_fail(sql, message):
    with pytest.raises(SqlRuntimeError, match=message):
        evaluate(sql, i=0, s="x")


@pytest.mark.parametrize(("sql", "message"), [
    ("s % null", "operator % is not defined"),
    ("true + null", r"operator \+ is not defined"),
    ("try_cast(k > 1 as date)", "CAST to date is not defined"),
    ("date_part('second', k)", "date_part's field"),
    ("months_between(k, k)", "months_between's first argument"),
])
def test_what_spark_refuses_is_refused(sql, message):
    with pytest.raises(UnsupportedSqlError, match=message):
        evaluate(sql)


def test_a_typed_null_prints_as_its_cast_and_reads_back():
    from planner.ir.notation import parse_expr, print_expr

    expr = parse_sql("select cast(null as int) as z from r", CATALOG).items[0].expr
    assert print_expr(expr) == '"cast as int"(null)'
    assert parse_expr(print_expr(expr)) == expr and parse_expr(print_expr(expr)).type == expr.type
