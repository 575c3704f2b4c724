"""TIMESTAMP and TIMESTAMP_NTZ columns maintained end to end, in UTC and in a session time zone with DST.

The stream is written with pyarrow as a producer would (timestamps in milliseconds with the time
zone America/New_York, local date-times in microseconds, and a BINARY column the engine does not
read), read by the stream reader, and maintained batch by batch; after every batch the result must
equal DuckDB's recomputation in the same session time zone. The times straddle the 2024 DST changes
of America/Los_Angeles, where an hour is missing or repeated on the local time line.
"""

from __future__ import annotations

import datetime
import random

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from catalog.ddl import catalog_from_ddl
from operators.runtime.stream import StreamFormatError, Update, read_stream
from planner.view import MaintainedView
from tests.maintenance.checking import check_against_recomputation, check_against_spark

CATALOG = catalog_from_ddl("""
CREATE TABLE events (id INT PRIMARY KEY, user_id INT, ts TIMESTAMP, local_ts TIMESTAMP_NTZ, payload BINARY);
CREATE TABLE sessions (sid INT PRIMARY KEY, user_id INT, started TIMESTAMP);
""")
UTC = datetime.UTC
# around the spring-forward (2024-03-10 10:00 UTC) and fall-back (2024-11-03 09:00 UTC) of Los Angeles
STARTS = (datetime.datetime(2024, 3, 10, 6, tzinfo=UTC), datetime.datetime(2024, 11, 3, 5, tzinfo=UTC))


def _instant(rng: random.Random) -> datetime.datetime | None:
    if rng.random() < 0.05:
        return None
    return rng.choice(STARTS) + datetime.timedelta(minutes=15 * rng.randrange(40))


def _stream(seed: int, size: int = 160) -> dict[str, list[tuple]]:
    """Random inserts and deletes of both tables, as (row, _seq, _op) per table; timestamps repeat
    (grouping and joining on them) and some are NULL."""
    rng = random.Random(seed)
    live: dict[str, dict[int, tuple]] = {"events": {}, "sessions": {}}
    written: dict[str, list[tuple]] = {"events": [], "sessions": []}
    for seq in range(size):
        table = "events" if rng.random() < 0.7 else "sessions"
        rows = live[table]
        if rows and rng.random() < 0.3:
            key = rng.choice(sorted(rows))
            written[table].append((rows.pop(key), seq, -1))
            continue
        key = rng.randrange(1000)
        if key in rows:
            continue
        ts = _instant(rng)
        if table == "events":
            local = None if ts is None else ts.replace(tzinfo=None) + datetime.timedelta(hours=rng.choice((0, -7, -8)))
            row = (key, rng.randrange(4), ts, local, b"\x00\x01")
        else:
            row = (key, rng.randrange(4), ts)
        rows[key] = row
        written[table].append((row, seq, 1))
    return written


def _write_with_pyarrow(directory, written: dict[str, list[tuple]]) -> None:
    """The producer's files: instants as timestamp[ms, tz=America/New_York], local date-times as
    timestamp[us], the BINARY payload as binary."""
    instant = pa.timestamp("ms", tz="America/New_York")
    schemas = {
        "events": [("id", pa.int32()), ("user_id", pa.int32()), ("ts", instant), ("local_ts", pa.timestamp("us")),
                   ("payload", pa.binary())],
        "sessions": [("sid", pa.int32()), ("user_id", pa.int32()), ("started", instant)],
    }
    for table, fields in schemas.items():
        entries = written[table]
        columns = {name: pa.array([row[i] for row, _, _ in entries], kind) for i, (name, kind) in enumerate(fields)}
        columns["_seq"] = pa.array([seq for _, seq, _ in entries], pa.int64())
        columns["_op"] = pa.array([op for _, _, op in entries], pa.int32())
        pq.write_table(pa.table(columns), directory / f"{table}.parquet")


QUERIES = {
    "group by the hour": "SELECT date_trunc('hour', ts) AS h, count(*) AS n, min(ts) AS first, max(local_ts) AS last "
                         "FROM events GROUP BY date_trunc('hour', ts)",
    "hour and day of the instant": "SELECT hour(ts) AS h, CAST(ts AS DATE) AS d, count(*) AS n FROM events "
                                   "WHERE ts >= '2024-03-10 00:00:00' GROUP BY hour(ts), CAST(ts AS DATE)",
    "join on a timestamp": "SELECT e.id, s.sid, e.ts FROM events e JOIN sessions s ON e.ts = s.started",
    "top-k by time": "SELECT id, ts FROM events WHERE ts IS NOT NULL ORDER BY ts DESC, id LIMIT 5",
    "inequality join": "SELECT e.id, s.sid FROM events e JOIN sessions s ON e.user_id = s.user_id "
                       "AND e.ts >= s.started AND e.ts < s.started + INTERVAL '2' HOUR",
    "local date-times": "SELECT date_trunc('DAY', local_ts) AS d, count(*) AS n FROM events "
                        "WHERE local_ts < TIMESTAMP_NTZ '2024-11-03 00:00:00' GROUP BY date_trunc('DAY', local_ts)",
}


def _updates(tmp_path, seed: int) -> list[Update]:
    _write_with_pyarrow(tmp_path, _stream(seed))
    updates = list(read_stream(tmp_path, CATALOG))
    assert any(isinstance(u.row[2], datetime.datetime) and u.row[2].tzinfo is not None for u in updates)
    return updates


