"""TIMESTAMP, TIMESTAMP_NTZ and the date/time functions evaluated against Spark itself, in UTC and in
America/Los_Angeles (a session time zone with DST), on generated rows (issue 24, item 3).

As in test_spark_semantics.py: Spark evaluates each expression with ``spark.sql`` over a one-row view
in the session time zone; we plan the same SQL with that ``time_zone`` and evaluate the compiled
closure on the same row. Both must agree on the type, the value and whether it fails. pyspark hands a
TIMESTAMP back as a naive datetime in this process's local time; ours is made the same for the
comparison.
"""

from __future__ import annotations

import datetime

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from catalog.ddl import catalog_from_ddl
from operators.lowering.expr_eval import compile_expr
from planner.ir.expressions import Column, type_of
from planner.ir.values import SqlRuntimeError
from planner.sql.errors import UnsupportedSqlError
from planner.sql.statements import parse_sql

pytestmark = pytest.mark.spark

CATALOG = catalog_from_ddl("CREATE TABLE r (k INT, ts TIMESTAMP, tu TIMESTAMP, n TIMESTAMP_NTZ, dt DATE, s STRING, i INT, "
                           "PRIMARY KEY (k))")
TABLE = CATALOG.table("r")
SPARK_SCHEMA = ", ".join(f"{c.name} {str(c.type).upper()}" for c in TABLE.columns)
UTC = datetime.UTC
ZONES = ("UTC", "America/Los_Angeles")

# instants near the 2024 DST changes of Los Angeles, and elsewhere
INSTANTS = st.one_of(
    st.sampled_from([datetime.datetime(2024, 3, 10, 9, 59, 59, tzinfo=UTC), datetime.datetime(2024, 3, 10, 10, 30, tzinfo=UTC),
                     datetime.datetime(2024, 11, 3, 8, 30, tzinfo=UTC), datetime.datetime(2024, 11, 3, 9, 30, tzinfo=UTC),
                     datetime.datetime(2024, 1, 31, 23, 0, tzinfo=UTC)]),
    st.datetimes(datetime.datetime(1950, 1, 1), datetime.datetime(2100, 1, 1)).map(lambda t: t.replace(tzinfo=UTC)),
)
LOCALS = st.one_of(st.sampled_from([datetime.datetime(2024, 3, 10, 2, 30), datetime.datetime(2024, 11, 3, 1, 30)]),
                   st.datetimes(datetime.datetime(1950, 1, 1), datetime.datetime(2100, 1, 1)))
TEXTS = st.sampled_from(["2024-03-10 02:30:00", "2024-11-03 01:30:00", "2024-03-10", "2024-3-1 1:2:3", "2024-03-10T12:00",
                         "2024-03-10 12:00:00.1234567", "2024-03-10 12:00:00Z", "2024-03-10 12:00:00+05:00",
                         "2024-03-10 12:00:00 America/New_York", " 2024-03-10 12:00:00 ", "2024", "abc", "2024-13-01 00:00:00"])


def _maybe_null(values: st.SearchStrategy) -> st.SearchStrategy:
    return st.one_of(st.none(), values, values, values)


rows = st.tuples(st.just(1), _maybe_null(INSTANTS), _maybe_null(INSTANTS), _maybe_null(LOCALS),
                 _maybe_null(st.dates(datetime.date(1950, 1, 1), datetime.date(2100, 1, 1))), _maybe_null(TEXTS),
                 _maybe_null(st.integers(-40, 40)))

STAMPS = ["ts", "tu", "n", "timestamp '2024-03-10 02:30:00'", "timestamp_ntz '2024-11-03 01:30:00'"]
DAYS = ["dt", "date '2024-03-10'"]
ANY_TIME = STAMPS + DAYS + ["s", "'2024-11-03 01:30:00'"]
UNITS = ["'YEAR'", "'QUARTER'", "'MONTH'", "'WEEK'", "'DAY'", "'HOUR'", "'MINUTE'", "'SECOND'", "'MILLISECOND'", "'mm'",
         "'bogus'"]
PATTERNS = ["'yyyy-MM-dd HH:mm:ss'", "'yy/M/d h:m:s a'", "'EEE, d MMM yyyy'", "'EEEE MMMM HH:mm:ss.SSS'", "'yyyy'"]


