"""The ivm command line: explain (text and JSON), run (local), invalid input, unsupported queries."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from catalog.ddl import catalog_from_ddl
from catalog.tpch import tpch_catalog
from operators.runtime.stream import Update, write_stream
from planner.cli import main
from planner.run_stats import thread_clock_cost

REPO = Path(__file__).resolve().parents[2]

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
    assert main(["explain", str(query), "--catalog", str(ddl)]) == 0
    compact = capsys.readouterr().out
    for heading in ("Strategy:", "Update cost (the worst stages):", "operator", "key", "state kept", "update cost", "Sources"):
        assert heading in compact
    assert "Rule trace" not in compact and "Query class" not in compact and max(map(len, compact.splitlines())) <= 120
    assert main(["explain", str(query), "--catalog", str(ddl), "--verbose"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(compact.rstrip("\n"))  # the theory comes after the compact plan
    for heading in ("Why each stage", "Strategy in full:", "Query class", "Rule trace", "ForeignKeyJoin"):
        assert heading in out
    # the generated program, each table's function with its checked variant (the validator's check inside)
    for function in ("def _table_orders(", "def _checked_orders(", "def _table_customer(", "def _checked_customer("):
        assert function in out


def test_run_writes_the_result_and_the_changelog(files, capsys):
    tmp_path, ddl, query = files
    out, deltas = tmp_path / "r.parquet", tmp_path / "d.parquet"
    assert main(["run", "--query", str(query), "--catalog", str(ddl), "--stream", stream(tmp_path, GOOD),
                 "--batch-size", "2", "--out", str(out), "--deltas", str(deltas)]) == 0
    assert sorted(pq.read_table(out).to_pylist(), key=str) == [{"c_nation": "DE", "n": 1, "total": 7.0}]
    changes = pq.read_table(deltas).to_pylist()
    assert {"_batch", "_weight"} <= set(changes[0])
    assert sum(c["_weight"] for c in changes) == 1
    assert "enclosureness" not in capsys.readouterr().out, "λ is computed only on request (--report-lambda)"


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


# --- bad input at the stream level -------------------------------------------------------------

def run(ddl, query, stream_dir, *options: str) -> int:
    return main(["run", "--query", str(query), "--catalog", str(ddl), "--stream", str(stream_dir), *options])


def orders_file(stream_dir, **columns) -> None:
    """A hand-written orders file (a foreign producer's types): two orders of customer 1, _seq 5 and 6."""
    stream_dir.mkdir(exist_ok=True)
    data = {"o_orderkey": pa.array([10, 11]), "o_custkey": pa.array([1, 1]), "o_total": pa.array([5.0, 7.0]),
            "_seq": pa.array([5, 6]), "_op": pa.array([1, 1])}
    pq.write_table(pa.table({**data, **columns}), stream_dir / "orders.parquet")


def customer_file(stream_dir) -> None:
    stream_dir.mkdir(exist_ok=True)
    pq.write_table(pa.table({"c_custkey": pa.array([1]), "c_nation": pa.array(["FR"]), "_seq": pa.array([1]),
                             "_op": pa.array([1])}), stream_dir / "customer.parquet")


# Each stream problem of a change: the orders columns that make it, the _seq of the orders it makes
# invalid (a column of the wrong type makes every row wrong) and what the message names.
ROW_PROBLEMS = {
    "NULL key": ({"o_orderkey": pa.array([10, None])}, [6], "NULL in key column o_orderkey"),
    "numeric strings": ({"o_custkey": pa.array(["1", "1"])}, [5, 6], "column o_custkey expects int, got string '1'"),
    "fractional float": ({"o_custkey": pa.array([1.0, 1.5])}, [6], "column o_custkey expects int, got double 1.5"),
    "bools into int": ({"o_orderkey": pa.array([True, False])}, [5, 6], "column o_orderkey expects bigint, got boolean TRUE"),
    "_op 2": ({"_op": pa.array([1, 2])}, [6], "_op is 2, must be +1 (insert) or -1 (delete)"),
    "_op NULL": ({"_op": pa.array([1, None], pa.int8())}, [6], "_op is NULL"),
}


@pytest.mark.parametrize(("columns", "invalid", "reason"), ROW_PROBLEMS.values(), ids=ROW_PROBLEMS.keys())
def test_a_bad_change_stops_the_default_run_with_one_line_naming_table_seq_and_column(files, capsys, columns, invalid, reason):
    tmp_path, ddl, query = files
    customer_file(tmp_path / "s")
    orders_file(tmp_path / "s", **columns)
    assert run(ddl, query, tmp_path / "s") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"table orders at _seq {invalid[0]}" in err and reason in err


@pytest.mark.parametrize(("columns", "invalid", "reason"), ROW_PROBLEMS.values(), ids=ROW_PROBLEMS.keys())
def test_a_bad_change_is_quarantined_and_the_run_goes_on(files, capsys, columns, invalid, reason):
    tmp_path, ddl, query = files
    customer_file(tmp_path / "s")
    orders_file(tmp_path / "s", **columns)
    rejects, out = tmp_path / "rejects.jsonl", tmp_path / "r.parquet"
    assert run(ddl, query, tmp_path / "s", "--on-invalid", "quarantine", "--rejects", str(rejects), "--out", str(out)) == 0
    lines = [json.loads(line) for line in rejects.read_text().splitlines()]
    assert [(r["table"], r["seq"]) for r in lines] == [("orders", seq) for seq in invalid]
    assert reason in lines[0]["reason"]
    # the result is the query over the valid changes only
    valid = [total for seq, total in ((5, 5.0), (6, 7.0)) if seq not in invalid]
    expected = [{"c_nation": "FR", "n": len(valid), "total": sum(valid)}] if valid else []
    assert pq.read_table(out).to_pylist() == expected
    assert f"{len(invalid)} invalid updates quarantined" in capsys.readouterr().out


def test_a_change_without_seq_is_quarantined_or_stops_the_run(files, capsys):
    tmp_path, ddl, query = files
    customer_file(tmp_path / "s")
    orders_file(tmp_path / "s", _seq=pa.array([5, None]))
    assert run(ddl, query, tmp_path / "s") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "table orders without a _seq" in err and "_seq is NULL (row 1 of" in err
    rejects = tmp_path / "rejects.jsonl"
    assert run(ddl, query, tmp_path / "s", "--on-invalid", "quarantine", "--rejects", str(rejects)) == 0
    [line] = [json.loads(line) for line in rejects.read_text().splitlines()]
    assert line["seq"] is None and line["row"] == ["11", "1", "7.0"] and "_seq is NULL" in line["reason"]


def test_a_stream_that_cannot_be_read_is_the_error_reported_before_the_querys(files, capsys):
    """The stream is opened while the query compiles; its error still comes first, as when it was
    opened first, and a query error comes with a stream that opens."""
    tmp_path, ddl, _ = files
    unsupported = "select c_nation, o_total, count(*) from customer, orders group by c_nation, o_total"
    customer_file(tmp_path / "s")
    orders_file(tmp_path / "s", _seq=pa.array([5, None]))
    for stream_dir, expected in ((tmp_path / "missing", "does not exist"), (tmp_path / "s", "without a _seq"),
                                 (stream(tmp_path, GOOD), "cross product")):
        assert run(ddl, unsupported, stream_dir) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and expected in err


def test_the_rejects_file_of_an_earlier_run_is_replaced(files, capsys):
    tmp_path, ddl, query = files
    customer_file(tmp_path / "s")
    orders_file(tmp_path / "s", _op=pa.array([1, 2]))
    rejects = tmp_path / "rejects.jsonl"
    options = ("--on-invalid", "quarantine", "--rejects", str(rejects))
    for _ in range(2):
        assert run(ddl, query, tmp_path / "s", *options) == 0
        assert len(rejects.read_text().splitlines()) == 1, "a second run must not append"
    orders_file(tmp_path / "s")  # now every change is valid
    assert run(ddl, query, tmp_path / "s", *options) == 0
    assert rejects.read_text() == "", "a clean run must not leave the earlier run's rejects behind"


def test_rejects_without_quarantine_is_refused(files, capsys):
    tmp_path, ddl, query = files
    assert run(ddl, query, stream(tmp_path, GOOD), "--rejects", str(tmp_path / "x.jsonl")) == 2
    assert "--rejects needs --on-invalid quarantine" in capsys.readouterr().err


def _not_parquet(stream_dir):
    customer_file(stream_dir)
    (stream_dir / "orders.csv").write_text("o_orderkey,o_custkey,o_total,_seq,_op\n10,1,5.0,5,1\n")


def _corrupt(stream_dir):
    customer_file(stream_dir)
    (stream_dir / "orders.parquet").write_bytes(b"PAR1 not really parquet PAR1")


def _truncated(stream_dir):
    orders_file(stream_dir)
    data = (stream_dir / "orders.parquet").read_bytes()
    (stream_dir / "orders.parquet").write_bytes(data[: len(data) // 2])


BAD_STREAMS = {
    "a file that is not Parquet": (_not_parquet, (), "holds orders.csv, which is not a stream file"),
    "an empty directory": (lambda d: d.mkdir(), (), "holds no stream files"),
    "a corrupt Parquet file": (_corrupt, (), "table orders ("),
    "a truncated Parquet file": (_truncated, (), "not a readable Parquet file"),
    "batch size 0": (customer_file, ("--batch-size", "0"), "--batch-size must be at least 1, got 0"),
    "negative batch size": (customer_file, ("--batch-size", "-3"), "--batch-size must be at least 1, got -3"),
}


@pytest.mark.parametrize(("make", "options", "message"), BAD_STREAMS.values(), ids=BAD_STREAMS.keys())
def test_an_unusable_stream_or_option_is_one_line_on_stderr_never_a_traceback(files, capsys, make, options, message):
    tmp_path, ddl, query = files
    make(tmp_path / "s")
    assert run(ddl, query, tmp_path / "s", *options) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith("ivm: error: ") and captured.err.count("\n") == 1, captured.err
    assert message in captured.err


def test_a_corrupt_stream_file_exits_non_zero_without_a_traceback_in_a_real_process(files):
    tmp_path, ddl, query = files
    _corrupt(tmp_path / "s")
    process = subprocess.run(
        [sys.executable, "-m", "planner.cli", "run", "--query", str(query), "--catalog", str(ddl), "--stream", str(tmp_path / "s")],
        capture_output=True, text=True, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO)}, check=False,
    )
    assert process.returncode == 2 and "Traceback" not in process.stderr
    assert process.stderr.count("\n") == 1 and "not a readable Parquet file" in process.stderr


def test_a_local_run_imports_no_dataframe_database_or_spark_library(files):
    """They cost seconds of start-up that `ivm run --engine local` never uses (issue 13); nor does it
    import EXPLAIN's table printer, the TPC-H generator or tqdm. The run's own process ends without
    tearing the interpreter down (``os._exit``), everything written and flushed first; the child
    lists its modules as it exits."""
    tmp_path, ddl, query = files
    unused = ("pandas", "duckdb", "pyspark", "polars", "tabulate", "planner.explain", "planner.workloads.tpch_data",
              "tqdm")
    run_then_list = ("import os, sys; from planner.cli import main; exit_now = os._exit\n"
                     "def listing(code):\n"
                     f"    print(sorted(m for m in {unused!r} if sys.modules.get(m))); sys.stdout.flush(); exit_now(code)\n"
                     "os._exit = listing; main(); print('returned from main')")  # main() reads sys.argv, as `ivm` does
    out = tmp_path / "out.parquet"
    process = subprocess.run(
        [sys.executable, "-c", run_then_list, "run", "--query", str(query), "--catalog", str(ddl),
         "--stream", stream(tmp_path, GOOD), "--out", str(out)],
        capture_output=True, text=True, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO)}, check=True,
    )
    lines = process.stdout.strip().splitlines()
    assert lines[-2].endswith(f"result: 1 rows written to {out}") and lines[-1] == "[]"
    assert pq.read_table(out).num_rows == 1


