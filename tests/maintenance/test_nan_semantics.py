"""Spark SQL's NaN semantics for DOUBLE in every maintained plan (operators/doubles.py).

Spark's rules (SQL reference, "NaN Semantics"): NaN = NaN is true, all NaNs are one group and one
join key, and NaN is larger than any other number, in comparisons (``NaN > 1.0``), MIN/MAX and
ORDER BY. -0.0 and 0.0 are equal. Python's float NaN does none of this, so every query here runs
over a DOUBLE column holding NaN (written with different bits: a NaN's payload and sign are not
its value), -0.0, 0.0, ±Infinity, NULL and ordinary values, on random insert/delete streams, and
must equal recomputation after every batch: DuckDB in the fast set (it orders NaN greatest and has
NaN = NaN, as Spark: measured the same on the queries here), ``spark.sql`` itself in the Spark set,
on the compiled and the generic local runner, and on the Spark runner.
"""

from __future__ import annotations

import random
import re
import struct

import pytest

from catalog.ddl import catalog_from_ddl
from operators.doubles import NAN
from operators.runtime.stream import Update, read_stream, write_stream
from operators.runtime.validate import InvalidChangeError
from planner.view import MaintainedView
from tests.maintenance.checking import check_against_recomputation, check_against_spark

DDL = """
CREATE TABLE t (k INT PRIMARY KEY, g INT, x DOUBLE);
CREATE TABLE u (j INT PRIMARY KEY, y DOUBLE);
"""
CATALOG = catalog_from_ddl(DDL)
INSERT_ONLY = catalog_from_ddl(re.sub(r"\);", ") TBLPROPERTIES ('ivm.insert_only' = 'true');", DDL))


def _nan_with_bits(bits: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


#: How a value is written: a fresh NaN each time (never the one NaN), NaNs of other bits, signed zeros.
VALUES = (
    lambda: float("nan"),
    lambda: _nan_with_bits(0xFFF8000000000000),  # a negative NaN
    lambda: _nan_with_bits(0x7FF0000000000001),  # a signalling NaN's bits
    lambda: -0.0, lambda: 0.0, lambda: None, lambda: 1.0, lambda: 2.0, lambda: -1.5,
    lambda: float("inf"), lambda: float("-inf"),
)

QUERIES = {
    "grouped MIN/MAX": "select g, max(x) as hi, min(x) as lo, count(*) as n from t group by g",
    "global MIN/MAX": "select max(x) as hi, min(x) as lo, count(x) as n from t",
    "GROUP BY a double": "select x, count(*) as n from t group by x",
    "GROUP BY an expression making NaN": "select x - x as d, count(*) as n from t group by x - x",
    "join on doubles": "select t.k, u.j from t, u where t.x = u.y",
    "DISTINCT": "select distinct x from t",
    "COUNT(DISTINCT)": "select g, count(distinct x) as n from t group by g",
    "filter with a comparison": "select k, x from t where x > 1.0",
    "filter NaN = NaN": "select k from t where x = x * 1.0 and x >= 0.0",
    "ORDER BY": "select k, x from t order by x, k",
    "ORDER BY DESC LIMIT": "select k, x from t order by x desc, k limit 4",
    "ORDER BY LIMIT": "select k, x from t order by x, k limit 3",
    "inequality join": "select t.k, u.j from t, u where t.x < u.y",
    "HAVING on MAX": "select g, max(x) as hi from t group by g having max(x) > 100.0",
    "INTERSECT": "select x from t intersect select y from u",
    "GREATEST and IN": "select k, greatest(x, 1.0) as top, x in (0.0, 2.0) as hit from t",
}


def nan_stream(seed: int, size: int = 260, inserts_only: bool = False) -> list[Update]:
    """Random inserts and deletes of t and u over small domains, so values and groups repeat; a
    delete writes its row's value anew (another NaN object, -0.0 where 0.0 was inserted)."""
    rng = random.Random(seed)
    present: dict[str, dict[int, tuple]] = {"t": {}, "u": {}}
    updates = []
    for seq in range(1, size + 1):
        table = rng.choice("ttu")
        rows = present[table]
        if rows and not inserts_only and rng.random() < 0.35:
            key = rng.choice(sorted(rows))
            codes = rows.pop(key)
            written = tuple(VALUES[code]() if isinstance(code, int) and i == len(codes) - 1 else code
                            for i, code in enumerate(codes))
            zero_swapped = tuple(-v if v == 0.0 and isinstance(v, float) else v for v in written)
            updates.append(Update(seq, table, -1, zero_swapped if rng.random() < 0.3 else written))
            continue
        key = rng.randrange(60)
        if key in rows:
            continue
        code = rng.randrange(len(VALUES))
        rows[key] = (key, rng.randrange(4), code) if table == "t" else (key, code)
        updates.append(Update(seq, table, 1, rows[key][:-1] + (VALUES[code](),)))
    return updates


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "generic"])
@pytest.mark.parametrize("name", QUERIES)
def test_nan_queries_equal_recomputation_after_every_batch(name, compiled):
    for seed in (1, 2):
        check_against_recomputation(QUERIES[name], CATALOG, nan_stream(seed), batch_size=20,
                                    informative_at_least=0.5, compiled=compiled)


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "generic"])
@pytest.mark.parametrize("name", ["grouped MIN/MAX", "global MIN/MAX", "ORDER BY DESC LIMIT"])
def test_insert_only_plans_follow_nan_semantics(name, compiled):
    check_against_recomputation(QUERIES[name], INSERT_ONLY, nan_stream(3, inserts_only=True), batch_size=20,
                                informative_at_least=0.5, compiled=compiled)