# DuckDB's date_trunc keeps a local date-time local; Spark's (and the engine's) is a TIMESTAMP, read in the session zone
DUCKDB_QUERIES = {"local date-times": QUERIES["local date-times"].replace(
    "SELECT date_trunc('DAY', local_ts) AS d", "SELECT CAST(date_trunc('DAY', local_ts) AS TIMESTAMP) AS d")}


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_timestamp_views_equal_recomputation_after_every_batch_in_utc(tmp_path, name):
    check_against_recomputation(QUERIES[name], CATALOG, _updates(tmp_path, len(name)), batch_size=7,
                                informative_at_least=0.5, oracle_sql=DUCKDB_QUERIES.get(name))


@pytest.fixture(scope="module")
def spark_in_los_angeles():
    from operators.runtime.spark_session import make_spark_session

    spark = make_spark_session(app="spark-ivm-timestamps", cores=1)
    before = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "America/Los_Angeles")
    yield spark
    spark.conf.set("spark.sql.session.timeZone", before)


@pytest.mark.spark
@pytest.mark.parametrize("name", sorted(QUERIES))
def test_timestamp_views_equal_spark_after_every_batch_across_dst(tmp_path, name, spark_in_los_angeles):
    """Against Spark itself: DuckDB truncates a local hour repeated by DST to one offset, Spark (and
    the engine) keep each instant's own offset (``ZonedDateTime.truncatedTo``)."""
    check_against_spark(QUERIES[name], CATALOG, _updates(tmp_path, len(name)), 7, spark_in_los_angeles, str(tmp_path),
                        time_zone="America/Los_Angeles", informative_at_least=0.5)


def test_a_naive_arrow_timestamp_is_read_into_a_timestamp_column_as_utc(tmp_path):
    table = pa.table({"sid": pa.array([1], pa.int32()), "user_id": pa.array([1], pa.int32()),
                      "started": pa.array([datetime.datetime(2024, 3, 10, 10, 30)], pa.timestamp("s")),
                      "_seq": pa.array([0], pa.int64()), "_op": pa.array([1], pa.int32())})
    pq.write_table(table, tmp_path / "sessions.parquet")
    (update,) = read_stream(tmp_path, CATALOG)
    assert update.row[2] == datetime.datetime(2024, 3, 10, 10, 30, tzinfo=UTC)


def test_a_nanosecond_timestamp_with_a_fraction_of_a_microsecond_is_invalid(tmp_path):
    table = pa.table({"sid": pa.array([1], pa.int32()), "user_id": pa.array([1], pa.int32()),
                      "started": pa.array([1_710_066_600_000_000_001], pa.timestamp("ns", tz="UTC")),
                      "_seq": pa.array([0], pa.int64()), "_op": pa.array([1], pa.int32())})
    pq.write_table(table, tmp_path / "sessions.parquet")
    with MaintainedView("SELECT count(*) AS n FROM sessions", CATALOG) as view, pytest.raises(Exception, match="started"):
        view.apply(read_stream(tmp_path, CATALOG))


def test_python_rows_take_aware_datetimes_for_timestamp_and_naive_ones_for_timestamp_ntz():
    sql = "SELECT hour(ts) AS h, local_ts FROM events"
    with MaintainedView(sql, CATALOG, time_zone="America/Los_Angeles") as view:
        view.apply([Update(0, "events", 1, (1, 1, datetime.datetime(2024, 11, 3, 9, 30, tzinfo=UTC),
                                            datetime.datetime(2024, 1, 1, 12)))])
        assert view.result() == [(1, datetime.datetime(2024, 1, 1, 12))]
        for row in [(2, 1, datetime.datetime(2024, 1, 1), None), (3, 1, None, datetime.datetime(2024, 1, 1, tzinfo=UTC))]:
            with pytest.raises((StreamFormatError, ValueError), match="datetime"):
                view.apply([Update(1, "events", 1, row)])
        assert view.result() == [(1, datetime.datetime(2024, 1, 1, 12))]


ON_THE_SPARK_ENGINE = {
    "group by the hour": "SELECT date_trunc('HOUR', ts) AS h, count(*) AS n FROM events GROUP BY date_trunc('HOUR', ts)",
    "filter on the instant": "SELECT id, ts FROM events WHERE ts >= TIMESTAMP '2024-11-03 01:30:00' "
                             "AND ts < TIMESTAMP '2024-11-03 02:30:00'",
    "timestampdiff": "SELECT user_id, sum(timestampdiff(HOUR, TIMESTAMP '2024-03-10 00:00:00', ts)) AS hours "
                     "FROM events GROUP BY user_id",
}


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(ON_THE_SPARK_ENGINE))
def test_timestamp_views_on_the_spark_engine_equal_spark_in_the_sessions_time_zone(tmp_path, name,
                                                                                    spark_in_los_angeles):
    """The Spark engine reads TIMESTAMPs in as instants whatever zone Arrow shows them in, and the view
    takes the session's time zone (America/Los_Angeles, not given to it): the repeated hour of the
    fall-back and the missing one of the spring-forward land where Spark's own query puts them."""
    check_against_spark(ON_THE_SPARK_ENGINE[name], CATALOG, _updates(tmp_path, len(name)), 40, spark_in_los_angeles,
                        str(tmp_path / "work"), engine="spark", informative_at_least=0.5)