@pytest.mark.parametrize(
    ("sql", "out_row", "delta_names"),
    [
        ("select o_orderkey, o_orderkey from orders", {"o_orderkey": 11, "o_orderkey_1": 11}, None),
        ("select o_custkey, sum(o_total) as s, count(*) as s from orders group by o_custkey",
         {"o_custkey": 2, "s": 7.0, "s_1": 1}, None),
        # a result column named like a changelog column keeps its name in --out only
        ("select o_custkey as _weight, o_total as _batch from orders", {"_weight": 2, "_batch": 7.0},
         ["_weight_1", "_batch_1"]),
    ],
)
def test_a_result_with_two_columns_of_one_name_keeps_both(files, capsys, sql, out_row, delta_names):
    """Repeated names get DuckDB's _1 suffix in the files (pandas and Spark refuse repeated names)."""
    tmp_path, ddl, _ = files
    query = tmp_path / "dup.sql"
    query.write_text(sql)
    out, deltas = tmp_path / "r.parquet", tmp_path / "d.parquet"
    assert run(ddl, query, stream(tmp_path, GOOD), "--out", str(out), "--deltas", str(deltas)) == 0
    assert pq.read_table(out).to_pylist() == [out_row]
    # one batch, so the changelog is the result with weight +1
    [change] = pq.read_table(deltas).to_pylist()
    assert change == {**dict(zip(delta_names or out_row, out_row.values(), strict=True)), "_batch": 0, "_weight": 1}


