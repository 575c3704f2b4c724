"""The pipeline client ``ivm pipelines run`` starts inside ``spark-submit`` (``SparkPipelines``), in
place of pyspark's ``pyspark/pipelines/cli.py``.

It does what that CLI's ``run`` does (load the spec, create the dataflow graph, import the definition
files, start the run, print its events) with these differences:

- every ``--conf`` setting reaches the Spark Connect server (``_keep_every_setting``);
- the run's ``storage`` is the launcher's (``--storage``, or the spec's made absolute), given to the
  definition files in ``IVM_PIPELINE_STORAGE`` so that their views and SDP's checkpoints share it;
- the result table of each incremental view the definition files declared is registered in the
  catalog after them (``CREATE TABLE`` is refused in a definition file);
- what the server's Python workers print (five "Streaming TransformWithStateInPandas Python
  worker" lines per stage and task, thousands per run) goes to a log file, not the terminal
  (``spark_session.send_worker_output_to_log``: the local server runs in this process's JVM);
- the run's response stream also carries *metrics*, e.g. the accumulators of a Python data source
  sink (``__python_accumulator__``). pyspark 4.3's ``execute_command_as_iterator`` raises
  ``[UNKNOWN_RESPONSE]`` on them, so the stock CLI exits 1 after "Run is COMPLETED" with the data
  committed. Here only events are read and metrics skipped, so the exit code is the run's.

A failed run ends with one line naming the error (``ivm pipelines: error: ...``) and exit code 1.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
    # run as a script: Python put this package's directory first on sys.path, where its modules would
    # shadow top-level ones; the project root is on PYTHONPATH (the launcher puts it there)
    sys.path.pop(0)

from pyspark.errors import PySparkException  # noqa: E402
from pyspark.pipelines.cli import load_pipeline_spec, parse_table_list, register_definitions  # noqa: E402
from pyspark.pipelines.spark_connect_graph_element_registry import SparkConnectGraphElementRegistry  # noqa: E402
from pyspark.pipelines.spark_connect_pipeline import create_dataflow_graph, handle_pipeline_events  # noqa: E402
from pyspark.sql import SparkSession  # noqa: E402
from pyspark.sql.session import SparkSession as ClassicSession  # noqa: E402

from catalog.schema import CatalogError  # noqa: E402
from operators.runtime.spark_changes import ChangeSourceError  # noqa: E402
from operators.runtime.spark_session import send_worker_output_to_log  # noqa: E402
from planner.compiler import UnsupportedQueryError  # noqa: E402
from planner.pipelines.definitions import DECLARED, STORAGE_ENV, PipelineViewError  # noqa: E402
from planner.sql.errors import UnsupportedSqlError  # noqa: E402


def run(spec_path: Path, full_refresh: Sequence[str], full_refresh_all: bool, refresh: Sequence[str],
        dry: bool) -> None:
    """Run the pipeline of ``spec_path`` once (see the module docstring)."""
    spec = load_pipeline_spec(spec_path)
    storage = Path(os.environ[STORAGE_ENV]).as_uri()  # the launcher's, in place of the spec's; SDP wants a URI
    _keep_every_setting()
    builder = SparkSession.builder.config("spark.sql.connect.serverStacktrace.enabled", "false")
    for key, value in spec.configuration.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    # one response stream per execution, never reattached, so none is released in the background:
    # with pyspark's default (reattachable), the client releases each finished execution from a
    # thread, and ``stop`` closing the session first makes the server log ``INVALID_HANDLE.
    # SESSION_CLOSED`` with a stack trace after a run that went well
    spark.client.disable_reattachable_execute()
    server = ClassicSession._instantiatedSession  # the local Connect server pyspark started in this process
    if server is not None:
        send_worker_output_to_log(server)
    try:
        graph = create_dataflow_graph(spark, default_catalog=spec.catalog, default_database=spec.database,
                                      sql_conf=spec.configuration)
        register_definitions(spec_path, SparkConnectGraphElementRegistry(spark, graph), spec, spark, graph)
        for view in DECLARED:  # refused inside a definition file, where the views were declared
            spark.sql(view.table_statement())
        handle_pipeline_events(_run_events(spark, graph, full_refresh, full_refresh_all, refresh, dry, storage))
    finally:
        spark.stop()


def _keep_every_setting() -> None:
    """Hand every Spark setting of ``spark-submit`` to the local Connect server this process starts.

    ``spark-submit`` passes its settings to the Python client in groups of ten, in environment
    variables ``PYSPARK_REMOTE_INIT_CONF_<i>`` (JSON); pyspark 4.3's ``_start_connect_server`` reads
    them in a loop that keeps only the last group, so with more than ten settings (spark-submit adds
    half a dozen of its own) a random few reach the server: ``--conf spark.sql.catalogImplementation=hive``
    would work or not by the order of a hash map. Here the groups are merged into one first."""
    count = int(os.environ.get("PYSPARK_REMOTE_INIT_CONF_LEN", "0"))
    merged: dict[str, str] = {}
    for index in range(count):
        merged.update(json.loads(os.environ.pop(f"PYSPARK_REMOTE_INIT_CONF_{index}")))
    if count:
        os.environ["PYSPARK_REMOTE_INIT_CONF_0"] = json.dumps(merged)
        os.environ["PYSPARK_REMOTE_INIT_CONF_LEN"] = "1"


def _run_events(spark: SparkSession, graph: str, full_refresh: Sequence[str], full_refresh_all: bool,
                refresh: Sequence[str], dry: bool, storage: str) -> Iterator[dict[str, Any]]:
    """pyspark's ``start_run`` with the responses that are not events (metrics) skipped."""
    import pyspark.sql.connect.proto as pb2

    command = pb2.Command()
    command.pipeline_command.start_run.CopyFrom(pb2.PipelineCommand.StartRun(
        dataflow_graph_id=graph, full_refresh_selection=list(full_refresh), full_refresh_all=full_refresh_all,
        refresh_selection=list(refresh), dry=dry, storage=storage))
    client = spark.client
    request = client._execute_plan_request_with_metadata()
    client._set_command_in_plan(request.plan, command)
    for response in client._execute_and_fetch_as_iterator(request, {}):
        if isinstance(response, dict):
            yield response


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ivm pipelines run")
    parser.add_argument("command", choices=("run", "dry-run"))
    parser.add_argument("--spec", required=True)
    parser.add_argument("--full-refresh", type=parse_table_list, action="extend", default=[])
    parser.add_argument("--full-refresh-all", action="store_true")
    parser.add_argument("--refresh", type=parse_table_list, action="extend", default=[])
    args = parser.parse_args(argv)
    # the client re-applies the server's settings to its session and warns for each static one it
    # cannot change, though the server already has them
    warnings.filterwarnings("ignore", message=".*CANNOT_MODIFY_STATIC_CONFIG")
    try:
        run(Path(args.spec), args.full_refresh, args.full_refresh_all, args.refresh, dry=args.command == "dry-run")
    except (PySparkException, PipelineViewError, UnsupportedQueryError, UnsupportedSqlError, CatalogError,
            ChangeSourceError) as err:  # a failed run, or a view its definition file cannot declare
        print(f"ivm pipelines: error: {str(err).strip().splitlines()[0]}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
