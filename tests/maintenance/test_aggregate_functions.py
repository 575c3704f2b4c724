"""Spark's aggregate functions beyond SUM/COUNT/AVG/MIN/MAX (planner/sql/aggregates.py): FILTER
(WHERE ...) on every aggregate, count_if, bool_and/bool_or, max_by/min_by, count(DISTINCT a, b) beside
other aggregates, MIN/MAX of every ordered type, each equal to DuckDB's recomputation after every
batch of random insert/delete streams (NULLs, NaN and infinities, duplicate rows of a keyless
table, groups that empty and refill), on both local runners, with non-empty results."""

from __future__ import annotations

import datetime
import random
import re
from decimal import Decimal

import pytest

from catalog.ddl import catalog_from_ddl
from operators.doubles import NAN
from operators.runtime.stream import Update
from operators.stages.aggregate import GroupAggregateStage, RingAggregateStage
from operators.stages.insert_only_aggregate import InsertOnlyAggregateStage
from operators.stages.payload_aggregate import PayloadAggregateStage
from planner.compiler import compile_query
from planner.explain import explain_text
from planner.ir.gjt_aggregate import READ_FROM_ROOT
from tests.maintenance.checking import check_against_recomputation

# ``sale`` has no primary key (a row may be present several times); ``rank``, ``label`` and ``at`` are
# unique per row that differs from another (or NULL), so max_by/min_by have no ties, whose answer
# Spark leaves to chance.
DDL = """
CREATE TABLE shop (id INT PRIMARY KEY, city STRING);
CREATE TABLE sale (shop_id INT REFERENCES shop(id), g INT, status STRING, amount DECIMAL(10,2), day DATE,
                   score DOUBLE, paid BOOLEAN, qty INT, rank INT, label STRING, at DATE)
"""
CATALOG = catalog_from_ddl(DDL)
INSERT_ONLY = catalog_from_ddl(DDL.replace("at DATE)", "at DATE) TBLPROPERTIES ('ivm.insert_only' = 'true')"))

_SCORES = [None, 1.5, -0.0, 0.0, 2.5, -3.25, NAN, float("inf"), float("-inf")]


def _orderings(seq: int, rng: random.Random) -> tuple:
    """rank, label and at of a new row: unique (ties would leave max_by to chance), NULL one time in ten."""
    if rng.random() < 0.1:
        return None, None, None
    shuffled = (seq * 7919) % 10007  # unique, not in the order of insertion
    return shuffled, f"L{shuffled:05d}", datetime.date(2000, 1, 1) + datetime.timedelta(days=shuffled)


