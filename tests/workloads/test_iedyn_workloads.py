"""IEDyn's workload queries maintained over streams with inserts and deletes equal DuckDB's
recomputation after every batch, under the planner's default (a generalized join tree, except for the
fraud query, which is cyclic: examples/iedyn/README.md) and the forced materializing fallback
(``join_strategy="binary"``).

Streams are small (tens of rows per relation, ten or so batches) so that every batch is compared;
the equality key is drawn from 1..3 instead of IEDyn's 1..200, or 20 rows per relation would
almost never join on it. Every test asks that most compared batches have a non-empty result.
"""

from __future__ import annotations

import json
from pathlib import Path

import attrs
import pytest

from catalog.iedyn import RELATIONS, iedyn_catalog
from catalog.orderbook import ASKS, orderbook_catalog
from operators.runtime.stream import UpdateBatch
from planner.compiler import compile_query
from planner.explain import explain_json
from planner.workloads.iedyn_streams import make_iedyn_stream, make_trans_stream
from planner.workloads.orderbook_streams import make_orderbook_stream
from tests.maintenance.checking import check_against_recomputation

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TABLE1 = {path.stem: path.read_text() for path in sorted((EXAMPLES / "iedyn").glob("q*.sql"))}
FREE_CONNEX = {f"q{n:02d}" for n in range(1, 10)}  # IEDyn §6: Q10-Q12 are acyclic but not free-connex
STRATEGIES = {"default": None, "binary": "binary"}  # the default: a GJT where one exists
BATCH_SIZE = 8
INFORMATIVE = 0.6  # the first batches may hold too few rows for a join row
TEST_KEY_DOMAIN = 3


def table1_stream(query: str, order: str = "random", seed: int = 1) -> UpdateBatch:
    """About 20 rows per relation of the query, a quarter of the events deletes."""
    relations = RELATIONS[:2] if query in ("q01", "q02") else RELATIONS
    return make_iedyn_stream(20 * len(relations), relations, order, delete_fraction=0.25, seed=seed,
                             key_domain=TEST_KEY_DOMAIN)


def crossed_book(updates: UpdateBatch, shift: int) -> UpdateBatch:
    """``updates`` with every ask ``shift`` ticks cheaper, so bids and asks overlap in price: the
    order-book generator never crosses the book, which would leave one half of the band join empty.
    A delete carries its insert's row, so shifting both keeps set semantics."""
    def shifted(update):
        if update.table != ASKS:
            return update
        *rest, price = update.row
        return attrs.evolve(update, row=(*rest, price - shift))
    return UpdateBatch(tuple(shifted(u) for u in updates), checked=True)


def other_workloads() -> dict[str, tuple[str, object, UpdateBatch]]:
    """The fraud query of IEDyn §1 and the order-book inequality joins: (sql, catalog, stream)."""
    book = make_orderbook_stream(50, 50, seed=3, delete_fraction=0.3, brokers=3, price_levels=3_000,
                                 partial_fill_fraction=0.0)
    return {
        "fraud-temporal": ((EXAMPLES / "iedyn" / "fraud.sql").read_text(), iedyn_catalog(),
                           make_trans_stream(150, delete_fraction=0.2, seed=2, accounts=2)),
        "fraud-random": ((EXAMPLES / "iedyn" / "fraud.sql").read_text(), iedyn_catalog(),
                         make_trans_stream(150, order="random", delete_fraction=0.2, seed=2, accounts=2)),
        "bsp": ((EXAMPLES / "orderbook" / "bsp.sql").read_text(), orderbook_catalog(), book),
        "band": ((EXAMPLES / "orderbook" / "band.sql").read_text(), orderbook_catalog(), crossed_book(book, 1_500)),
    }


OTHERS = other_workloads()


@pytest.mark.parametrize("strategy", list(STRATEGIES))
@pytest.mark.parametrize("query", list(TABLE1))
def test_table1_query_equals_recomputation_after_every_batch(query, strategy):
    check_against_recomputation(TABLE1[query], iedyn_catalog(), table1_stream(query), BATCH_SIZE,
                                informative_at_least=INFORMATIVE, join_strategy=STRATEGIES[strategy])


@pytest.mark.parametrize("query", ["q04", "q06", "q09", "q12"])
def test_table1_query_equals_recomputation_on_a_temporally_ordered_stream(query):
    check_against_recomputation(TABLE1[query], iedyn_catalog(), table1_stream(query, "temporal", seed=2),
                                BATCH_SIZE, informative_at_least=INFORMATIVE)


@pytest.mark.parametrize("strategy", list(STRATEGIES))
@pytest.mark.parametrize("workload", list(OTHERS))
def test_fraud_and_order_book_queries_equal_recomputation_after_every_batch(workload, strategy):
    sql, catalog, updates = OTHERS[workload]
    check_against_recomputation(sql, catalog, updates, BATCH_SIZE, informative_at_least=INFORMATIVE,
                                join_strategy=STRATEGIES[strategy])


@pytest.mark.parametrize("query", list(TABLE1))
def test_table1_query_is_planned_on_a_generalized_join_tree_and_binary_forces_the_fallback(query):
    planned = json.loads(explain_json(compile_query(TABLE1[query], iedyn_catalog(), strict=True)))
    assert planned["strategy"] == "gjt"
    assert planned["free_connex"] is (query in FREE_CONNEX)
    forced = json.loads(explain_json(compile_query(TABLE1[query], iedyn_catalog(), strict=True,
                                                   join_strategy="binary")))
    assert forced.get("strategy") != "gjt"


@pytest.fixture(scope="module")
def spark():
    from operators.runtime.spark_session import make_spark_session

    return make_spark_session(app="spark-ivm-tests")


@pytest.mark.spark
@pytest.mark.parametrize("workload", ["q04", "q09", "bsp"])
def test_three_workload_queries_on_the_spark_runner_equal_recomputation(spark, workload, tmp_path):
    sql, catalog, updates = ((TABLE1[workload], iedyn_catalog(), table1_stream(workload))
                             if workload in TABLE1 else OTHERS[workload])
    check_against_recomputation(sql, catalog, updates, 4 * BATCH_SIZE, engine="spark", spark=spark,
                                work_dir=str(tmp_path), informative_at_least=INFORMATIVE)
