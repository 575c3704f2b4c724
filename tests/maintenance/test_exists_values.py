"""EXISTS / NOT EXISTS / IN (subquery) used as values, in the SELECT list and inside aggregates,
maintained under inserts and deletes and equal to DuckDB's recomputation after every batch.

The stream moves trips between cities and ratings between trips, deletes the last rating of a trip
(EXISTS turns false), and puts NULLs in the correlation keys, in IN's operand and in the subquery's
column (a set holding a NULL, an empty set, a NULL operand). Spark 4 evaluates IN / NOT IN outside
WHERE as an existence join, two-valued: SQL's NULL answer is FALSE there, which DuckDB is told with
``coalesce(..., false)`` (``DUCKDB``); the slow test compares them with Spark itself.
"""

from __future__ import annotations

import random
import re

import pytest

from catalog.ddl import catalog_from_ddl
from operators.runtime.stream import Update
from planner.compiler import UnsupportedQueryError
from planner.view import MaintainedView
from tests.maintenance.checking import check_against_recomputation, check_against_spark

CATALOG = catalog_from_ddl("""
CREATE TABLE trips (trip_id INT PRIMARY KEY, city_id INT, status STRING, fare INT);
CREATE TABLE ratings (rating_id INT PRIMARY KEY, trip_id INT, stars INT);
""")


def _stream(seed: int, steps: int = 260) -> list[Update]:
    rng = random.Random(seed)
    live: dict[str, dict[int, tuple]] = {"trips": {}, "ratings": {}}
    updates: list[Update] = []

    def maybe_null(value: int) -> int | None:
        return None if rng.random() < 0.08 else value

    def row(table: str, key: int) -> tuple:
        if table == "trips":
            return key, maybe_null(rng.randint(1, 3)), rng.choice(["completed", "cancelled"]), maybe_null(rng.randint(1, 5))
        return key, maybe_null(rng.randint(1, 12)), maybe_null(rng.randint(1, 5))

    for _ in range(steps):
        table = "trips" if rng.random() < 0.45 else "ratings"
        rows = live[table]
        if rows and rng.random() < 0.35:
            key = rng.choice(sorted(rows))
            updates.append(Update(len(updates) + 1, table, -1, rows.pop(key)))
            if rng.random() < 0.4:  # moved: another trip, city or fare
                rows[key] = row(table, key)
                updates.append(Update(len(updates) + 1, table, 1, rows[key]))
        else:
            key = rng.randint(1, 12 if table == "trips" else 40)
            if key not in rows:
                rows[key] = row(table, key)
                updates.append(Update(len(updates) + 1, table, 1, rows[key]))
    return updates


QUERIES = {
    "funnel per city, EXISTS inside SUM": "SELECT t.city_id, COUNT(*) AS requested, "
                                          "SUM(CASE WHEN t.status = 'completed' THEN 1 ELSE 0 END) AS completed, "
                                          "SUM(CASE WHEN EXISTS (SELECT 1 FROM ratings r WHERE r.trip_id = t.trip_id) "
                                          "THEN 1 ELSE 0 END) AS rated FROM trips t GROUP BY t.city_id",
    "EXISTS and NOT EXISTS per trip, with a local filter": "SELECT t.trip_id, EXISTS (SELECT 1 FROM ratings r "
                                                           "WHERE r.trip_id = t.trip_id AND r.stars >= 4) AS liked, "
                                                           "NOT EXISTS (SELECT * FROM ratings r WHERE t.trip_id = r.trip_id) "
                                                           "AS unrated FROM trips t WHERE t.status = 'completed'",
    "IN and NOT IN per trip, NULLs read as FALSE": "SELECT t.trip_id, t.fare IN (SELECT r.stars FROM ratings r "
                                                   "WHERE r.trip_id = t.trip_id) AS fare_is_a_rating, t.fare NOT IN "
                                                   "(SELECT r.stars FROM ratings r WHERE r.trip_id = t.city_id) AS not_in "
                                                   "FROM trips t",
    "IN inside COUNT_IF-like SUM, grouped": "SELECT t.status, SUM(CASE WHEN t.fare IN (SELECT r.stars FROM ratings r "
                                            "WHERE r.trip_id = t.trip_id) THEN 1 ELSE 0 END) AS matched, "
                                            "COUNT(*) AS n FROM trips t GROUP BY t.status",
}
_IN = re.compile(r"(t\.fare (?:NOT )?IN \(SELECT [^)]*\))")
#: what DuckDB runs instead: each IN / NOT IN's SQL answer with NULL read as FALSE, as Spark's existence join
DUCKDB = {name: _IN.sub(r"coalesce(\1, false)", sql) for name, sql in QUERIES.items()}


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "generic"])
@pytest.mark.parametrize("name", sorted(QUERIES))
def test_exists_and_in_values_equal_recomputation_after_every_batch(name, compiled):
    check_against_recomputation(QUERIES[name], CATALOG, _stream(len(name)), batch_size=6, informative_at_least=0.9,
                                compiled=compiled, oracle_sql=DUCKDB[name])


