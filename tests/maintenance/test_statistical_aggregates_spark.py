"""STDDEV/VARIANCE, exact percentiles and grouping sets equal ``spark.sql`` after every batch, where
DuckDB cannot stand in for Spark: NaN and infinite doubles, one-row samples, ``percentile_disc``,
descending ``WITHIN GROUP``, ``grouping_id()``, and grouping sets over a table that empties (Spark
gives no grand-total row over no input). DOUBLE results are compared within a relative 1e-9."""

from __future__ import annotations

import math
import random
from decimal import Decimal

import pytest

from catalog.ddl import catalog_from_ddl
from operators.runtime.stream import Update
from tests.maintenance.checking import check_against_spark
from tests.maintenance.test_statistical_aggregates import DDL

# slow: each starts streaming queries on the Spark runner (a minute or more on 2 cores); the same views
# run against the reference on the local runners in `make test`, and here in `make test-all`
pytestmark = [pytest.mark.spark, pytest.mark.slow]


@pytest.fixture(scope="module")
def spark():
    from operators.runtime.spark_session import make_spark_session

    return make_spark_session(app="spark-ivm-tests")


def emptying_stream(seed: int, updates: int = 240) -> list[Update]:
    """Inserts and deletes of rows with NaN, ±Infinity, NULLs and duplicate values; the table is
    emptied completely twice on the way (every present row deleted), then refilled."""
    rng = random.Random(seed)
    present: dict[int, tuple] = {}
    out: list[Update] = []
    seq = 0
    for step in range(updates):
        seq += 1
        if step in (80, 160):
            for key in list(present):
                out.append(Update(seq, "m", -1, present.pop(key)))
                seq += 1
        if present and rng.random() < 0.4:
            out.append(Update(seq, "m", -1, present.pop(rng.choice(list(present)))))
            continue
        x = rng.choice([None, 0, 1, 2, 2, 5, 9, -4])
        f = rng.choice([None, 0.5, 2.0, -1.25, math.inf, -math.inf, float("nan"), 7.0, 7.0])
        row = (seq, rng.choice([1, 2, None]), rng.choice(["a", "b"]), x,
               None if x is None else Decimal(x * 25).scaleb(-2), f)
        present[seq] = row
        out.append(Update(seq, "m", 1, row))
    return out


QUERIES = [
    "select g, stddev(x), var_pop(d), stddev_pop(f), variance(f), stddev(distinct x) from m group by g",
    "select var_samp(f), stddev_pop(x), count(*) from m",
    """select h, median(f), percentile(x, 0.35), percentile_disc(0.35) within group (order by d desc),
       percentile_cont(0.6) within group (order by f desc), percentile(distinct x, 0.5) from m group by h""",
    """select g, h, count(*), grouping_id(), grouping(h), median(x), stddev(d) from m
       group by cube(g, h) order by grouping_id(), g, h""",
    "select g, h, sum(x) from m group by grouping sets ((g), (h, g), ())",
]


@pytest.mark.parametrize("number", range(len(QUERIES)))
def test_equal_to_spark_after_every_batch(spark, tmp_path, number):
    stream = emptying_stream(number)
    view = check_against_spark(QUERIES[number], catalog_from_ddl(DDL), stream, 20, spark, str(tmp_path),
                               informative_at_least=0.6)
    assert view.result()
