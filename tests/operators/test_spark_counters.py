"""The processors' profiling counters: off unless the worker's environment names a directory, and then
counting phases and every state-server call a processor makes."""

from __future__ import annotations

from pyspark.sql.streaming.tws_tester import TwsTester
from pyspark.sql.types import Row as SparkRow

from operators.runtime import spark_counters
from operators.runtime.dataflow import StageNode
from operators.runtime.spark_counters import OFF, PROFILE_ENV, TaskCounters, task_counters
from operators.runtime.spark_edges import key_text, pack
from operators.runtime.spark_stage_processors import PackedStageProcessor
from tests.operators.toy_stages import SumStage, column


def test_off_without_the_environment_variable(monkeypatch):
    monkeypatch.delenv(PROFILE_ENV, raising=False)
    assert task_counters("stage_0") is OFF


def test_a_processor_counts_its_changes_groups_and_phases(monkeypatch, tmp_path):
    monkeypatch.setenv(PROFILE_ENV, str(tmp_path))
    monkeypatch.setattr(spark_counters, "_current", None)  # restored after the test
    node = StageNode(3, SumStage("sum", column(0), column(1)), downstream=None)
    tester = TwsTester(PackedStageProcessor(node, None, 1, 2))
    changes = [(3, key_text((region,)), 0, (region, 5), 1) for region in ("EU", "US", "ASIA")]
    tester.test(0, [SparkRow(**record) for record in pack(changes, 1)])
    counters = spark_counters._current
    assert isinstance(counters, TaskCounters) and counters.operator == "stage_3"
    assert counters.counts["changes in"] == 3 and counters.counts["groups"] == 1
    assert counters.counts["changes out"] == 3
    assert {"python", "stage", "unpickle changes", "pickle state"} <= set(counters.seconds)
    counters.flush()  # outside a Spark task (no TaskContext): nothing is written
    assert not list(tmp_path.iterdir())


def test_state_calls_are_counted_where_pyspark_sends_them(monkeypatch, tmp_path):
    monkeypatch.setenv(PROFILE_ENV, str(tmp_path))
    monkeypatch.setattr(spark_counters, "_current", None)  # restored after the test
    counters = task_counters("validated_t")
    from pyspark.sql.streaming.stateful_processor_api_client import StatefulProcessorApiClient

    class Socket:
        """Stands in for the state server: swallows the request; the answer is read by the wrapper."""

    client = StatefulProcessorApiClient.__new__(StatefulProcessorApiClient)
    client.sockfile = Socket()
    sent = []
    # the wrapped send counts before delegating; the delegate here is pyspark's, which writes to the
    # socket file, so give it one that records instead
    client.sockfile.write = sent.append
    client.sockfile.flush = lambda: None
    StatefulProcessorApiClient._send_proto_message(client, b"request")
    assert counters.counts["state calls"] == 1 and sent