def test_the_demo_refuses_a_batch_size_below_one_before_any_work(capsys):
    assert main(["demo", "--batch-size", "0"]) == 2
    err = capsys.readouterr().err
    assert err == "ivm: error: --batch-size must be at least 1, got 0\n"


def test_stats_json_reports_updates_times_memory_and_the_result(files, capsys):
    tmp_path, ddl, query = files
    stats = tmp_path / "stats.json"
    assert run(ddl, query, stream(tmp_path, GOOD), "--stats-json", str(stats), "--batch-size", "2") == 0
    report = json.loads(stats.read_text())
    assert set(report) == {"updates", "process_seconds", "maintenance_seconds", "process_cpu_seconds",
                           "maintenance_cpu_seconds", "clock_cpu_seconds", "peak_rss_mb", "result_rows", "engine",
                           "batch_size"}
    assert (report["updates"], report["result_rows"], report["engine"], report["batch_size"]) == (5, 1, "local", 2)
    assert 0 < report["maintenance_seconds"] < report["process_seconds"] and report["peak_rss_mb"] > 10
    assert 0 < report["maintenance_cpu_seconds"] < report["process_cpu_seconds"]
    # three batches' clock reads: each pair a system call's time, not more than the maintenance it measured
    assert 0 < report["clock_cpu_seconds"] < report["maintenance_cpu_seconds"]
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last.startswith("5 updates in ") and "updates/s whole process; maintenance " in last and last.endswith(
        "with the local runner; result: 1 rows")


