"""Stages and their states survive serialization the way the Spark runner ships them: each stage
through cloudpickle (to the Python workers), each key's state through pickle (into RocksDB) between
batches. Without a JVM this catches what only Spark would show (a stage comparing unpickled
constants by identity once returned NULL sums).

Both local runners are run this way, each forced by name (``compiled=``): the generic stage classes
(what the Spark runner executes) and the compiled program, whose state dicts are shared with its
generated code, so each key's state is replaced in place. A planted state that does not pickle shows
the check is on the path the comparison takes.
"""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest
from pyspark import cloudpickle

from catalog.orderbook import orderbook_catalog
from catalog.tpch import tpch_catalog
from operators.runtime.compiled.runner import CompiledRunner
from operators.runtime.local_runner import LocalRunner
from planner.workloads.orderbook_streams import make_orderbook_stream
from tests.maintenance.checking import check_against_recomputation

QUERIES = Path(__file__).parents[2] / "examples" / "tpch"


def round_trip_states(states: dict[int, dict]) -> None:
    """Every key's state through pickle, in place: the dicts themselves stay (generated code holds them)."""
    for by_key in states.values():
        for key in list(by_key):
            by_key[key] = pickle.loads(pickle.dumps(by_key[key], pickle.HIGHEST_PROTOCOL))


class SerializingRunner(LocalRunner):
    """The generic local runner, with every stage and every state serialized as on Spark."""

    def __init__(self, dataflow):
        super().__init__(dataflow)
        for node in dataflow.stages:
            object.__setattr__(node, "stage", cloudpickle.loads(cloudpickle.dumps(node.stage)))

    def apply(self, batch, keep=None):
        round_trip_states(self.states)
        return super().apply(batch, keep)


class SerializingCompiledRunner(CompiledRunner):
    """The compiled runner, with every unit's state pickled between batches."""

    def apply(self, batch, keep=None):
        round_trip_states(self.states)
        return super().apply(batch, keep)


RUNNERS = {False: ("planner.view.LocalRunner", SerializingRunner),
           True: ("planner.view.CompiledRunner", SerializingCompiledRunner)}


def force_serializing(monkeypatch, compiled: bool) -> None:
    monkeypatch.setattr(*RUNNERS[compiled])


@pytest.mark.parametrize("compiled", [False, True], ids=["generic", "compiled"])
@pytest.mark.parametrize("number", [2, 3, 9, 13, 15, 16, 17, 18, 22])
def test_query_with_serialized_stages_and_states_equals_recomputation(tpch_streams, number, compiled, monkeypatch):
    force_serializing(monkeypatch, compiled)
    check_against_recomputation((QUERIES / f"q{number:02d}.sql").read_text(), tpch_catalog(),
                                tpch_streams["random"], batch_size=45_000, compiled=compiled)


@pytest.mark.parametrize("compiled", [False, True], ids=["generic", "compiled"])
@pytest.mark.parametrize("name", ["vwap", "nq1", "nq2", "mst"])
def test_orderbook_query_with_serialized_stages_and_states_equals_recomputation(name, compiled, monkeypatch):
    force_serializing(monkeypatch, compiled)
    sql = (QUERIES.parent / "orderbook" / f"{name}.sql").read_text()
    check_against_recomputation(sql, orderbook_catalog(), make_orderbook_stream(400, 300, seed=13),
                                batch_size=40, compiled=compiled)


@pytest.mark.parametrize("compiled", [False, True], ids=["generic", "compiled"])
def test_a_state_that_does_not_pickle_fails_the_check(compiled, monkeypatch):
    """A stage that leaves a lambda in its state after the first batch: the next batch must fail."""
    base = RUNNERS[compiled][1]

    class PlantingRunner(base):
        def apply(self, batch, keep=None):
            delta = super().apply(batch, keep)
            by_key = next(states for states in self.states.values() if states)
            by_key[next(iter(by_key))] = lambda: "not picklable"
            return delta

    monkeypatch.setattr(RUNNERS[compiled][0], PlantingRunner)
    sql = (QUERIES.parent / "orderbook" / "vwap.sql").read_text()
    with pytest.raises((pickle.PicklingError, AttributeError), match="lambda"):
        check_against_recomputation(sql, orderbook_catalog(), make_orderbook_stream(400, 300, seed=13),
                                    batch_size=40, compiled=compiled)
