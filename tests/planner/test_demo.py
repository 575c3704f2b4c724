"""``ivm demo``, the README's first command: runs without the source tree and ends cleanly."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from planner.demo import Q3_SQL, SNAPSHOTS

REPO = Path(__file__).resolve().parents[2]


def test_the_demo_reads_q3_from_the_package_and_examples_links_to_it():
    assert Q3_SQL == (REPO / "examples" / "tpch" / "q03.sql").read_text()


def test_the_demo_shows_the_result_as_the_stream_goes_and_exits_without_duckdb_leak_warnings(
    tpch_sf001_dir: Path, tmp_path: Path
):
    # The demo reads ./data/tpch-sf0.01; point it at the session's generated tables.
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "tpch-sf0.01").symlink_to(tpch_sf001_dir, target_is_directory=True)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "planner.cli", "demo", "--batch-size", "20000"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("top 10 by revenue") == SNAPSHOTS
    assert snapshot_sizes(done.stdout) == [10] * SNAPSHOTS, "each snapshot shows a full top 10"
    assert "checked against DuckDB recomputation after every batch: equal" in done.stdout
    assert "nanobind" not in done.stderr


def snapshot_sizes(output: str) -> list[int]:
    """The rows of each printed snapshot: tabulate's "simple" table, a header and a dashed rule, then
    one line per row up to the blank line."""
    sizes = []
    for snapshot in output.split("top 10 by revenue\n")[1:]:
        table = snapshot.split("\n\n", 1)[0].splitlines()
        assert set(table[1]) <= {"-", " "}, table
        sizes.append(len(table) - 2)
    return sizes
