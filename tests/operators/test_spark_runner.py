"""SparkRunner against LocalRunner on the same dataflow: equal result changes after every batch.

The toy dataflow (tests/operators/toy_stages.py) has two joins on a foreign key feeding one SUM that
also reads a table directly, so it covers re-keying between stages, several sources and several
upstream stages meeting at one stage, a selection at the source, and stages holding lambdas.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from operators.runtime.dataflow import Dataflow, SourceRoute, StageNode
from operators.runtime.local_runner import LocalRunner
from operators.runtime.spark_runner import SparkRunner
from operators.runtime.spark_session import make_spark_session
from operators.zset import Row
from tests.operators.toy_stages import SumStage, column, toy_dataflow

pytestmark = pytest.mark.spark

REGIONS = ("EU", "US", "ASIA")


@pytest.fixture(scope="module")
def spark():
    session = make_spark_session(app="test-spark-runner")
    yield session
    session.stop()


class RandomTables:
    """Random batches of inserts, and deletes of rows inserted earlier, for the toy dataflow's tables."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.live: dict[str, list[Row]] = {table: [] for table in self.new_row_makers()}
        self.next_order_id = 0

    def new_row_makers(self):
        rng = self.rng
        return {
            "customers": lambda: (rng.randrange(12), rng.choice(REGIONS)),
            "orders": lambda: (self._order_id(), rng.randrange(12), rng.randrange(1, 50), rng.choice(("ok", "cancelled"))),
            "suppliers": lambda: (rng.randrange(4), rng.choice(REGIONS)),
            "supplies": lambda: (rng.randrange(4), rng.randrange(100), rng.randrange(1, 20)),
            "adjustments": lambda: (rng.choice(REGIONS), rng.randrange(-3, 4)),
        }

    def batch(self, inserts_per_table: int) -> dict[str, list[tuple[Row, int]]]:
        changes = {}
        for table, make_row in self.new_row_makers().items():
            live = self.live[table]
            deleted = self.rng.sample(live, k=len(live) // 3)
            for row in deleted:
                live.remove(row)
            inserted = [make_row() for _ in range(self.rng.randrange(inserts_per_table + 1))]
            live.extend(inserted)
            changes[table] = [(row, -1) for row in deleted] + [(row, 1) for row in inserted]
        return changes

    def _order_id(self) -> int:
        self.next_order_id += 1
        return self.next_order_id


def batches(seed: int, count: int, inserts_per_table: int) -> Iterator[dict[str, list[tuple[Row, int]]]]:
    tables = RandomTables(seed)
    for _ in range(count):
        yield tables.batch(inserts_per_table)


def test_spark_and_local_runners_emit_the_same_changes_after_every_batch(spark):
    flow = toy_dataflow()
    local = LocalRunner(flow)
    with SparkRunner(flow, spark=spark) as on_spark:
        for number, batch in enumerate(batches(seed=3, count=4, inserts_per_table=25)):
            expected = local.apply(batch)
            assert sorted(on_spark.apply(batch)) == sorted(expected), f"batch {number}"
        assert on_spark.state_size() == local.state_size()


def test_a_batch_that_routes_no_row_returns_no_change_without_running_spark(spark):
    with SparkRunner(toy_dataflow(), spark=spark) as on_spark:
        assert on_spark.apply({"orders": [((1, 1, 10, "cancelled"), 1)], "lineitem": [((1,), 1)]}) == []
        assert on_spark.query.lastProgress is None
        assert on_spark.state_size() == {"orders⋈customers": 0, "supplies⋈suppliers": 0, "sum per region": 0}


def test_a_stage_without_input_is_refused(spark):
    fed, orphan = SumStage("fed", column(0), column(1)), SumStage("orphan", column(0), column(1))
    orphaned = Dataflow(
        stages=(StageNode(0, fed, downstream=None), StageNode(1, orphan, downstream=None)),
        sources=(SourceRoute("adjustments", 0, 0, (0, 1)),),
        output_columns=fed.output_columns,
    )
    with pytest.raises(ValueError, match=r"stage 1 \(orphan\) has no input"):
        SparkRunner(orphaned, spark=spark)
