"""``ivm run --engine spark --work-dir`` killed with SIGKILL at random moments, then started again with
the same arguments, ends with the same ``--out`` and ``--deltas`` as the local engine's uninterrupted
run: no change lost or applied twice (issue 10, "Restart").

The whole process group is killed (the Python driver and the JVM it launched), as a crashed driver
machine would be. Each case runs a few minutes, hence the slow set.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from catalog.orderbook import orderbook_catalog
from catalog.tpch import tpch_catalog
from operators.runtime.stream import write_stream
from planner.cli import main
from planner.workloads.orderbook_streams import make_orderbook_stream

pytestmark = [pytest.mark.spark, pytest.mark.slow]

ROOT = Path(__file__).parents[2]
KILLS = 3


def committed_batches(work_dir: Path) -> int:
    commits = work_dir / "checkpoint" / "commits"
    return sum(1 for p in commits.iterdir() if p.name.isdigit()) if commits.is_dir() else 0


def rows(path: Path) -> list[tuple]:
    table = pq.read_table(path)
    return sorted((tuple(row.values()) for row in table.to_pylist()), key=repr)


def run_killed_at_random(arguments: list[str], work_dir: Path, seed: int) -> list[int]:
    """Start the run and SIGKILL it, ``KILLS`` times, then let it finish; returns the number of committed
    batches seen at each kill. The first kill comes a random moment after one to three batches were
    committed (so a resume has state to keep), the others at random times after the start (while the
    JVM starts, the query recovers, a batch runs or the sink writes)."""
    rng = random.Random(seed)
    command = [sys.executable, "-m", "planner.cli", "run", *arguments, "--engine", "spark", "--work-dir", str(work_dir)]
    seen_at_kills: list[int] = []
    while True:
        process = subprocess.Popen(command, cwd=ROOT, start_new_session=True, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, text=True)
        if len(seen_at_kills) < KILLS and _alive_after(process, work_dir, rng, first=not seen_at_kills):
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            seen_at_kills.append(committed_batches(work_dir))
            continue
        _, errors = process.communicate(timeout=1800)
        assert process.returncode == 0, errors[-3000:]
        return seen_at_kills


def _alive_after(process: subprocess.Popen, work_dir: Path, rng: random.Random, first: bool) -> bool:
    """Wait for the moment to kill; False if the run ended first."""
    if first:
        target = committed_batches(work_dir) + rng.randint(1, 3)
        while committed_batches(work_dir) < target:
            if process.poll() is not None:
                return False
            time.sleep(0.2)
    try:
        process.wait(timeout=rng.uniform(0, 3) if first else rng.uniform(2, 30))
        return False
    except subprocess.TimeoutExpired:
        return True


@pytest.mark.parametrize("case, strategy", [("q3", "jvm"), ("q3", "python"), ("vwap", "auto")])
def test_a_run_killed_at_random_moments_resumes_and_ends_as_an_uninterrupted_run(case, strategy, tpch_streams,
                                                                                 tmp_path):
    """Q3 on both Spark strategies (docs/spark.md): the JVM delta queries' Parquet logs, and the Python
    stages' state stores; VWAP (RPAI) on the Python stages, the only ones that maintain it."""
    if case == "q3":
        query, catalog_arg, catalog = ROOT / "examples/tpch/q03.sql", "tpch", tpch_catalog()
        updates, batch_size = tpch_streams["window"], 6_000
    else:
        query, catalog_arg = ROOT / "examples/orderbook/vwap.sql", str(ROOT / "examples/orderbook/schema.sql")
        catalog, updates, batch_size = orderbook_catalog(), make_orderbook_stream(600, seed=8), 25
    stream = write_stream(tmp_path / "stream", catalog, updates)
    arguments = ["--query", str(query), "--catalog", catalog_arg, "--stream", str(stream),
                 "--batch-size", str(batch_size)]
    expected_out, expected_deltas = tmp_path / "local.parquet", tmp_path / "local-deltas.parquet"
    assert main(["run", *arguments, "--out", str(expected_out), "--deltas", str(expected_deltas)]) == 0

    out, deltas = tmp_path / "spark.parquet", tmp_path / "spark-deltas.parquet"
    seen = run_killed_at_random([*arguments, "--out", str(out), "--deltas", str(deltas), "--spark-strategy", strategy],
                                tmp_path / "work", seed=len(case))
    assert any(count > 0 for count in seen), f"no kill came after a committed batch (committed at kills: {seen})"
    assert rows(expected_deltas), "the comparison needs result changes"
    assert rows(out) == rows(expected_out)
    assert rows(deltas) == rows(expected_deltas)