def test_max_of_one_nan_and_two_numbers_is_nan():
    """The known symptom: max{1.0, NaN, 2.0} was 2.0 (Spark: NaN), on both MIN/MAX plans."""
    rows = [(1, 0, 1.0), (2, 0, float("nan")), (3, 0, 2.0)]
    for catalog in (CATALOG, INSERT_ONLY):
        with MaintainedView("select max(x) as hi, min(x) as lo from t", catalog) as view:
            view.apply([Update(i, "t", 1, row) for i, row in enumerate(rows)])
            assert view.result() == [(NAN, 1.0)]
            assert view.result()[0][0] is NAN


def test_nan_read_from_parquet_is_one_value(tmp_path):
    """The stream reader's path: NaNs of any bits in a Parquet column group together and delete."""
    updates = nan_stream(4)
    write_stream(tmp_path, CATALOG, updates)
    check_against_recomputation("select x, count(*) as n from t group by x", CATALOG, read_stream(tmp_path, CATALOG),
                                batch_size=25, informative_at_least=0.5)


BIDS = catalog_from_ddl("CREATE TABLE bids (id BIGINT PRIMARY KEY, volume DOUBLE NOT NULL, price DOUBLE NOT NULL);")
VWAP = ("select sum(b.price * b.volume) as vwap from bids b where 0.75 * (select sum(b1.volume) from bids b1) "
        "< (select sum(b2.volume) from bids b2 where b2.price <= b.price)")


def bids_stream(seed: int, size: int = 200) -> list[Update]:
    """Bids with positive finite volumes and prices from ``VALUES`` (NaN, ±Infinity, signed zeros)."""
    rng = random.Random(seed)
    present: dict[int, tuple] = {}
    updates = []
    for seq in range(1, size + 1):
        if present and rng.random() < 0.3:
            key = rng.choice(sorted(present))
            volume, code = present.pop(key)
            updates.append(Update(seq, "bids", -1, (key, volume, VALUES[code]())))
        elif (key := rng.randrange(80)) not in present:
            code = rng.choice([i for i, value in enumerate(VALUES) if value() is not None])
            present[key] = (float(rng.randrange(1, 5)), code)
            updates.append(Update(seq, "bids", 1, (key, present[key][0], VALUES[code]())))
    return updates


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "generic"])
@pytest.mark.parametrize("sql", [VWAP, "select count(*) as n from bids b where b.price > (select avg(b1.volume) from bids b1)"],
                         ids=["VWAP (RPAI tree)", "scalar AVG"])
def test_aggregate_indexes_order_nan_above_every_price(sql, compiled):
    """RPAI's aggregate indexes key rows by exact numbers: NaN and ±Infinity keys sit beyond every double."""
    check_against_recomputation(sql, BIDS, bids_stream(9), batch_size=20, informative_at_least=0.5, compiled=compiled)


