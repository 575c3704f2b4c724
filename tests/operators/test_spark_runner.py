"""SparkRunner against LocalRunner on the same dataflow: equal result changes after every batch.

The toy dataflow (tests/operators/toy_stages.py) has two joins on a foreign key feeding one SUM that
also reads a table directly, so it covers re-keying between stages, several sources and several
upstream stages meeting at one stage, a selection at the source, and stages holding lambdas. Its
tables have no primary key, so the Spark runner's validation stages keep bags (copies per row).
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from catalog.schema import Catalog, Column, Table
from operators.runtime.dataflow import Dataflow, SourceRoute, StageNode
from operators.runtime.local_runner import LocalRunner
from operators.runtime.spark_runner import SparkRunner
from operators.runtime.spark_session import make_spark_session
from operators.runtime.stream import Update
from operators.zset import Row
from tests.operators.toy_stages import SumStage, column, toy_dataflow

pytestmark = pytest.mark.spark

REGIONS = ("EU", "US", "ASIA")
TOY_CATALOG = Catalog.of(
    Table(name, tuple(Column(column, dtype) for column, dtype in columns))
    for name, columns in {
        "customers": [("c_id", "int"), ("region", "string")],
        "orders": [("o_id", "int"), ("c_id", "int"), ("amount", "int"), ("status", "string")],
        "suppliers": [("s_id", "int"), ("region", "string")],
        "supplies": [("s_id", "int"), ("p_id", "int"), ("cost", "int")],
        "adjustments": [("region", "string"), ("amount", "int")],
    }.items()
)


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


def as_updates(changes_by_table: dict[str, list[tuple[Row, int]]], first_seq: int) -> list[Update]:
    changes = [(table, row, op) for table, changes in changes_by_table.items() for row, op in changes]
    return [Update(seq, table, op, row) for seq, (table, row, op) in enumerate(changes, start=first_seq)]


def test_spark_and_local_runners_emit_the_same_changes_after_every_batch(spark):
    flow = toy_dataflow()
    local = LocalRunner(flow)
    seq = 0
    with SparkRunner(flow, TOY_CATALOG, spark=spark) as on_spark:
        for number, batch in enumerate(batches(seed=3, count=4, inserts_per_table=25)):
            expected = local.apply(batch)
            assert expected, "the comparison needs result changes"
            updates = as_updates(batch, seq)
            seq += len(updates)
            assert sorted(on_spark.apply(updates).changes) == sorted(expected), f"batch {number}"
        # the five tables' inbox streams are branches of one source: one offset per apply (spark_inbox)
        assert [source["numInputRows"] > 0 for source in on_spark.query.lastProgress["sources"]] == [True]
        stage_sizes = {name: size for name, size in on_spark.state_size().items() if not name.startswith("validate ")}
        assert stage_sizes == local.state_size()


def test_a_batch_whose_rows_are_all_filtered_at_the_source_changes_only_validation(spark):
    with SparkRunner(toy_dataflow(), TOY_CATALOG, spark=spark) as on_spark:
        output = on_spark.apply([Update(1, "orders", 1, (1, 1, 10, "cancelled")), Update(2, "lineitem", 1, (1,))])
        assert output.changes == [] and output.rejected == []
        assert on_spark.state_size() == {"orders⋈customers": 0, "supplies⋈suppliers": 0, "sum per region": 0,
                                         **{f"validate {table}": 0 for table in TOY_CATALOG.tables}, "validate orders": 1}


def test_a_stage_without_input_is_refused(spark):
    fed, orphan = SumStage("fed", column(0), column(1)), SumStage("orphan", column(0), column(1))
    orphaned = Dataflow(
        stages=(StageNode(0, fed, downstream=None), StageNode(1, orphan, downstream=None)),
        sources=(SourceRoute("adjustments", 0, 0, (0, 1)),),
        output_columns=fed.output_columns,
    )
    with pytest.raises(ValueError, match=r"stage 1 \(orphan\) has no input"):
        SparkRunner(orphaned, TOY_CATALOG, spark=spark)


def test_a_runner_started_on_the_work_dir_of_a_closed_one_goes_on_from_its_state(spark, tmp_path):
    flow = toy_dataflow()
    local = LocalRunner(flow)
    seq = 0
    for number, batch in enumerate(batches(seed=11, count=3, inserts_per_table=10)):
        expected = local.apply(batch)
        assert expected, "the comparison needs result changes"
        updates = as_updates(batch, seq)
        seq += len(updates)
        with SparkRunner(flow, TOY_CATALOG, spark=spark, work_dir=tmp_path) as on_spark:
            assert sorted(on_spark.apply(updates).changes) == sorted(expected), f"batch {number}"
    assert sorted(p.name for p in (tmp_path / "inbox").iterdir()) == [f"batch-{n:09d}.parquet" for n in range(3)]
