"""PackedStageProcessor driven by pyspark's TwsTester: the Spark-side stage logic without a JVM.

Buckets and chunks are few (one bucket, two chunks) so that keys share a group and a chunk."""

from __future__ import annotations

import pickle
from decimal import Decimal

import pytest
from pyspark import cloudpickle
from pyspark.sql.streaming.tws_tester import TwsTester
from pyspark.sql.types import Row as SparkRow

from operators.runtime.dataflow import StageNode
from operators.runtime.spark_edges import RESULT, chunk_of, key_text, pack, unpack
from operators.runtime.spark_stage_processors import PackedStageProcessor, state_name
from operators.runtime.spark_state_codec import PICKLED
from tests.operators.toy_stages import JoinStage, SumStage, column, toy_dataflow

SUM_NODE = StageNode(7, SumStage("sum per region", column(0), column(1)), downstream=None)
BUCKETS, CHUNKS = 1, 2


def processor(node: StageNode, downstream: StageNode | None = None) -> PackedStageProcessor:
    return PackedStageProcessor(node, downstream, BUCKETS, CHUNKS)


def packed(node: StageNode, changes: list[tuple[tuple, int, tuple, int]]) -> list[SparkRow]:
    """(key, port, row, weight) changes for ``node`` as the packed rows of its one bucket."""
    return [SparkRow(**r) for r in pack(((node.id, key_text(k), port, row, w) for k, port, row, w in changes), BUCKETS)]


def decoded(outputs: list[SparkRow]) -> list[tuple[int, str, int, tuple, int]]:
    return sorted((out.stage, key, port, row, w) for out in outputs for key, port, row, w in unpack(out.changes))


def stored_state(tester: TwsTester, node: StageNode, key: tuple):
    """A key's state as the bucket's list holds it: one (chunk, pickled dict key → encoded state) element
    per non-empty chunk; a stage's state (not a table's rows) is encoded pickled."""
    text = key_text(key)
    chunks = dict(tester.peekListState(state_name(node.id), 0) or [])
    stored = chunks.get(chunk_of(text, BUCKETS, CHUNKS))
    encoded = None if stored is None else pickle.loads(stored).get(text)
    return None if encoded is None else PICKLED.decode(encoded)


def test_sum_stage_retracts_the_old_total_and_drops_the_key_when_its_group_empties():
    tester = TwsTester(processor(SUM_NODE))
    eu = ("EU",)

    first = tester.test(0, packed(SUM_NODE, [(eu, 0, ("EU", 5), 1), (eu, 0, ("EU", 7), 1)]))
    assert decoded(first) == [(RESULT, "", 0, ("EU", 12, 2), 1)]
    assert stored_state(tester, SUM_NODE, eu) == (12, 2)

    second = tester.test(0, packed(SUM_NODE, [(eu, 0, ("EU", 5), -1), (eu, 0, ("EU", 1), 1)]))
    assert decoded(second) == [(RESULT, "", 0, ("EU", 8, 2), 1), (RESULT, "", 0, ("EU", 12, 2), -1)]
    assert stored_state(tester, SUM_NODE, eu) == (8, 2)

    third = tester.test(0, packed(SUM_NODE, [(eu, 0, ("EU", 7), -1), (eu, 0, ("EU", 1), -1)]))
    assert decoded(third) == [(RESULT, "", 0, ("EU", 8, 2), -1)]
    assert stored_state(tester, SUM_NODE, eu) is None
    assert not tester.peekListState(state_name(SUM_NODE.id), 0)  # the bucket's last key gone: its list cleared


def test_keys_of_one_bucket_keep_separate_state():
    tester = TwsTester(processor(SUM_NODE))
    tester.test(0, packed(SUM_NODE, [(("EU",), 0, ("EU", 5), 1), (("US",), 0, ("US", 2), 1)]))
    tester.test(0, packed(SUM_NODE, [(("ASIA",), 0, ("ASIA", 1), 1)]))
    assert stored_state(tester, SUM_NODE, ("EU",)) == (5, 1)
    assert stored_state(tester, SUM_NODE, ("US",)) == (2, 1)
    assert stored_state(tester, SUM_NODE, ("ASIA",)) == (1, 1)
    # the keys share one bucket, so one list holds them all, one element per non-empty chunk
    chunks = [chunk for chunk, _ in tester.peekListState(state_name(SUM_NODE.id), 0)]
    assert chunks == sorted({chunk_of(key_text((region,)), BUCKETS, CHUNKS) for region in ("EU", "US", "ASIA")})


def test_output_is_keyed_for_the_downstream_stage_and_port():
    join = StageNode(0, JoinStage("orders⋈customers", column(0), column(0), lambda o, c: (c[1], o[1])), 7, 3)
    tester = TwsTester(processor(join, SUM_NODE))
    outputs = tester.test(0, packed(join, [((42,), 0, (42, 10), 1), ((42,), 1, (42, "ASIA"), 1)]))
    assert decoded(outputs) == [(SUM_NODE.id, key_text(("ASIA",)), 3, ("ASIA", 10), 1)]


def test_processor_of_a_stage_holding_lambdas_survives_cloudpickle():
    flow = toy_dataflow()
    shipped = cloudpickle.loads(cloudpickle.dumps(processor(flow.stage(2))))
    tester = TwsTester(shipped)
    outputs = tester.test(0, packed(flow.stage(2), [(("US",), 0, ("US", 4), 1)]))
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
