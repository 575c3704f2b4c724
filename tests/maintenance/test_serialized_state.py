"""Stages and their states survive serialization the way the Spark runner ships them: each stage
through cloudpickle (to the Python workers), each key's state through pickle (into RocksDB) between
batches. Without a JVM this catches what only Spark would show (a stage comparing unpickled
constants by identity once returned NULL sums)."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest
from pyspark import cloudpickle

from catalog.orderbook import orderbook_catalog
from catalog.tpch import tpch_catalog
from operators.runtime.local_runner import LocalRunner
from planner.workloads.orderbook_streams import make_orderbook_stream
from tests.maintenance.checking import check_against_recomputation

QUERIES = Path(__file__).parents[2] / "examples" / "tpch"


class SerializingRunner(LocalRunner):
    """The local runner, with every stage and every state serialized as on Spark."""

    def __init__(self, dataflow):
        super().__init__(dataflow)
        for node in dataflow.stages:
            object.__setattr__(node, "stage", cloudpickle.loads(cloudpickle.dumps(node.stage)))

    def apply(self, batch, keep=None):
        for states in self.states.values():
            for key in list(states):
                states[key] = pickle.loads(pickle.dumps(states[key], pickle.HIGHEST_PROTOCOL))
        return super().apply(batch, keep)


@pytest.mark.parametrize("number", [2, 3, 9, 13, 15, 16, 17, 18, 22])
def test_query_with_serialized_stages_and_states_equals_recomputation(tpch_streams, number, monkeypatch):
    monkeypatch.setattr("planner.view.LocalRunner", SerializingRunner)
    check_against_recomputation((QUERIES / f"q{number:02d}.sql").read_text(), tpch_catalog(),
                                tpch_streams["random"], batch_size=45_000)


@pytest.mark.parametrize("name", ["vwap", "nq1", "nq2", "mst"])
def test_orderbook_query_with_serialized_stages_and_states_equals_recomputation(name, monkeypatch):
    monkeypatch.setattr("planner.view.LocalRunner", SerializingRunner)
    sql = (QUERIES.parent / "orderbook" / f"{name}.sql").read_text()
    check_against_recomputation(sql, orderbook_catalog(), make_orderbook_stream(400, 300, seed=13), batch_size=40)