def sale_stream(seed: int, size: int = 620, deletes: bool = True) -> list[Update]:
    """Shops, then sales in four groups: phases of mostly inserts and mostly deletes, so groups (and the
    whole table) empty and refill; a present row is sometimes inserted again (a duplicate)."""
    rng = random.Random(seed)
    stream = [Update(seq, "shop", 1, (seq, rng.choice(["oslo", "rome", None]))) for seq in range(1, 4)]
    present: list[tuple] = []
    for seq in range(len(stream) + 1, size):
        draining = deletes and (seq // 90) % 2 == 1
        if present and deletes and rng.random() < (0.8 if draining else 0.25):
            stream.append(Update(seq, "sale", -1, present.pop(rng.randrange(len(present)))))
            continue
        if present and rng.random() < 0.15:
            row = rng.choice(present)
        else:
            row = (rng.randint(1, 3), rng.randint(1, 4), rng.choice(["paid", "open", "void", None]),
                   rng.choice([None, Decimal("1.50"), Decimal("-2.25"), Decimal("10.00"), Decimal("0.01")]),
                   rng.choice([None, *(datetime.date(2024, 1, d) for d in (1, 9, 17, 28))]),
                   rng.choice(_SCORES), rng.choice([True, False, None]), rng.choice([None, 1, 2, 5, -4]),
                   *_orderings(seq, rng))
        present.append(row)
        stream.append(Update(seq, "sale", 1, row))
    return stream


def duckdb_count_if(sql: str) -> str:
    """``sql`` with count_if(p) spelled count(CASE WHEN p THEN 1 END): DuckDB's count_if is NULL over
    only NULLs, Spark's is 0 (checked on pyspark 4). Arguments hold no parentheses here."""
    return re.sub(r"count_if\(([^()]*)\)", r"count(case when \1 then 1 end)", sql)


def test_the_stream_repeats_rows_and_empties_groups_and_the_table():
    """What the comparisons below rely on: duplicates present at once, and groups (and the whole table)
    emptying and refilling."""
    stream = [u for u in sale_stream(seed=1) if u.table == "sale"]
    present: dict[tuple, int] = {}
    per_group: dict[int, int] = {}
    duplicated = emptied_table = 0
    emptied_groups: set[int] = set()
    for update in stream:
        present[update.row] = present.get(update.row, 0) + update.op
        per_group[update.row[1]] = per_group.get(update.row[1], 0) + update.op
        duplicated += present[update.row] > 1
        emptied_groups |= {g for g, n in per_group.items() if n == 0}
        emptied_table += update.op < 0 and not any(per_group.values())
    assert duplicated and emptied_table and emptied_groups == {1, 2, 3, 4} and sum(per_group.values()) > 0


#: name → (Spark SQL, DuckDB's spelling where it differs)
QUERIES: dict[str, tuple[str, str | None]] = {
    "FILTER on every aggregate": (
        """select g, count(*) filter (where status = 'paid') as n, sum(amount) filter (where paid) as s,
                  avg(qty) filter (where score > 0) as a, min(day) filter (where status <> 'void') as lo,
                  max(score) filter (where paid) as hi, count(qty) filter (where not paid) as c
           from sale group by g""", None),
    "FILTER with DISTINCT": (
        """select g, count(distinct status) filter (where qty > 0) as ds, sum(distinct qty) filter (where paid) as sq,
                  avg(distinct amount) filter (where status = 'open') as aa
           from sale group by g""", None),
    "count_if, bool_and, bool_or": (
        """select g, count_if(paid) as ci, count_if(score > 1) as cs, bool_and(paid) as ba, bool_or(paid) as bo,
                  bool_and(qty > 0) as bq, bool_or(status = 'void') as bv, sum(qty) as sq
           from sale group by g""", None),
    "count_if and bool_and with FILTER": (
        """select g, count_if(paid) filter (where qty > 1) as ci, bool_and(paid) filter (where status = 'open') as ba,
                  bool_or(score > 0) filter (where day > date '2024-01-05') as bo
           from sale group by g""", None),
    "max_by and min_by of every type": (
        """select g, max_by(status, rank) as s, min_by(amount, label) as a, max_by(day, at) as d,
                  min_by(paid, rank) as p, max_by(score, label) as sc, min_by(qty, at) as q
           from sale group by g""",
        """select g, arg_max_null(status, rank) as s, arg_min_null(amount, label) as a, arg_max_null(day, at) as d,
                  arg_min_null(paid, rank) as p, arg_max_null(score, label) as sc, arg_min_null(qty, at) as q
           from sale group by g"""),
    "max_by with FILTER, beside sums": (
        "select g, max_by(status, rank) filter (where paid) as s, sum(qty) as q, count(*) as n from sale group by g",
        "select g, arg_max_null(status, rank) filter (where paid) as s, sum(qty) as q, count(*) as n from sale group by g"),
    "MIN and MAX of every ordered type": (
        """select g, min(status) as s0, max(status) as s1, min(amount) as a0, max(amount) as a1, min(day) as d0,
                  max(day) as d1, min(score) as f0, max(score) as f1, min(paid) as b0, max(paid) as b1
           from sale group by g""", None),
    "COUNT(DISTINCT) beside other aggregates, of several columns": (
        """select g, count(distinct status) as ds, count(distinct status, qty) as dsq, count(status, qty) as csq,
                  sum(distinct qty) as sq, sum(amount) as sa, max(day) as md, count(*) as n
           from sale group by g""",
        """select g, count(distinct status) as ds,
                  count(distinct case when status is not null and qty is not null then (status, qty) end) as dsq,
                  count(case when status is not null and qty is not null then 1 end) as csq,
                  sum(distinct qty) as sq, sum(amount) as sa, max(day) as md, count(*) as n
           from sale group by g"""),
    "global aggregates over a table that empties": (
        """select count(*) filter (where paid) as n, count_if(qty > 1) as c, bool_and(paid) as ba,
                  max_by(status, rank) as s, count(distinct status, day) as d, min(score) as m
           from sale""",
        """select count(*) filter (where paid) as n, count_if(qty > 1) as c, bool_and(paid) as ba,
                  arg_max_null(status, rank) as s,
                  count(distinct case when status is not null and day is not null then (status, day) end) as d,
                  min(score) as m
           from sale"""),
    "over a foreign-key join, in HAVING": (
        """select city, count(*) filter (where status = 'paid') as n, bool_or(paid) as bo, min_by(status, rank) as s
           from sale, shop where shop_id = id group by city having count_if(qty > 0) > 1""",
        """select city, count(*) filter (where status = 'paid') as n, bool_or(paid) as bo, arg_min_null(status, rank) as s
           from sale, shop where shop_id = id group by city having count_if(qty > 0) > 1"""),
}


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled runner", "generic stages"])
@pytest.mark.parametrize("name", list(QUERIES))
def test_aggregate_equals_recomputation_after_every_batch(name, compiled):
    sql, duckdb_sql = QUERIES[name]
    view = check_against_recomputation(sql, CATALOG, sale_stream(seed=len(name)), batch_size=23,
                                       informative_at_least=0.6, oracle_sql=duckdb_count_if(duckdb_sql or sql),
                                       compiled=compiled)
    assert view.result(), "the final result must not be empty"


@pytest.mark.parametrize("name", ["max_by and min_by of every type", "MIN and MAX of every ordered type"])
def test_insert_only_input_keeps_only_the_extreme_and_equals_recomputation(name):
    sql, duckdb_sql = QUERIES[name]
    assert InsertOnlyAggregateStage in _stage_types(sql, INSERT_ONLY)
    view = check_against_recomputation(sql, INSERT_ONLY, sale_stream(seed=3, deletes=False), batch_size=40,
                                       informative_at_least=0.9, oracle_sql=duckdb_sql)
    assert view.result()


def _stage_types(sql: str, catalog=CATALOG) -> list[type]:
    return [type(n.stage) for n in compile_query(sql, catalog, strict=True).dataflow.stages]


def test_filter_count_if_and_bool_aggregates_stay_ring_aggregates():
    """Written over counts, they keep the O(1) ring stage (no values kept per group)."""
    sql = QUERIES["count_if, bool_and, bool_or"][0]
    assert RingAggregateStage in _stage_types(sql)
    assert RingAggregateStage in _stage_types(QUERIES["FILTER on every aggregate"][0].replace(
        "min(day) filter (where status <> 'void') as lo,", "").replace("max(score) filter (where paid) as hi,", ""))


def test_a_filter_over_one_atom_is_still_read_off_the_gjt_payload():
    """The CASE a FILTER becomes reads one atom: the GJT's ring payload takes it (no join enumeration)."""
    from tests.maintenance.test_gjt_aggregate import CATALOG as catalog
    from tests.maintenance.test_gjt_aggregate import random_stream

    sql = ("select r.b, count(*) filter (where s.f > 2) as n, sum(s.e) filter (where s.f > 2) as t, "
           "count_if(s.e > 0) as c, bool_or(s.e > 3) as o from r, s where r.a < s.d group by r.b")
    assert PayloadAggregateStage in _stage_types(sql, catalog)
    assert READ_FROM_ROOT in explain_text(compile_query(sql, catalog), verbose=True)
    check_against_recomputation(sql, catalog, random_stream(seed=7), batch_size=25, informative_at_least=0.5,
                                oracle_sql=duckdb_count_if(sql))


@pytest.mark.parametrize("join", ["r.a < s.d", "r.c = s.f"], ids=["inequality join (GJT)", "equi-join without a key"])
def test_count_distinct_beside_other_aggregates_over_joins_that_are_not_foreign_keys(join):
    from tests.maintenance.test_gjt_aggregate import CATALOG as catalog
    from tests.maintenance.test_gjt_aggregate import random_stream
    sql = (f"select r.b, count(distinct s.e) as d, sum(distinct s.f) as sf, count(distinct s.e, r.c) as d2, "
           f"sum(s.e) as t, min(s.f) filter (where s.e < 3) as m, count(*) as n from r, s where {join} group by r.b")
    oracle = sql.replace("count(distinct s.e, r.c)", "count(distinct case when s.e is not null and r.c is not null "
                                                     "then (s.e, r.c) end)")
    stream = random_stream(seed=11)
    assert GroupAggregateStage in _stage_types(sql, catalog)
    view = check_against_recomputation(sql, catalog, stream, batch_size=25, informative_at_least=0.5, oracle_sql=oracle)
    assert view.result()


def test_explain_shows_the_state_and_cost_of_max_by():
    compiled = compile_query(QUERIES["max_by with FILTER, beside sums"][0], CATALOG)
    (described,) = [n.stage.describe() for n in compiled.dataflow.stages if isinstance(n.stage, GroupAggregateStage)]
    assert described.operator == "GroupAggregate (MAX_BY, SUM, COUNT)"
    assert "(ordering, value) pairs" in described.state and described.update_cost.startswith("O(log n) per join change")
    assert "MAX_BY" in explain_text(compiled)


def test_timestamps_are_ordered_values_like_any_other(tmp_path):
    """MIN/MAX, max_by/min_by and count(DISTINCT a, b) are type-generic: TIMESTAMP and TIMESTAMP_NTZ
    values need nothing of their own (test_timestamps.py's stream: repeated and NULL instants)."""
    from tests.maintenance.test_timestamps import CATALOG as catalog
    from tests.maintenance.test_timestamps import _updates
    sql = ("select user_id, min(ts) as first, max(local_ts) filter (where id > 300) as last, max_by(ts, id) as latest, "
           "min_by(local_ts, id) as earliest, count(distinct ts, user_id) as d from events group by user_id")
    oracle = (sql.replace("max_by(", "arg_max_null(").replace("min_by(", "arg_min_null(")
              .replace("count(distinct ts, user_id)", "count(distinct case when ts is not null then (ts, user_id) end)"))
    view = check_against_recomputation(sql, catalog, _updates(tmp_path, 3), batch_size=9, informative_at_least=0.8,
                                       oracle_sql=oracle)
    assert view.result()
