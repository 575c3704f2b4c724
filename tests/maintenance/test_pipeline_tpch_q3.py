"""The contract of ``examples/pipelines/tpch_q3``: ``run_steps.sh STREAM_DIR OUT_DIR`` maintains TPC-H Q3
in a Spark Declarative Pipeline over a stream in three runs, and leaves the result in ``OUT_DIR/result``.

Checked here: the script's own check passed (``check.py``: the result equals ``spark.sql``'s Q3 over
the stream's final tables; each run read only its own change files), the result equals Q3
recomputed by DuckDB too (non-empty, in ORDER BY with ties), and each run after the first read only
the change files landed for it (the stateful flow's checkpoint: one micro-batch per run, whose source
log names exactly that step's files). Slow: three pipeline runs and the check, each starting Spark
(minutes on two cores).
"""

from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from catalog.tpch import tpch_catalog
from operators.runtime.stream import write_stream
from planner.workloads.oracle import DuckDBOracle, StreamTables, assert_matches_reference
from planner.workloads.tpch_streams import make_stream

ROOT = Path(__file__).resolve().parents[2]
PROJECT = ROOT / "examples" / "pipelines" / "tpch_q3"
TABLES = ("customer", "orders", "lineitem")


def _check_module():
    """``examples/pipelines/tpch_q3/check.py``, the script's own check, imported for its checkpoint reader."""
    spec = importlib.util.spec_from_file_location("tpch_q3_check", PROJECT / "check.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


pytestmark = pytest.mark.slow


def _small_q3_stream(tables: dict[str, list[tuple]], directory: Path) -> Path:
    """Q3's three tables, cut to 3 000 orders and their lineitems, inserted in a seeded random order
    with deletes and re-inserts (about 25 000 changes); its final Q3 result has 10 rows."""
    orders = tables["orders"][:3000]
    keys = {order[0] for order in orders}
    subset = {"customer": tables["customer"], "orders": orders,
              "lineitem": [line for line in tables["lineitem"] if line[0] in keys]}
    stream = write_stream(directory, tpch_catalog(), make_stream(subset, tpch_catalog(), "random", seed=5))
    (stream / "_SUCCESS").write_text("")  # not a table: skipped, as `ivm run` skips it
    return stream


def test_run_steps_maintains_q3_in_three_pipeline_runs(tpch_tables, tmp_path):
    if not (ROOT / ".venv" / "bin" / "python").exists():
        pytest.skip("run_steps.sh uses the repository's .venv (`make` makes it)")
    stream = _small_q3_stream(tpch_tables, tmp_path / "stream")
    out = tmp_path / "out"
    # from another working directory, as a user would call it
    completed = subprocess.run([str(PROJECT / "run_steps.sh"), str(stream), str(out)], cwd=tmp_path,
                               capture_output=True, text=True, timeout=3600)
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    assert "check: the result equals spark.sql's Q3 over the stream's final tables" in completed.stdout
    assert "check failed" not in completed.stderr

    files = sorted((out / "result").glob("*.parquet"))
    assert files, "no result files"
    rows = [tuple(row.values()) for file in files for row in pq.read_table(file).to_pylist()]
    rows.sort(key=lambda row: (-row[1], row[2]))  # Q3's ORDER BY revenue DESC, o_orderdate
    catalog = tpch_catalog()
    with DuckDBOracle(catalog) as oracle:
        recomputed = StreamTables.from_directory(stream, catalog)
        oracle.load_stream(recomputed)
        oracle.as_of(max(max(data.column("_seq").to_pylist()) for data in recomputed.tables.values() if len(data)))
        reference = oracle.reference((ROOT / "examples" / "tpch" / "q03.sql").read_text())
    assert reference.is_informative(), "Q3 over the final tables is empty: the comparison would prove nothing"
    assert_matches_reference(rows, reference, "Q3 after three pipeline runs")

    check = _check_module()
    checkpoint = out / "storage" / check.FLOW_CHECKPOINT
    assert sorted(int(p.name) for p in (checkpoint / "commits").iterdir() if p.name.isdigit()) == [0, 1, 2]
    read = check.read_files(checkpoint)
    for step in (1, 2, 3):
        landed = {f"part-{step:05d}-of-00003.parquet"}
        assert read[step - 1] == landed, f"run {step} read other change files than its own"
    for table in TABLES:
        assert sorted(p.name for p in (out / "changes" / table).glob("*.parquet")) == [
            f"part-{step:05d}-of-00003.parquet" for step in (1, 2, 3)]
