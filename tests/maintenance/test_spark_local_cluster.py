"""The Spark runner in ``local-cluster`` mode: two executor JVMs, each with its own Python workers and
state stores, so a stage that relied on state in the driver (or shared by one JVM's workers) would
give a different result. ``ivm run`` on TPC-H Q3 must end with the same ``--out`` and ``--deltas`` as
the local engine (issue 10, "Beyond one machine"). Slow: three JVMs start on two cores.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from catalog.tpch import tpch_catalog
from operators.runtime.stream import write_stream
from planner.cli import main

pytestmark = [pytest.mark.spark, pytest.mark.slow]

ROOT = Path(__file__).parents[2]


def rows(path: Path) -> list[tuple]:
    return sorted((tuple(row.values()) for row in pq.read_table(path).to_pylist()), key=repr)


def test_q3_on_two_executor_jvms_equals_the_local_engine(tpch_streams, tmp_path):
    stream = write_stream(tmp_path / "stream", tpch_catalog(), tpch_streams["window"])
    arguments = ["run", "--query", str(ROOT / "examples/tpch/q03.sql"), "--stream", str(stream), "--batch-size", "40000"]
    assert main([*arguments, "--out", str(tmp_path / "local.parquet"), "--deltas", str(tmp_path / "local-d.parquet")]) == 0
    completed = subprocess.run(
        [sys.executable, "-m", "planner.cli", *arguments, "--engine", "spark", "--spark-master", "local-cluster[2,1,1024]",
         "--out", str(tmp_path / "cluster.parquet"), "--deltas", str(tmp_path / "cluster-d.parquet")],
        cwd=ROOT, capture_output=True, text=True, timeout=1800,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert rows(tmp_path / "local-d.parquet"), "the comparison needs result changes"
    assert rows(tmp_path / "cluster.parquet") == rows(tmp_path / "local.parquet")
    assert rows(tmp_path / "cluster-d.parquet") == rows(tmp_path / "local-d.parquet")
