"""Every query the local runner maintains, run on the Spark engine (``engine="spark"``: chained
``transformWithState`` stages) and compared after every micro-batch with ``spark.sql`` over the tables
rebuilt from the stream (DuckDB where Spark refuses the query: NQ2, test_spark_reference): the 22 TPC-H
queries as the specification writes them on a churn and a window stream (tests/maintenance/small_tpch.py),
the order-book queries, IEDyn's Table 1 queries and fraud query, and the F-IVM examples.

Each comparison asks that at least half of its compared batches hold a non-NULL value (``INFORMATIVE``),
except where ``EMPTIER`` states, with the measured count, why the stream cannot give more. The full
list is slow: a streaming query per case, 9-140 s each on 2 cores busy with other work (load 2-10), 43
minutes for all 74 in one session. Passed 74 of 74 on 2026-11-28 (after the runner's one line of
operators); 20 of the 22 TPC-H queries are non-empty on at least one stream (not Q17, whose dense
variant is, nor Q20). ``make test`` runs two cases in one shared session: TPC-H Q18 on the window stream (an IN
over a grouped subquery, empty on every earlier Spark test) and IEDyn's fraud query (an inequality
join on a generalized join tree); view trees already run on Spark in test_view_tree_spark.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import pytest

from catalog.iedyn import iedyn_catalog
from catalog.orderbook import orderbook_catalog
from catalog.schema import Catalog
from catalog.tpch import tpch_catalog
from planner.workloads.housing import housing_catalog, housing_tables
from planner.workloads.orderbook_streams import make_orderbook_stream, make_r_stream
from planner.workloads.retailer import retailer_catalog, retailer_tables
from planner.workloads.triangle import triangle_stream
from planner.workloads.view_tree_input import load_catalog, random_stream
from tests.maintenance.checking import check_against_recomputation, check_against_spark
from tests.maintenance.small_tpch import small_tpch_streams
from tests.workloads.test_iedyn_workloads import OTHERS, TABLE1, table1_stream

pytestmark = pytest.mark.spark

EXAMPLES = Path(__file__).parents[2] / "examples"
TPCH_BATCHES = 3
INFORMATIVE = 0.5
SPARK_REFUSES = {"orderbook/nq2"}  # UNRESOLVED_COLUMN: test_spark_reference.test_nq2_is_rejected_by_spark

# (case, the fraction of compared batches with a non-NULL value it asserts): measured on these streams
# with DuckDB; each TPC-H case here has at least one stream where it asserts INFORMATIVE, or none (Q17).
EMPTIER = {
    "tpch/q17@churn": 0.0,  # the specification's Brand#23 MED BOX has no lineitem at SF 0.01: q17_dense
    "tpch/q17@window": 0.0,
    "tpch/q18@churn": 0.0,  # the churn deletes some lineitems of Q18's few orders over 300
    "tpch/q02@churn": 1 / 3, "tpch/q05@churn": 1 / 3, "tpch/q08@churn": 1 / 3, "tpch/q12@churn": 1 / 3,
    "tpch/q15@churn": 1 / 3, "tpch/q19@churn": 1 / 3, "tpch/q20@churn": 0.0, "tpch/q21@churn": 0.0,
    # its equality (half the total b in one group) holds now and then: 4 of 10 batches
    "orderbook/ex21": 0.4,
    "tpch/q08@window": 1 / 3, "tpch/q19@window": 1 / 3, "tpch/q20@window": 0.0, "tpch/q21@window": 1 / 3,
}


class Case(NamedTuple):
    sql: str
    catalog: Catalog
    stream: Callable[[], object]  # the updates, built when the case runs
    batch_size: int


def tpch_cases() -> dict[str, Case]:
    cases = {}
    for name in [f"q{number:02d}" for number in range(1, 23)] + ["variants/q17_dense"]:
        for kind in ("churn", "window"):
            cases[f"tpch/{name.removeprefix('variants/')}@{kind}"] = Case(
                (EXAMPLES / "tpch" / f"{name}.sql").read_text(), tpch_catalog(), kind, 0)
    return cases


def orderbook_cases() -> dict[str, Case]:
    book = lambda: make_orderbook_stream(600, 400, seed=4)  # noqa: E731
    cases = {f"orderbook/{name}": Case((EXAMPLES / "orderbook" / f"{name}.sql").read_text(), orderbook_catalog(),
                                       book, 250)
             for name in ("vwap", "sq1", "sq2", "psp", "mst", "nq1", "nq2")}
    cases["orderbook/ex21"] = Case((EXAMPLES / "orderbook" / "ex21.sql").read_text(), orderbook_catalog(),
                                   lambda: make_r_stream(200, seed=5), 20)
    for name in ("bsp", "band"):
        sql, catalog, updates = OTHERS[name]
        cases[f"orderbook/{name}"] = Case(sql, catalog, lambda updates=updates: updates, 32)
    return cases


def iedyn_cases() -> dict[str, Case]:
    cases = {f"iedyn/{name}": Case(sql, iedyn_catalog(), lambda name=name: table1_stream(name), 32)
             for name, sql in TABLE1.items()}
    sql, catalog, updates = OTHERS["fraud-temporal"]
    cases["iedyn/fraud"] = Case(sql, catalog, lambda: updates, 40)
    return cases


def fivm_cases() -> dict[str, Case]:
    fivm = EXAMPLES / "fivm"
    retailer = lambda: random_stream(retailer_tables(scale=1, seed=3, zips=3), retailer_catalog(), seed=7)  # noqa: E731
    housing = lambda: random_stream(housing_tables(scale=1, seed=5), housing_catalog(), seed=7)  # noqa: E731
    return {
        "fivm/retailer_units_by_zip": Case((fivm / "retailer_units_by_zip.sql").read_text(), retailer_catalog(),
                                           retailer, 0),
        "fivm/retailer_cofactors": Case((fivm / "retailer_cofactors.sql").read_text(), retailer_catalog(),
                                        retailer, 0),
        "fivm/housing_by_postcode": Case((fivm / "housing_by_postcode.sql").read_text(), housing_catalog(), housing, 0),
        "fivm/housing_pairs": Case((fivm / "housing_pairs.sql").read_text(), housing_catalog(), housing, 0),
        "fivm/triangle": Case((fivm / "triangle.sql").read_text(), load_catalog("graph"),
                              lambda: triangle_stream(("edges",), 240, seed=4), 60),
    }


CASES = tpch_cases() | orderbook_cases() | iedyn_cases() | fivm_cases()
DEFAULT = ["tpch/q18@window", "iedyn/fraud"]


@pytest.fixture(scope="module")
def spark():
    from operators.runtime.spark_session import make_spark_session

    return make_spark_session(app="spark-ivm-tests")


@pytest.fixture(scope="module")
def small_streams(tpch_tables):
    return small_tpch_streams(tpch_tables)


def run_case(name: str, spark, small_streams, work_dir: str) -> None:
    case = CASES[name]
    updates = small_streams[case.stream] if isinstance(case.stream, str) else case.stream()
    batch_size = case.batch_size or -(-len(updates) // TPCH_BATCHES)
    informative = EMPTIER.get(name, INFORMATIVE)
    if name in SPARK_REFUSES:
        check_against_recomputation(case.sql, case.catalog, updates, batch_size, engine="spark", spark=spark,
                                    work_dir=work_dir, informative_at_least=informative)
    else:
        check_against_spark(case.sql, case.catalog, updates, batch_size, spark, work_dir, engine="spark",
                            informative_at_least=informative)


@pytest.mark.parametrize("name", DEFAULT)
def test_representative_queries_on_the_spark_engine_equal_spark_sql(spark, small_streams, name, tmp_path):
    run_case(name, spark, small_streams, str(tmp_path))


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(set(CASES) - set(DEFAULT)))
def test_every_query_on_the_spark_engine_equals_spark_sql(spark, small_streams, name, tmp_path):
    run_case(name, spark, small_streams, str(tmp_path))
