"""The ivm command line: explain (text and JSON), run (local), invalid input, unsupported queries."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from catalog.ddl import catalog_from_ddl
from operators.runtime.stream_format import Update, write_stream
from planner.cli import main

DDL = """
CREATE TABLE customer (c_custkey INT, c_nation VARCHAR(10), PRIMARY KEY (c_custkey));
CREATE TABLE orders (o_orderkey BIGINT, o_custkey INT REFERENCES customer (c_custkey), o_total DOUBLE,
  PRIMARY KEY (o_orderkey));
"""
QUERY = """select c_nation, count(*) as n, sum(o_total) as total
from customer, orders where c_custkey = o_custkey group by c_nation"""


@pytest.fixture
def files(tmp_path):
    ddl = tmp_path / "schema.sql"
    ddl.write_text(DDL)
    query = tmp_path / "q.sql"
    query.write_text(QUERY)
    return tmp_path, ddl, query


def stream(tmp_path, updates):
    return str(write_stream(tmp_path / "stream", catalog_from_ddl(DDL), updates))


GOOD = [
    Update(1, "customer", 1, (1, "FR")),
    Update(2, "orders", 1, (10, 1, 5.0)),
    Update(4, "orders", 1, (11, 2, 7.0)),  # dangling until customer 2 arrives
    Update(9, "customer", 1, (2, "DE")),
    Update(12, "orders", -1, (10, 1, 5.0)),
]


def test_explain_json_names_strategy_root_edges_stages_and_rules(files, capsys):
    _, ddl, query = files
    assert main(["explain", str(query), "--catalog", str(ddl), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["strategy"] == "aju_fk_tree" and doc["root"] == "orders"
    assert doc["fk_edges"] == ["orders(o_custkey)→customer(c_custkey)"]
    assert all({"key", "update_cost"} <= set(stage) for stage in doc["stages"])
    assert "ChooseForeignKeyJoinTree" in doc["rules_applied"]


def test_explain_text_shows_the_maintenance_table_and_verbose_trace(files, capsys):
    _, ddl, query = files
    assert main(["explain", str(query), "--catalog", str(ddl), "--verbose"]) == 0
    out = capsys.readouterr().out
    for heading in ("operator", "state kept", "update cost", "why", "Rule trace", "ForeignKeyJoin"):
        assert heading in out


def test_run_writes_the_result_and_the_changelog(files, capsys):
    tmp_path, ddl, query = files
    out, deltas = tmp_path / "r.parquet", tmp_path / "d.parquet"
    assert main(["run", "--query", str(query), "--catalog", str(ddl), "--stream", stream(tmp_path, GOOD),
                 "--batch-size", "2", "--out", str(out), "--deltas", str(deltas)]) == 0
    assert sorted(pq.read_table(out).to_pylist(), key=str) == [{"c_nation": "DE", "n": 1, "total": 7.0}]
    changes = pq.read_table(deltas).to_pylist()
    assert {"_batch", "_weight"} <= set(changes[0])
    assert sum(c["_weight"] for c in changes) == 1
    assert "enclosureness" in capsys.readouterr().out


def test_invalid_input_stops_with_table_seq_and_reason(files, capsys):
    tmp_path, ddl, query = files
    bad = GOOD + [Update(20, "customer", 1, (1, "IT"))]
    assert main(["run", "--query", str(query), "--catalog", str(ddl), "--stream", stream(tmp_path, bad)]) == 2
    err = capsys.readouterr().err
    assert "table customer" in err and "_seq 20" in err and "duplicate primary key" in err


def test_quarantine_writes_rejects_and_goes_on(files, capsys):
    tmp_path, ddl, query = files
    bad = GOOD + [Update(20, "customer", 1, (1, "IT")), Update(21, "orders", -1, (99, 1, 1.0))]
    rejects = tmp_path / "rejects.jsonl"
    assert main(["run", "--query", str(query), "--catalog", str(ddl), "--stream", stream(tmp_path, bad),
                 "--on-invalid", "quarantine", "--rejects", str(rejects), "--out", str(tmp_path / "r.parquet")]) == 0
    lines = [json.loads(line) for line in rejects.read_text().splitlines()]
    assert [(r["table"], r["seq"]) for r in lines] == [("customer", 20), ("orders", 21)]
    assert "delete of an absent row" in lines[1]["reason"]


def test_unsupported_query_says_which_operator_and_why(files, capsys):
    _, ddl, _ = files
    # no join condition and a GROUP BY over both relations: not separable, and a cross product
    sql = "select c_nation, o_total, count(*) from customer, orders group by c_nation, o_total"
    assert main(["explain", sql, "--catalog", str(ddl)]) == 2
    assert "cross product" in capsys.readouterr().err
