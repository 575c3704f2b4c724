"""``ivm ui``'s JSON endpoints and event log, without a browser (Starlette's test client).

Most runs use the order book, whose streams are generated in milliseconds; the expected rows come
from a ``MaintainedView`` the test drives itself over the same batches.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from catalog.orderbook import orderbook_catalog
from operators.runtime.stream import Update, batches, write_stream
from planner.compiler import compile_query
from planner.explain import explain_json
from planner.ui.live import TABLE_ROWS, deep_size, estimated_bytes
from planner.ui.plan_graph import plan_graph
from planner.ui.server import create_app
from planner.ui.session import Session
from planner.view import MaintainedView
from planner.workloads.orderbook_streams import make_orderbook_stream

REPO = Path(__file__).resolve().parents[2]
VWAP = (REPO / "examples" / "orderbook" / "vwap.sql").read_text()
EVENTS = 2_000
ORDERBOOK = {"kind": "orderbook", "events": EVENTS}


@pytest.fixture
def session(tmp_path: Path):
    session = Session(tmp_path)
    yield session
    session.close()


@pytest.fixture
def client(session: Session):
    with TestClient(create_app(session)) as client:
        yield client


def _load(client, sql: str, stream: dict, batch_size: int = 500, catalog: str = "orderbook", **extra):
    return client.post("/api/load", json={"sql": sql, "catalog": catalog, "stream": stream,
                                          "batch_size": batch_size, **extra})


def _orderbook_batches(batch_size: int):
    return list(batches(make_orderbook_stream(EVENTS // 2, EVENTS - EVENTS // 2), batch_size))


def _strings(rows) -> list[list[str]]:
    return [["NULL" if v is None else str(v) for v in row] for row in rows]


def test_options_offer_the_tpch_and_order_book_examples_and_only_the_local_engine(client):
    options = client.get("/api/options").json()
    names = [e["name"] for e in options["examples"]]
    assert "TPC-H Q03" in names and "order book: vwap" in names
    assert options["engines"] == ["local"]


def test_a_refused_query_answers_with_the_planners_reason_and_the_error_is_published(client, session):
    sql = "select id, percentile_approx(price, 0.5) as p from bids group by id"
    with pytest.raises(Exception) as refused:
        compile_query(sql, orderbook_catalog())
    answer = _load(client, sql, ORDERBOOK)
    assert answer.status_code == 400
    assert answer.json()["error"] == {"kind": "refused", "message": str(refused.value)}
    assert client.get("/api/state").json()["error"]["message"] == str(refused.value)
    assert session.events_since(0)[-1][1]["type"] == "error"


def test_steps_give_the_views_result_and_the_event_log_carries_each_batch(client, session):
    loaded = _load(client, VWAP, ORDERBOOK).json()
    assert loaded["batch"] == 0 and loaded["batches"] == EVENTS // 500
    after_load = session.sequence
    with MaintainedView(VWAP, orderbook_catalog()) as view:
        non_empty = 0
        for number, batch in enumerate(_orderbook_batches(500), start=1):
            state = client.post("/api/step").json()
            view.apply(batch)
            assert state["batch"] == number
            assert state["table"]["rows"] == _strings(view.result())
            non_empty += bool(view.result() and view.result()[0][0] is not None)
        assert non_empty
    events = [event for _, event in session.events_since(after_load)]
    assert [e["batch"] for e in events] == [1, 2, 3, 4]
    assert all(len(e["points"]) == 1 and e["points"][0]["latency_ms"] > 0 for e in events)
    assert client.get("/api/state").json()["chart"]["kind"] == "line"  # a global aggregate: a value over batches
    refused = client.post("/api/step")
    assert refused.status_code == 400 and "the stream is over" in refused.json()["error"]["message"]


def test_the_table_is_bounded_and_the_delta_counts_every_change(client):
    state = _load(client, "select id, price from bids order by price desc, id", ORDERBOOK, batch_size=EVENTS).json()
    state = client.post("/api/step").json()
    with MaintainedView("select id, price from bids order by price desc, id", orderbook_catalog()) as view:
        delta = view.apply(_orderbook_batches(EVENTS)[0])
        result = view.result()
    assert len(result) > TABLE_ROWS
    assert state["table"]["total"] == len(result)
    assert state["table"]["rows"] == _strings(result[:TABLE_ROWS])
    event_delta = client.get("/api/state").json()  # the full state sends no stale delta
    assert event_delta["delta"]["inserted_count"] == 0
    assert sum(w for _, w in delta if w > 0) == len(result)  # one batch from empty: only inserts


def test_stages_report_keys_bytes_and_rows_in_and_out_of_the_last_batch(client, session):
    _load(client, VWAP, ORDERBOOK)
    stages = client.post("/api/step").json()["stages"]
    runner = session.run.view.runner
    assert [s["name"] for s in stages] == [node.stage.name for node in session.run.view.compiled.dataflow.stages]
    assert {s["name"]: s["keys"] for s in stages} == runner.state_size()
    assert {s["name"]: (s["rows_in"], s["rows_out"]) for s in stages} == runner.batch_counts
    assert all(s["rows_in"] > 0 for s in stages) and all(s["bytes"] > 0 for s in stages)


def test_a_stages_rows_in_are_its_tables_updates_and_rows_out_the_result_changes(client):
    sql = "select broker_id, sum(volume) as v from bids group by broker_id"
    _load(client, sql, ORDERBOOK)
    with MaintainedView(sql, orderbook_catalog()) as view:
        for batch in _orderbook_batches(500)[:2]:
            (stage,) = client.post("/api/step").json()["stages"]
            delta = view.apply(batch)
            assert (stage["rows_in"], stage["rows_out"]) == (sum(u.table == "bids" for u in batch), len(delta))
            assert stage["keys"] == len(view.result()) > 0


def test_check_says_equal_and_names_the_rows_when_the_result_differs(client, session):
    _load(client, "select broker_id, sum(volume) as v from bids group by broker_id", ORDERBOOK)
    client.post("/api/step")
    check = client.post("/api/check").json()
    assert check["equal"] is True and check["rows"] > 0
    session.run.view.ordered.apply([((99, 1), 1)])  # a row no recomputation has
    check = client.post("/api/check").json()
    assert check["equal"] is False
    assert check["maintained_only"] == [["99", "1"]]


def test_invalid_rows_are_quarantined_with_reasons_or_stop_the_batch(client, tmp_path: Path):
    row = (1, 7, 7, 10, 99_000)
    stream = write_stream(tmp_path / "stream", orderbook_catalog(),
                          [Update(1, "bids", 1, row), Update(2, "bids", 1, row), Update(3, "bids", -1, row)])
    path = {"kind": "path", "path": str(stream)}
    _load(client, "select count(*) as n from bids", path, batch_size=10)
    quarantine = client.post("/api/step").json()["quarantine"]
    assert quarantine["count"] == 1 and "bids _seq 2" in quarantine["last"][0]

    _load(client, "select count(*) as n from bids", path, batch_size=10, on_invalid="error")
    stopped = client.post("/api/step")
    assert stopped.status_code == 400
    error = stopped.json()["error"]
    assert error["kind"] == "engine" and "bids" in error["message"]
    assert client.get("/api/state").json()["batch"] == 0  # the batch was refused whole


def test_bad_inputs_are_named(client):
    assert _load(client, VWAP, {"kind": "path", "path": "/no/such/dir"}).json()["error"]["kind"] == "stream"
    assert "batch size" in _load(client, VWAP, ORDERBOOK, batch_size=0).json()["error"]["message"]
    engine = _load(client, VWAP, ORDERBOOK, engine="spark").json()["error"]["message"]
    assert "local engine only" in engine
    tpch_stream = _load(client, VWAP, {"kind": "window"}).json()["error"]
    assert tpch_stream["kind"] == "stream" and "lineitem" in tpch_stream["message"]


def test_a_pasted_ddl_catalog_is_used(client):
    ddl = (REPO / "examples" / "orderbook" / "schema.sql").read_text()
    state = _load(client, VWAP, ORDERBOOK, catalog="ddl", ddl=ddl).json()
    expected = json.loads(explain_json(compile_query(VWAP, orderbook_catalog())))
    assert state["loaded"] and state["plan"]["sources"] == expected["sources"]


def test_start_runs_every_batch_and_reset_starts_again(client, session):
    _load(client, VWAP, ORDERBOOK, batch_size=100)
    client.post("/api/start")
    session.worker.join(timeout=30)
    state = client.get("/api/state").json()
    assert (state["batch"], state["running"]) == (EVENTS // 100, False)
    assert len(state["history"]) == EVENTS // 100
    assert client.post("/api/reset").json()["batch"] == 0


def test_pause_stops_a_run_between_batches_and_step_goes_on_from_there(client):
    _load(client, VWAP, {"kind": "orderbook", "events": 20_000}, batch_size=10)
    client.post("/api/start")
    paused = client.post("/api/pause").json()
    assert not paused["running"] and paused["batch"] < paused["batches"]
    assert client.post("/api/step").json()["batch"] == paused["batch"] + 1


def test_the_plan_graph_has_every_source_and_stage_and_edges_point_to_later_layers():
    document = {"sources": [{"table": "r", "stage": 0, "port": 0, "selection": None},
                            {"table": "r", "stage": 1, "port": 0, "selection": "r.a > 1"}],
                "stages": [{"id": 0, "name": "a", "operator": "A", "key": "k", "update_cost": "O(1)", "why": "",
                            "state": "", "downstream": 1},
                           {"id": 1, "name": "b", "operator": "B", "key": "k", "update_cost": "O(1)", "why": "",
                            "state": "", "downstream": None}],
                "output_columns": ["x"]}
    graph = plan_graph(document)
    layer = {node["id"]: node["layer"] for node in graph["nodes"]}
    assert layer == {"source:r": 0, "stage:0": 1, "stage:1": 2, "result": 3}
    assert all(layer[e["from"]] < layer[e["to"]] for e in graph["edges"])
    assert [e["label"] for e in graph["edges"] if e["to"] == "stage:1"] == ["σ r.a > 1", ""]


def test_state_bytes_are_measured_exactly_on_few_keys_and_refused_on_huge_entries():
    state = {("k1",): [1_001, 2_001], ("k2",): [3_001, 4_001]}  # nothing shared between the entries
    assert estimated_bytes(state) == sum(deep_size(k) + deep_size(v) for k, v in state.items())
    assert deep_size(list(range(100)), limit=50) is None


def test_the_default_q3_run_shows_a_full_top_10_after_three_batches(client, tpch_sf001_dir, tmp_path):
    """The page's first look: its Q3 example on the defaults (a window stream of ``showcase_window``
    lineitems, ``DEFAULT_BATCH_SIZE``) holds ten rows by the third step, not "Result (0 rows)"."""
    (tmp_path / "tpch-sf0.01").symlink_to(tpch_sf001_dir, target_is_directory=True)  # the session's data dir
    q3 = next(e for e in client.get("/api/options").json()["examples"] if e["name"] == "TPC-H Q03")
    loaded = client.post("/api/load", json={"sql": q3["sql"], "catalog": "tpch", "stream": {"kind": "window"}})
    assert loaded.status_code == 200, loaded.text
    totals = [client.post("/api/step").json()["table"]["total"] for _ in range(3)]
    assert totals[-1] == 10, totals