def test_an_rpai_tree_refuses_a_nan_volume_and_keeps_its_state():
    """The summed column is the tree's keys: a NaN there is refused by name, the batch undone."""
    for compiled in (True, False):
        with MaintainedView(VWAP, BIDS, compiled=compiled) as view:
            view.apply([Update(1, "bids", 1, (1, 2.0, 3.0)), Update(2, "bids", 1, (2, 1.0, 5.0))])
            before = view.result()
            with pytest.raises(InvalidChangeError, match="needs it positive and finite"):
                view.apply([Update(3, "bids", 1, (3, float("nan"), 1.0))])
            assert view.result() == before == [(5.0,)]
            view.apply([Update(4, "bids", 1, (4, 1.0, 4.0))])
            assert view.result() == [(5.0,)]


@pytest.fixture(scope="module")
def spark():
    from operators.runtime.spark_session import make_spark_session

    return make_spark_session(app="spark-ivm-tests")


@pytest.mark.spark
@pytest.mark.parametrize("name", ["grouped MIN/MAX", "join on doubles", "ORDER BY DESC LIMIT", "filter with a comparison",
                                  "GROUP BY an expression making NaN"])
def test_nan_queries_equal_spark_after_every_batch(spark, name, tmp_path):
    check_against_spark(QUERIES[name], CATALOG, nan_stream(5, size=120), 40, spark, str(tmp_path),
                        informative_at_least=0.5)


@pytest.mark.spark
def test_spark_runner_follows_nan_semantics(spark, tmp_path):
    """The Python stages inside transformWithState: rows and state cross pickles and Arrow."""
    check_against_spark("select g, max(x) as hi, count(distinct x) as n, sum(x) as s from t group by g", CATALOG,
                        nan_stream(6, size=80), 40, spark, str(tmp_path), engine="spark", informative_at_least=0.5)


SUMS = {
    "grouped SUM/AVG": "select g, sum(x) as s, avg(x) as a from t group by g",
    "SUM over an equi-join": "select t.g, sum(t.x) as s, avg(u.y) as a from t, u where t.g = u.j group by t.g",
    "SUM over an inequality join": "select t.g, sum(u.y) as s, avg(u.y) as a from t, u where t.x < u.y group by t.g",
    "SUM(DISTINCT)": "select g, sum(distinct x) as s from t group by g",
    "ORDER BY a SUM": "select g, sum(x) as s from t group by g order by s desc, g limit 2",
}


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "generic"])
@pytest.mark.parametrize("sql", SUMS.values(), ids=SUMS)
def test_nan_sums_over_inserts_equal_recomputation(sql, compiled):
    """Sums reaching NaN (a NaN row, or +Infinity and -Infinity) over inserts only: the NaN result row
    is retracted as it was emitted when the group changes again."""
    check_against_recomputation(sql, CATALOG, nan_stream(7, inserts_only=True), batch_size=10,
                                informative_at_least=0.5, compiled=compiled)


DELETED_SUMS = {
    "grouped SUM/AVG": SUMS["grouped SUM/AVG"],
    "global SUM/AVG": "select sum(x) as s, avg(x) as a, count(x) as n from t",
    "SUM(DISTINCT)": SUMS["SUM(DISTINCT)"],
    "SUM of an expression": "select g, sum(x * 2.0) as s from t group by g",
    "SUM over an inequality join (T-representation payloads)": SUMS["SUM over an inequality join"],
}


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "generic"])
@pytest.mark.parametrize("name", DELETED_SUMS)
def test_sums_recover_after_their_nan_and_infinite_rows_are_deleted(name, compiled):
    """A GROUP BY aggregate's DOUBLE sum counts its NaN and infinite terms (``DoubleSum``), so deleting
    them gives back the finite sum, as Spark's recomputation does."""
    check_against_recomputation(DELETED_SUMS[name], CATALOG, nan_stream(1), batch_size=20,
                                informative_at_least=0.5, compiled=compiled)


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "generic"])
@pytest.mark.parametrize("sql", [
    "select k, x from t where x >= (select max(y) from u)",  # a scalar subquery's MAX may be NaN
    "select count(*) as n from t where x > (select avg(y) from u)",
], ids=["scalar MAX", "scalar AVG"])
def test_subquery_aggregates_over_nan_inserts_equal_recomputation(sql, compiled):
    check_against_recomputation(sql, CATALOG, nan_stream(8, inserts_only=True), batch_size=15,
                                informative_at_least=0.5, compiled=compiled)