def test_the_thread_clock_cost_is_what_an_empty_interval_measures():
    cost = thread_clock_cost(pairs=501)
    assert 0 < cost < 1e-4  # a system call's time: more than nothing, far less than a scheduling slice


def test_report_lambda_prints_the_streams_enclosureness_only_when_asked(files, capsys):
    tmp_path, ddl, query = files
    assert run(ddl, query, stream(tmp_path, GOOD), "--report-lambda") == 0
    assert "enclosureness λ of the stream = 1.000" in capsys.readouterr().out
    assert run(ddl, query, stream(tmp_path, GOOD), "--report-lambda", "--engine", "spark") == 2
    assert "--report-lambda reads the whole stream on the driver" in capsys.readouterr().err


def test_the_progress_bar_shows_on_a_terminal_only(monkeypatch):
    import io

    from planner.run_stats import progress_bar

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    with progress_bar(10) as bar:
        bar.update(10)
        assert type(bar).__name__ == "tqdm" and bar.n == 10
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    with progress_bar(10) as bar:
        bar.update(10)
        assert not hasattr(bar, "n")
    assert sys.stderr.getvalue() == ""


# --- errors in the user's words --------------------------------------------------------------------

CATALOG_HINT = "without --catalog the catalog is TPC-H's: pass your tables' CREATE TABLE statements with --catalog schema.sql"


def test_a_table_tpch_lacks_without_catalog_hints_at_the_default_catalog_and_catalog(files, capsys, tmp_path):
    _, ddl, _ = files
    region = str(write_stream(tmp_path / "region", tpch_catalog(), [Update(1, "region", 1, (0, "AFRICA", "c"))]))
    for argv in (["explain", "select c_nation from customers"],
                 ["run", "--query", "select c_nation from customers", "--stream", region]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "unknown table 'customers'" in err and err.rstrip().endswith(CATALOG_HINT)
        assert main([*argv, "--catalog", "tpch"]) == 2, "a catalog the user named is not the default"
        err = capsys.readouterr().err
        assert "unknown table 'customers'" in err and CATALOG_HINT not in err
    assert main(["explain", "select c_nation from customers", "--catalog", str(ddl)]) == 2
    assert CATALOG_HINT not in capsys.readouterr().err


def test_a_stream_of_a_table_tpch_lacks_without_catalog_hints_at_catalog(capsys, tmp_path):
    shops = catalog_from_ddl("CREATE TABLE shops (id INT, PRIMARY KEY (id));")
    stream_dir = str(write_stream(tmp_path / "s", shops, [Update(1, "shops", 1, (1,))]))
    assert main(["run", "--query", "select count(*) from orders", "--stream", stream_dir]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is for table 'shops', which the catalog does not have" in err
    assert err.rstrip().endswith(CATALOG_HINT)


def test_a_closed_pipe_ends_the_command_quietly(tmp_path):
    """``ivm explain q.sql | head -1``: the reader goes after one line. A pipe buffer of one page makes
    the explain text (tens of kilobytes) meet the closed pipe on every run, not only when it is long."""
    import fcntl

    read_end, write_end = os.pipe()
    fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, 4096)
    process = subprocess.Popen(
        [sys.executable, "-m", "planner.cli", "explain", str(REPO / "examples" / "tpch" / "q21.sql"), "--verbose"],
        stdout=write_end, stderr=subprocess.PIPE, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    os.close(write_end)
    with os.fdopen(read_end, "rb") as out:
        first = out.readline()
    _, err = process.communicate(timeout=120)
    assert first.startswith(b"Strategy: ") and err == b"", err.decode()
    assert process.returncode == 1
