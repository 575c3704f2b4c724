"""``ivm run --engine spark --spark-remote local[2]``: the runner's query built by a Spark Connect client
and run by a Connect server that the command starts in its own process (issue 27, item 2). Its
stages, stream source and sink are Python functions the *server* runs, so this checks that the
whole query travels through Connect. TPC-H Q3 over a small stream must end with the local engine's
``--out`` and ``--deltas``. Slow: a Spark application starts in a fresh process.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from catalog.tpch import tpch_catalog
from operators.runtime.stream_format import write_stream
from planner.cli import main

pytestmark = [pytest.mark.spark, pytest.mark.slow]

ROOT = Path(__file__).parents[2]


def rows(path: Path) -> list[tuple]:
    return sorted((tuple(row.values()) for row in pq.read_table(path).to_pylist()), key=repr)


def test_q3_over_spark_connect_equals_the_local_engine(tpch_streams, tmp_path):
    stream = write_stream(tmp_path / "stream", tpch_catalog(), tpch_streams["random"])
    arguments = ["run", "--query", str(ROOT / "examples/tpch/q03.sql"), "--stream", str(stream), "--batch-size", "30000"]
    assert main([*arguments, "--out", str(tmp_path / "local.parquet"), "--deltas", str(tmp_path / "local-d.parquet")]) == 0
    completed = subprocess.run(
        [sys.executable, "-m", "planner.cli", *arguments, "--engine", "spark", "--spark-remote", "local[2]",
         "--out", str(tmp_path / "connect.parquet"), "--deltas", str(tmp_path / "connect-d.parquet")],
        cwd=ROOT, capture_output=True, text=True, timeout=1800,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert "Traceback" not in completed.stderr
    assert rows(tmp_path / "local.parquet"), "the comparison needs a non-empty result"
    assert len({row[-2] for row in rows(tmp_path / "local-d.parquet")}) > 1, "and changes in several batches"
    assert rows(tmp_path / "connect.parquet") == rows(tmp_path / "local.parquet")
    assert rows(tmp_path / "connect-d.parquet") == rows(tmp_path / "local-d.parquet")
