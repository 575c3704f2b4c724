"""StageProcessor driven by pyspark's TwsTester: the Spark-side stage logic without a JVM."""

from __future__ import annotations

import pickle
from decimal import Decimal

import pytest
from pyspark import cloudpickle
from pyspark.sql.streaming.tws_tester import TwsTester
from pyspark.sql.types import Row as SparkRow

from operators.runtime.dataflow import StageNode
from operators.runtime.spark_edges import RESULT, key_text
from operators.runtime.spark_runner import StageProcessor, state_name
from tests.operators.toy_stages import JoinStage, SumStage, column, toy_dataflow

SUM_NODE = StageNode(7, SumStage("sum per region", column(0), column(1)), downstream=None)


def spark_input(port: int, row: tuple, weight: int) -> SparkRow:
    return SparkRow(stage=SUM_NODE.id, key="unused", port=port, row=pickle.dumps(row), w=weight)


def decoded(outputs: list[SparkRow]) -> list[tuple[int, str, int, tuple, int]]:
    return sorted((out.stage, out.key, out.port, pickle.loads(out.row), out.w) for out in outputs)


def stored_state(tester: TwsTester, node: StageNode, key: str):
    stored = tester.peekValueState(state_name(node.id), key)
    return None if stored is None else pickle.loads(stored[0])


def test_sum_stage_retracts_the_old_total_and_drops_the_key_when_its_group_empties():
    tester = TwsTester(StageProcessor(SUM_NODE, downstream=None))
    key = key_text(("EU",))

    first = tester.test(key, [spark_input(0, ("EU", 5), 1), spark_input(0, ("EU", 7), 1)])
    assert decoded(first) == [(RESULT, "", 0, ("EU", 12, 2), 1)]
    assert stored_state(tester, SUM_NODE, key) == (12, 2)

    second = tester.test(key, [spark_input(0, ("EU", 5), -1), spark_input(0, ("EU", 1), 1)])
    assert decoded(second) == [(RESULT, "", 0, ("EU", 8, 2), 1), (RESULT, "", 0, ("EU", 12, 2), -1)]
    assert stored_state(tester, SUM_NODE, key) == (8, 2)

    third = tester.test(key, [spark_input(0, ("EU", 7), -1), spark_input(0, ("EU", 1), -1)])
    assert decoded(third) == [(RESULT, "", 0, ("EU", 8, 2), -1)]
    assert stored_state(tester, SUM_NODE, key) is None


def test_keys_keep_separate_state():
    tester = TwsTester(StageProcessor(SUM_NODE, downstream=None))
    tester.test(key_text(("EU",)), [spark_input(0, ("EU", 5), 1)])
    tester.test(key_text(("US",)), [spark_input(0, ("US", 2), 1)])
    assert stored_state(tester, SUM_NODE, key_text(("EU",))) == (5, 1)
    assert stored_state(tester, SUM_NODE, key_text(("US",))) == (2, 1)


def test_output_is_keyed_for_the_downstream_stage_and_port():
    join = StageNode(0, JoinStage("orders⋈customers", column(0), column(0), lambda o, c: (c[1], o[1])), 7, 3)
    tester = TwsTester(StageProcessor(join, downstream=SUM_NODE))
    key = key_text((42,))
    outputs = tester.test(
        key,
        [
            SparkRow(stage=0, key=key, port=0, row=pickle.dumps((42, 10)), w=1),
            SparkRow(stage=0, key=key, port=1, row=pickle.dumps((42, "ASIA")), w=1),
        ],
    )
    assert decoded(outputs) == [(SUM_NODE.id, key_text(("ASIA",)), 3, ("ASIA", 10), 1)]


def test_processor_of_a_stage_holding_lambdas_survives_cloudpickle():
    flow = toy_dataflow()
    shipped = cloudpickle.loads(cloudpickle.dumps(StageProcessor(flow.stage(2), downstream=None)))
    tester = TwsTester(shipped)
    outputs = tester.test(key_text(("US",)), [spark_input(0, ("US", 4), 1)])
    assert decoded(outputs) == [(RESULT, "", 0, ("US", 4, 1), 1)]


@pytest.mark.parametrize(
    ("left", "right"),
    [((Decimal("1.0"),), (Decimal("1.00"),)), ((0.0, "a"), (-0.0, "a")), ((Decimal("0"),), (Decimal("-0.0"),))],
)
def test_equal_keys_get_equal_text(left, right):
    assert left == right
    assert key_text(left) == key_text(right)


def test_different_keys_get_different_text():
    assert key_text((1, "a")) != key_text((1, "b"))
    assert key_text(("1",)) != key_text((1,))
