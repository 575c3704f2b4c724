"""``ivm pipelines run``: ``spark-pipelines run`` for pipelines holding incremental views.

What it sets up that the stock command leaves to the user (each one a run that failed without it):

- **The workers' Python.** ``spark-pipelines`` runs the pipeline client and the Spark Connect
  server's Python workers with ``python3`` from ``PATH`` unless ``PYSPARK_PYTHON`` says otherwise;
  the views' stages need this interpreter and the project on ``PYTHONPATH``.
- **A persistent catalog.** With Spark's default in-memory catalog a second run forgets the
  pipeline's tables and fails to create them again over their files (``LOCATION_ALREADY_EXISTS``).
  The run uses Hive's catalog (``spark.sql.catalogImplementation=hive``), its Derby metastore and
  warehouse under the pipeline's ``storage`` (the command runs there, where Derby puts its files),
  unless the caller gives those settings with ``--conf``.
- **The exit code.** The client is ``planner/pipelines/driver.py``, which exits 0 when the run
  completes (the stock client exits 1 after "Run is COMPLETED" when a Python data source sink ran).
- **Full refresh.** ``--full-refresh-all``, or ``--full-refresh`` naming a view (or its
  ``<view>_changes`` table), also deletes the view's result versions under ``storage``, which SDP
  does not know of, and the checkpoint of the flow applying the change feed to them, so the view is
  rebuilt from its sources instead of applying them twice. SDP's ``--full-refresh`` runs only the
  flows into the named tables, and cannot name the result's sink: a plain run follows it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import pyspark
from pyspark.pipelines.cli import find_pipeline_spec, load_pipeline_spec

from operators.runtime.spark_session import ensure_java, worker_python_path
from planner.pipelines import driver
from planner.pipelines.definitions import STORAGE_ENV, VIEWS_DIR, storage_path

#: What this command sets unless the caller's --conf does (``{storage}``: the run's storage).
DEFAULT_SETTINGS = {
    "spark.sql.catalogImplementation": "hive",
    "spark.sql.warehouse.dir": "{storage}/warehouse",
    "spark.hadoop.javax.jdo.option.ConnectionURL": "jdbc:derby:;databaseName={storage}/metastore_db;create=true",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.log.level": "ERROR",
}


def pipeline_command(spec: Path, storage: Path, settings: dict[str, str], full_refresh: Sequence[str],
                     full_refresh_all: bool, refresh: Sequence[str], dry: bool) -> list[str]:
    """The ``spark-class`` command line running the pipeline client on ``spec`` (see the module docstring)."""
    spark_home = Path(os.environ.get("SPARK_HOME") or Path(pyspark.__file__).parent)
    command = [str(spark_home / "bin" / "spark-class"), "org.apache.spark.deploy.SparkPipelines", driver.__file__,
               "dry-run" if dry else "run", "--spec", str(spec)]
    if full_refresh:
        command += ["--full-refresh", ",".join(full_refresh)]
    if full_refresh_all:
        command.append("--full-refresh-all")
    if refresh:
        command += ["--refresh", ",".join(refresh)]
    merged = {key: value.format(storage=storage) for key, value in DEFAULT_SETTINGS.items()} | settings
    for key, value in merged.items():
        command += ["--conf", f"{key}={value}"]
    return command


def run_pipeline(spec: str | None = None, storage: str | None = None, settings: Mapping[str, str] | None = None,
                 full_refresh: Sequence[str] = (), full_refresh_all: bool = False, refresh: Sequence[str] = (),
                 dry: bool = False) -> int:
    """Run the pipeline once; its exit code (0: the run completed). ``settings``: Spark settings (``--conf``)."""
    spec_path = Path(spec).resolve() if spec else find_pipeline_spec(Path.cwd())
    if not spec_path.is_file():
        raise FileNotFoundError(f"no pipeline spec {spec_path}")
    root = Path(storage).resolve() if storage else storage_path(load_pipeline_spec(spec_path).storage, spec_path.parent)
    ensure_java()
    _forget_results(root, full_refresh, full_refresh_all)
    work = root / "session"  # Derby's log and Spark's scratch files land in the working directory
    work.mkdir(parents=True, exist_ok=True)
    environment = os.environ | {
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_DRIVER_PYTHON": sys.executable,
        "PYTHONPATH": worker_python_path(),
        STORAGE_ENV: str(root),
    }
    command = pipeline_command(spec_path, root, dict(settings or {}), _refresh_names(root, full_refresh), full_refresh_all,
                               refresh, dry)
    code = subprocess.run(command, env=environment, cwd=work, check=False).returncode
    if code == 0 and not dry and full_refresh and _rebuilt_views(root, full_refresh, False):
        # SDP runs only the flows into the selected tables, and its selection cannot name a sink: the
        # flow applying the rebuilt change feed to the result runs in a plain run after it
        plain = pipeline_command(spec_path, root, dict(settings or {}), [], False, [], False)
        code = subprocess.run(plain, env=environment, cwd=work, check=False).returncode
    return code


def _views(root: Path) -> set[str]:
    views = root / VIEWS_DIR
    return {path.name for path in views.iterdir() if path.is_dir()} if views.is_dir() else set()


def _refresh_names(root: Path, names: Sequence[str]) -> list[str]:
    """SDP's names for a full refresh: a view's name stands for its change feed table."""
    views = _views(root)
    return [f"{name}_changes" if name in views else name for name in names]


def _rebuilt_views(root: Path, full_refresh: Sequence[str], full_refresh_all: bool) -> set[str]:
    views = _views(root)
    return views if full_refresh_all else {name.removesuffix("_changes") for name in full_refresh} & views


def _forget_results(root: Path, full_refresh: Sequence[str], full_refresh_all: bool) -> None:
    """Forget what SDP's full refresh of a view's change feed leaves: its result versions and table
    file (SDP does not know of them), and the checkpoint of the flow applying the change feed to the
    result (SDP resets only the flows *writing* a refreshed table; this one would keep its position
    in the change feed's old commit log and skip the rebuilt one)."""
    for name in _rebuilt_views(root, full_refresh, full_refresh_all):
        shutil.rmtree(root / VIEWS_DIR / name / "output", ignore_errors=True)
        (root / VIEWS_DIR / name / "table" / "part-00000.parquet").unlink(missing_ok=True)
        shutil.rmtree(root / "_checkpoints" / f"{name}_result", ignore_errors=True)  # SDP's layout: <sink>/<flow>/<n>
