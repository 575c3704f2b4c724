"""Values in messages as the Spark SQL literals a user writes (issue 24, item 6)."""

from __future__ import annotations

import datetime
from decimal import Decimal

import pytest

from catalog import types
from catalog.literals import shown_value, sql_literal


@pytest.mark.parametrize(("value", "dtype", "literal"), [
    (None, None, "NULL"),
    (True, None, "TRUE"),
    (False, types.BOOLEAN, "FALSE"),
    (42, types.INT, "42"),
    (22.81, types.DOUBLE, "22.81"),
    (float("nan"), None, "CAST('NaN' AS DOUBLE)"),
    (float("-inf"), None, "CAST('-Infinity' AS DOUBLE)"),
    (Decimal("22.81"), types.DecimalType(10, 2), "22.81"),
    (Decimal("1E+3"), None, "1000"),
    ("text", types.STRING, "'text'"),
    ("it's a \\ back", None, "'it\\'s a \\\\ back'"),
    (datetime.date(2019, 4, 14), types.DATE, "DATE '2019-04-14'"),
    (datetime.datetime(2019, 4, 14, 10, 30), None, "TIMESTAMP '2019-04-14 10:30:00'"),
    (b"\xff\x01", None, "X'FF01'"),
    ((1, "a", None, datetime.date(2020, 1, 1)), None, "(1, 'a', NULL, DATE '2020-01-01')"),
    (3, types.IntervalType("day"), "INTERVAL 3 DAY"),
    ((2, "month"), types.IntervalType("month"), "INTERVAL 2 MONTH"),
])
def test_a_value_is_shown_as_the_spark_sql_literal_of_it(value, dtype, literal):
    assert sql_literal(value, dtype) == literal


def test_a_value_with_its_kind_names_the_kind_in_sparks_words_unless_the_literal_does():
    assert [shown_value(v) for v in (22.811, Decimal("1.005"), "x", True, 7, datetime.date(2024, 1, 1), None)] == [
        "double 22.811", "decimal 1.005", "string 'x'", "boolean TRUE", "integer 7", "DATE '2024-01-01'", "NULL"]