def test_in_and_not_in_as_values_are_spark_s_two_valued_existence_joins():
    sql = QUERIES["IN and NOT IN per trip, NULLs read as FALSE"]
    with MaintainedView(sql, CATALOG) as view:
        view.apply([Update(1, "trips", 1, (1, 1, "completed", 5)), Update(2, "trips", 1, (2, 1, "completed", None)),
                    Update(3, "trips", 1, (3, 1, "completed", 4)), Update(4, "ratings", 1, (1, 1, 5)),
                    Update(5, "ratings", 1, (2, 2, 3)), Update(6, "ratings", 1, (3, 3, None))])
        # IN: 5 in {5}; NULL in {3} and 4 in {NULL} are FALSE (SQL: NULL). NOT IN reads trip 1's set {5}:
        # 5 is in it, NULL is FALSE (SQL: NULL), 4 is not
        assert sorted(view.result()) == [(1, True, False), (2, False, False), (3, False, True)]
        view.apply([Update(7, "ratings", -1, (1, 1, 5))])  # trip 1's set is empty: IN FALSE, NOT IN TRUE, a NULL too
        assert sorted(view.result()) == [(1, False, True), (2, False, True), (3, False, True)]
        view.apply([Update(8, "ratings", 1, (8, 1, None))])  # it holds a NULL only: NOT IN FALSE for every fare
        assert sorted(view.result()) == [(1, False, False), (2, False, False), (3, False, False)]


@pytest.mark.parametrize("sql", [
    "SELECT t.trip_id, EXISTS (SELECT 1 FROM ratings r WHERE r.trip_id > t.trip_id) FROM trips t",
    "SELECT t.city_id, EXISTS (SELECT 1 FROM ratings r WHERE r.trip_id = t.city_id) FROM trips t GROUP BY t.city_id",
    "SELECT t.trip_id, t.fare IN (SELECT max(stars) FROM ratings r WHERE r.trip_id = t.trip_id) FROM trips t",
])
def test_other_shapes_are_refused_with_the_reason(sql):
    """An inequality correlation, an EXISTS outside the aggregates of a grouped block, an aggregate in IN's subquery."""
    with pytest.raises(UnsupportedQueryError, match="an EXISTS / IN correlated by equalities"):
        MaintainedView(sql, CATALOG)


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.parametrize("name", ["funnel per city, EXISTS inside SUM", "IN and NOT IN per trip, NULLs read as FALSE"])
def test_exists_and_in_values_equal_spark_after_every_batch(tmp_path, name):
    from operators.runtime.spark_session import make_spark_session

    spark = make_spark_session(app="spark-ivm-exists-values", cores=1)
    check_against_spark(QUERIES[name], CATALOG, _stream(3, 160), 20, spark, str(tmp_path), informative_at_least=0.9)
