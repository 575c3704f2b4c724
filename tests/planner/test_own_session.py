"""A session the user built: ``SparkSession.builder...getOrCreate()`` as a script or notebook builds
it, not ``make_spark_session``, with no ``PYSPARK_PYTHON`` and a ``python3`` on ``PATH`` that lacks the
project's dependencies. ``IncrementalViews(spark)`` must make its workers able to run the stages
(issue 27, item 1) and pin the query's state partitions to the cores, whatever the session says.

Each case runs a script in a fresh interpreter, so that the session is really the user's (a test
process already holds the suite's own session).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.spark

PROJECT_ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, sys.argv[2])  # the project, importable in the driver as an installed package is
    from pyspark.sql import SparkSession
    spark = SparkSession.builder.master("local[2]").appName("a user's own").getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    spark.sql("CREATE TABLE accounts (id INT, plan STRING, seats INT) USING parquet "
              "TBLPROPERTIES ('ivm.primary_key' = 'id')")
    spark.createDataFrame([(1, "pro", 5), (2, "free", 1), (3, "pro", 7)], "id int, plan string, seats int") \\
        .write.insertInto("accounts")
    from planner.session import IncrementalViews
    from operators.runtime.spark_session import WorkerSetupError
    query = "SELECT plan, COUNT(*) AS n, SUM(seats) AS seats FROM accounts GROUP BY plan"
    try:
        ivm = IncrementalViews(spark, work_dir=sys.argv[1])
        view = ivm.create("plans", query).start()
        view.process_available()
    except WorkerSetupError as error:
        print(json.dumps({"error": str(error)}))
        raise SystemExit(0)
    maintained = sorted(tuple(r) for r in view.result().collect())
    expected = sorted(tuple(r) for r in spark.sql(query).collect())
    print(json.dumps({"maintained": maintained, "expected": expected,
                      "session_partitions": spark.conf.get("spark.sql.shuffle.partitions")}))
""")


def _run(tmp_path: Path, **env_changes: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "PYTHONPATH")}
    # a python3 on PATH that is not this interpreter, as on a machine where the project lives in a venv
    env["PATH"] = os.pathsep.join(["/usr/bin", "/bin", env.get("PATH", "")])
    env.update(env_changes)
    script = tmp_path / "own_session.py"
    script.write_text(SCRIPT)
    completed = subprocess.run([sys.executable, str(script), str(tmp_path / "views"), str(PROJECT_ROOT)], cwd=tmp_path, env=env,
                               capture_output=True, text=True, timeout=600)
    assert completed.returncode == 0, completed.stderr[-3000:]
    return json.loads(completed.stdout.strip().splitlines()[-1]) | {"stderr": completed.stderr}


def test_a_users_own_session_maintains_a_view_equal_to_spark_sql(tmp_path):
    outcome = _run(tmp_path)
    assert outcome["maintained"] == outcome["expected"]
    assert len(outcome["maintained"]) == 2
    assert outcome["session_partitions"] == "200"  # the caller's setting is left as it was
    offsets = (tmp_path / "views" / "plans" / "checkpoint" / "offsets" / "0").read_text()
    assert '"spark.sql.shuffle.partitions":"2"' in offsets  # the query's state partitions: the cores
    # the workers' chatter went to their log, not the terminal
    assert "Python worker" not in outcome["stderr"], outcome["stderr"][-2000:]
    assert list(Path(tempfile.gettempdir()).glob("spark-ivm-python-workers-*.log"))


@pytest.mark.slow  # a second fresh interpreter and Spark session (about a minute); make test-all runs it
@pytest.mark.skipif(shutil.which("python3", path="/usr/bin:/bin") is None, reason="no system python3")
def test_workers_that_cannot_import_the_project_are_named_in_one_line(tmp_path):
    outcome = _run(tmp_path, PYSPARK_PYTHON=shutil.which("python3", path="/usr/bin:/bin"))
    message = outcome["error"]
    assert "cannot run spark-ivm's stages" in message and "PYSPARK_PYTHON=" in message
    assert "\n" not in message