def _expressions() -> st.SearchStrategy[str]:
    pick = st.sampled_from
    return st.one_of(
        st.builds("({}) {} ({})".format, pick(ANY_TIME), pick(["=", "<>", "<", "<=", ">", ">="]), pick(ANY_TIME)),
        st.builds("cast({} as {})".format, pick(ANY_TIME), pick(["timestamp", "timestamp_ntz", "date", "string"])),
        st.builds("date_trunc({}, {})".format, pick(UNITS), pick(ANY_TIME)),
        st.builds("trunc({}, {})".format, pick(DAYS + STAMPS), pick(["'YEAR'", "'MM'", "'WEEK'", "'QUARTER'", "'DAY'"])),
        st.builds("{}({})".format, pick(["year", "quarter", "month", "day", "dayofweek", "hour", "minute", "second",
                                         "to_date", "to_timestamp", "unix_timestamp"]), pick(ANY_TIME)),
        st.builds("extract({} from {})".format, pick(["year", "month", "day", "hour", "minute", "dayofweek", "week"]),
                  pick(STAMPS + DAYS)),
        st.builds("{} {} interval '{}' {}".format, pick(STAMPS + DAYS), pick(["+", "-"]), pick(["1", "25", "-2", "13"]),
                  pick(["year", "month", "day", "hour", "minute", "second"])),
        st.builds("{}({}, {})".format, pick(["date_add", "date_sub", "add_months"]), pick(DAYS + STAMPS + ["s"]),
                  pick(["i", "1", "-31"])),
        st.builds("datediff({}, {})".format, pick(ANY_TIME), pick(ANY_TIME)),
        st.builds("timestampdiff({}, {}, {})".format, pick(["YEAR", "QUARTER", "MONTH", "WEEK", "DAY", "HOUR", "MINUTE",
                                                            "SECOND", "MILLISECOND", "MICROSECOND"]),
                  pick(STAMPS + DAYS), pick(STAMPS + DAYS)),
        st.builds("from_unixtime({})".format, pick(["i * 86400000", "1730626200", "0", "i"])),
        st.builds("from_unixtime({}, {})".format, pick(["1730626200", "i * 3600"]), pick(PATTERNS)),
        st.builds("date_format({}, {})".format, pick(STAMPS + DAYS), pick(PATTERNS)),
        st.builds("{}({}, {})".format, pick(["greatest", "least", "coalesce"]), pick(STAMPS), pick(DAYS + STAMPS)),
        st.builds("months_between({}, {})".format, pick(STAMPS + DAYS + ["s"]), pick(STAMPS + DAYS)),
        st.builds("months_between({}, {}, false)".format, pick(STAMPS), pick(STAMPS + DAYS)),
        st.builds("{}({})".format, pick(["last_day", "weekofyear", "dayofyear", "weekday"]), pick(STAMPS + DAYS)),
        st.builds("date_part({}, {})".format, pick(["'YEAR'", "'hour'", "'MINUTE'", "'doy'"]), pick(STAMPS + DAYS)),
        st.builds("try_cast({} as {})".format, pick(ANY_TIME), pick(["timestamp", "timestamp_ntz", "date"])),
        st.builds("({}) {} (null)".format, pick(STAMPS + DAYS), pick(["+", "-"])),
    )


def _as_spark_returns(value: object) -> object:
    """pyspark's TIMESTAMP: a naive datetime in this process's local time."""
    if isinstance(value, datetime.datetime) and value.tzinfo is not None:
        return value.astimezone().replace(tzinfo=None)
    return value


def _ours(sql: str, row: tuple, zone: str) -> tuple[str, object]:
    try:
        expr = parse_sql(f"select {sql} as v from r", CATALOG, zone).items[0].expr
        layout = {Column("r", c): i for i, c in enumerate(TABLE.column_names)}
        return "value", (str(type_of(expr)), _as_spark_returns(compile_expr(expr, layout)(row)))
    except (UnsupportedSqlError, SqlRuntimeError) as error:
        return "error", str(error)


def _spark(spark, sql: str) -> tuple[str, object]:
    try:
        frame = spark.sql(f"select {sql} as v from r")
        return "value", (frame.schema["v"].dataType.simpleString(), frame.collect()[0][0])
    except Exception as error:  # Spark's analysis or runtime exception
        return "error", str(error).splitlines()[0]


def _same(ours: tuple[str, object], theirs: tuple[str, object]) -> bool:
    if ours[0] != theirs[0]:
        # a refusal of ours (unsupported: a pattern, timestamp - timestamp) beside a Spark value is allowed
        return ours[0] == "error" and "not supported" in ours[1]
    return ours[0] == "error" or ours[1] == theirs[1] and type(ours[1][1]) is type(theirs[1][1])


@pytest.fixture(scope="module")
def spark():
    from operators.runtime.spark_session import make_spark_session

    session = make_spark_session(app="spark-ivm-timestamps", cores=1)
    before = session.conf.get("spark.sql.session.timeZone")
    yield session
    session.conf.set("spark.sql.session.timeZone", before)


@settings(max_examples=20, deadline=None, derandomize=True, phases=[Phase.explicit, Phase.reuse, Phase.generate],
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(row=rows, expressions=st.lists(_expressions(), min_size=30, max_size=30, unique=True), zone=st.sampled_from(ZONES))
def test_timestamp_expressions_evaluate_as_spark_evaluates_them(spark, row, expressions, zone):
    spark.conf.set("spark.sql.session.timeZone", zone)
    spark.createDataFrame([row], SPARK_SCHEMA).createOrReplaceTempView("r")
    ours = {sql: _ours(sql, row, zone) for sql in expressions}
    theirs = {sql: _spark(spark, sql) for sql in expressions}
    differing = {sql: (ours[sql], theirs[sql]) for sql in expressions if not _same(ours[sql], theirs[sql])}
    assert not differing, f"session time zone {zone}, row {row}: spark-ivm vs Spark differ on " + "\n".join(
        f"{sql}: ours {o}, Spark {t}" for sql, (o, t) in differing.items()
    )
    assert any(result[0] == "value" and result[1][1] is not None for result in ours.values())


@pytest.mark.parametrize("zone", ZONES)
def test_both_zones_are_compared(spark, zone):
    """The property above draws the zone; this pins one known DST case per zone."""
    spark.conf.set("spark.sql.session.timeZone", zone)
    row = (1, datetime.datetime(2024, 11, 3, 8, 15, tzinfo=UTC), None, None, None, None, None)
    spark.createDataFrame([row], SPARK_SCHEMA).createOrReplaceTempView("r")
    for sql in ("date_trunc('HOUR', ts)", "hour(ts)", "cast(ts as string)", "ts + interval '1' day"):
        assert _same(_ours(sql, row, zone), _spark(spark, sql)), sql
