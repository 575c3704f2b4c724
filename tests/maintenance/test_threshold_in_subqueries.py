"""A comparison with an uncorrelated scalar subquery (a threshold, "the last 30 days of data") inside
another subquery or below an aggregate, over timestamps: the blind user view
``examples/user_views/mobility/idle_active_drivers.sql`` (a NOT IN whose subquery compares with
``(SELECT MAX(requested_at) FROM trips) - INTERVAL 30 DAYS``).

The NOT IN's views are aggregates over the subquery's rows; the threshold inside them makes each a
nested aggregate (a join-select-aggregate with one global value, AJU Theorem 15) whose threshold
query feeds it a timestamp, and the null-aware NOT IN's facts view keeps a HAVING above it.
Maintained results equal DuckDB's recomputation after every batch of a random insert/delete stream
in which the latest trip (the threshold) is inserted and deleted, driver ids repeat and are NULL."""

from __future__ import annotations

import datetime
import random

import pytest

from catalog.ddl import catalog_from_ddl
from operators.runtime.stream import Update
from planner.compiler import compile_query
from planner.ir.maintenance import NestedAggregate, ThresholdFilter
from tests.maintenance.checking import check_against_recomputation

DDL = """
CREATE TABLE drivers (driver_id INT PRIMARY KEY, status STRING, city_id INT);
CREATE TABLE trips (trip_id INT PRIMARY KEY, driver_id INT, requested_at TIMESTAMP, note STRING)
"""

RECENT = "t.requested_at >= (SELECT MAX(requested_at) FROM trips) - INTERVAL 30 DAYS"
QUERIES = {
    "NOT IN over a non-NULL column": f"""SELECT d.driver_id, d.city_id FROM drivers d WHERE d.status = 'active'
        AND d.driver_id NOT IN (SELECT t.driver_id FROM trips t WHERE t.driver_id IS NOT NULL AND {RECENT})""",
    "null-aware NOT IN": f"""SELECT d.driver_id FROM drivers d
        WHERE d.driver_id NOT IN (SELECT t.driver_id FROM trips t WHERE t.trip_id > 3 AND {RECENT})""",
    "NOT EXISTS": f"""SELECT d.driver_id FROM drivers d
        WHERE NOT EXISTS (SELECT 1 FROM trips t WHERE t.driver_id = d.driver_id AND {RECENT})""",
    "IN": f"SELECT d.driver_id FROM drivers d WHERE d.driver_id IN (SELECT t.driver_id FROM trips t WHERE {RECENT})",
    "a grouped count with HAVING": f"""SELECT t.driver_id, count(*) AS n FROM trips t WHERE {RECENT}
        GROUP BY t.driver_id HAVING count(*) > 1""",
    "a string threshold": "SELECT count(*) AS n FROM trips t WHERE t.note >= (SELECT max(note) FROM trips) ",
}

#: the default set's representative case (the blind view's shape); the rest are slow
FAST = {"NOT IN over a non-NULL column"}

START = datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC)


def trips_stream(seed: int, updates: int = 300) -> list[Update]:
    """Random inserts and deletes of drivers and trips over 90 days; a trip's driver is NULL one time
    in ten, and deleting a trip now and then deletes the latest one, moving the threshold back."""
    rng = random.Random(seed)
    live: dict[str, list[tuple]] = {"drivers": [], "trips": []}
    stream: list[Update] = []
    trip_ids = iter(range(1, 10**6))
    while len(stream) < updates:
        table = rng.choice(["drivers", "trips", "trips"])
        rows = live[table]
        if rows and rng.random() < 0.35:
            latest = max(rows, key=lambda r: r[2]) if table == "trips" and rng.random() < 0.2 else None
            row = latest or rng.choice(rows)
            rows.remove(row)
            stream.append(Update(len(stream) + 1, table, -1, row))
            continue
        if table == "drivers":
            free = [k for k in range(1, 16) if all(r[0] != k for r in rows)]
            if not free:
                continue
            row = (rng.choice(free), rng.choice(["active", "off"]), rng.randint(1, 3))
        else:
            driver = None if rng.random() < 0.1 else rng.randint(1, 15)
            row = (next(trip_ids), driver, START + datetime.timedelta(days=rng.randint(0, 90)), rng.choice("abcde"))
        rows.append(row)
        stream.append(Update(len(stream) + 1, table, 1, row))
    return stream


@pytest.mark.parametrize("name", [pytest.param(n, marks=() if n in FAST else pytest.mark.slow) for n in QUERIES])
def test_a_threshold_inside_a_subquery_equals_recomputation(name):
    check_against_recomputation(QUERIES[name], catalog_from_ddl(DDL), trips_stream(1), batch_size=10,
                                informative_at_least=0.5)


def test_the_not_in_views_are_nested_aggregates_fed_the_threshold():
    plan = compile_query(QUERIES["null-aware NOT IN"], catalog_from_ddl(DDL), strict=True).plan
    nested = [n for n in plan.walk() if isinstance(n, NestedAggregate)]
    assert len(nested) == 2 and all(n.feeds for n in nested)


def test_a_string_threshold_is_no_fed_value_but_a_threshold_filter():
    compiled = compile_query(QUERIES["a string threshold"], catalog_from_ddl(DDL), strict=True)
    assert any(isinstance(n, ThresholdFilter) for n in compiled.plan.walk())
    assert "type string feeds no aggregate index" in compiled.context.refusals["RecognizeCorrelatedNestedAggregate"]
