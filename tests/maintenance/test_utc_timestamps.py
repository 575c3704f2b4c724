"""from_utc_timestamp / to_utc_timestamp maintained under inserts and deletes, the zone a constant or a
column of a joined table (a city's zone, which changes), equal to recomputation after every batch.

The instants straddle the 2024 DST changes of London and Los Angeles, so local hours repeat and go
missing. The DuckDB oracle writes both functions with DuckDB's ``timezone`` (planner/workloads/oracle.py:
sqlglot's own transpilation reads them the other way round). DuckDB takes a local time repeated by DST
with the later offset where Java (and Spark) take the earlier, and does not read offsets (``+05:30``)
or Java's short ids (``PST``) as zones: to_utc_timestamp in a zone with DST, those zones and invalid
ones are compared with Spark itself, in tests/planner/test_spark_timestamps.py and the slow test below.
"""

from __future__ import annotations

import datetime
import random

import pytest

from catalog.ddl import catalog_from_ddl
from operators.runtime.stream import Update
from planner.ir.values import SqlRuntimeError
from planner.view import MaintainedView
from tests.maintenance.checking import check_against_recomputation, check_against_spark

CATALOG = catalog_from_ddl("""
CREATE TABLE cities (city_id INT PRIMARY KEY, name STRING, zone STRING);
CREATE TABLE trips (trip_id INT PRIMARY KEY, city_id INT, at TIMESTAMP);
""")
UTC = datetime.UTC
# London springs forward 2024-03-31 01:00 UTC and falls back 2024-10-27 01:00 UTC; Los Angeles 2024-03-10
# 10:00 UTC and 2024-11-03 09:00 UTC
STARTS = (datetime.datetime(2024, 3, 30, 23, tzinfo=UTC), datetime.datetime(2024, 10, 26, 23, tzinfo=UTC),
          datetime.datetime(2024, 3, 10, 7, tzinfo=UTC), datetime.datetime(2024, 11, 3, 6, tzinfo=UTC))
REGIONS = ("Europe/London", "America/Los_Angeles", "Asia/Kolkata", "Australia/Lord_Howe", None)


def _stream(seed: int, steps: int = 240, regions=REGIONS) -> list[Update]:
    """Trips inserted and deleted (some at NULL times, some in no city), cities inserted and moved to
    another zone (a delete and an insert of the same key)."""
    rng = random.Random(seed)
    cities: dict[int, tuple] = {}
    trips: dict[int, tuple] = {}
    updates: list[Update] = []

    def emit(table: str, op: int, row: tuple) -> None:
        updates.append(Update(len(updates) + 1, table, op, row))

    for step in range(steps):
        if step < 4 or rng.random() < 0.1:
            key = rng.randint(1, 4)
            if key in cities:
                emit("cities", -1, cities.pop(key))
            cities[key] = (key, f"city {key}", rng.choice(regions))
            emit("cities", 1, cities[key])
        elif trips and rng.random() < 0.3:
            emit("trips", -1, trips.pop(rng.choice(sorted(trips))))
        else:
            key = len(updates) + 1
            at = None if rng.random() < 0.05 else rng.choice(STARTS) + datetime.timedelta(minutes=20 * rng.randrange(12))
            trips[key] = (key, rng.randint(1, 5), at)
            emit("trips", 1, trips[key])
    return updates


QUERIES = {
    "local hour per city, the zone a column": "SELECT c.name AS city, hour(from_utc_timestamp(t.at, c.zone)) AS local_hour, "
                                               "COUNT(*) AS requests FROM trips t JOIN cities c ON t.city_id = c.city_id "
                                               "GROUP BY c.name, hour(from_utc_timestamp(t.at, c.zone))",
    "local hour, a constant zone": "SELECT hour(from_utc_timestamp(at, 'Europe/London')) AS local_hour, COUNT(*) AS n "
                                   "FROM trips GROUP BY hour(from_utc_timestamp(at, 'Europe/London'))",
    "both directions per trip": "SELECT t.trip_id, from_utc_timestamp(t.at, c.zone) AS local_at, "
                                "to_utc_timestamp(t.at, 'Asia/Kolkata') AS utc_at FROM trips t LEFT JOIN cities c ON t.city_id = c.city_id",
}


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "generic"])
@pytest.mark.parametrize("name", sorted(QUERIES))
def test_utc_conversions_equal_recomputation_after_every_batch(name, compiled):
    check_against_recomputation(QUERIES[name], CATALOG, _stream(len(name)), batch_size=9, informative_at_least=0.9,
                                compiled=compiled)


def test_a_row_in_an_invalid_zone_fails_its_batch_with_spark_s_error_leaving_the_view_as_it_was():
    """Spark's zones are case-sensitive: ``europe/london`` fails the query where a trip is converted to it
    (a city in it without trips converts nothing, in Spark as here)."""
    sql = QUERIES["local hour per city, the zone a column"]
    at = datetime.datetime(2024, 7, 1, 12, tzinfo=UTC)
    with MaintainedView(sql, CATALOG) as view:
        view.apply([Update(1, "cities", 1, (1, "x", "Europe/London")), Update(2, "trips", 1, (1, 1, at))])
        assert view.result() == [("x", 13, 1)]
        with pytest.raises(SqlRuntimeError, match="INVALID_TIMEZONE.*europe/london"):
            view.apply([Update(3, "cities", 1, (2, "y", "europe/london")), Update(4, "trips", 1, (2, 2, at))])
        assert view.result() == [("x", 13, 1)]
        view.apply([Update(5, "cities", 1, (2, "y", "europe/london")), Update(6, "trips", 1, (2, 1, at))])
        assert view.result() == [("x", 13, 2)]


@pytest.mark.spark
@pytest.mark.slow
def test_offsets_and_short_ids_equal_spark_after_every_batch(tmp_path):
    """Zones DuckDB reads otherwise or not at all (offsets, Java's short ids, to_utc_timestamp across a
    DST change), against ``spark.sql``."""
    from operators.runtime.spark_session import make_spark_session

    spark = make_spark_session(app="spark-ivm-utc-timestamps", cores=1)
    updates = _stream(7, 160, ("+05:30", "-8", "GMT+1:30", "PST", "EST", "UTC", "Z", "Europe/London", "America/Los_Angeles"))
    sql = ("SELECT t.trip_id, from_utc_timestamp(t.at, c.zone) AS local_at, to_utc_timestamp(t.at, c.zone) AS utc_at "
           "FROM trips t LEFT JOIN cities c ON t.city_id = c.city_id")
    check_against_spark(sql, CATALOG, updates, 20, spark, str(tmp_path), informative_at_least=0.9)
