"""Spark Connect sessions for the runner: a client of a Connect server, remote or started here.

Spark 4 pushes Connect (``SparkSession.builder.remote("sc://host:15002")``): the client holds no JVM
and no ``SparkContext``; DataFrames are plans sent to the server, and every Python function the
query needs (the stages under ``transformWithState``, the ``foreachBatch`` sink, the stream source)
runs in Python processes the *server* starts, with the interpreter and ``PYTHONPATH`` of the
server's own environment. So the runner needs nothing from the client but its session, and the
server needs this project importable by its Python workers (``prepare_workers`` checks that once per
application and names the settings when it is not).

``connect_session("sc://host:port")`` connects to a running server. ``connect_session("local[2]")``
first starts a server in this process, as pyspark's own ``remote("local[2]")`` does, but on a free
port (pyspark's takes the fixed 15002, which another process on the machine may hold) and with the
runner's settings and this interpreter and project in the server's environment, so its workers can
import the stages. The sink writes its files on the server's side (``spark_sink``): with a remote
server, the view's work directory must be a path the server sees (shared storage).
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping

from pyspark.sql import SparkSession

from operators.runtime.spark_session import make_spark_session, prepare_workers, worker_python_path

CONNECT_PLUGIN = "org.apache.spark.sql.connect.SparkConnectPlugin"
_LOCAL_SERVERS: dict[str, str] = {}  # master -> the URL of the server this process started for it


def connect_session(remote: str, cores: int = 2, settings: Mapping[str, str] | None = None) -> SparkSession:
    """A Spark Connect session on ``remote``: a server URL (``sc://host:port``), or a local master
    (``local[2]``) to start a server in this process first; prepared for the runner (``prepare_workers``).
    ``settings`` are Spark settings for a server started here."""
    from pyspark.sql.connect.session import SparkSession as ConnectSession

    url = start_local_server(remote, cores, settings) if remote.startswith("local") else remote
    # what pyspark's builder sets for a remote session: pyspark.sql.functions and Column then build
    # Connect expressions in this process (a local server's classic session lives here too)
    os.environ["SPARK_CONNECT_MODE_ENABLED"] = "1"
    spark = ConnectSession.builder.remote(url).getOrCreate()
    prepare_workers(spark)
    return spark


def start_local_server(master: str, cores: int = 2, settings: Mapping[str, str] | None = None) -> str:
    """Start a Spark Connect server on ``master`` in this process (once per master); its URL.

    The server is a classic Spark application with Connect's plugin: its Python workers inherit this
    process's environment, where this interpreter and the project root are put first."""
    if master in _LOCAL_SERVERS:
        return _LOCAL_SERVERS[master]
    if SparkSession.getActiveSession() is not None:
        raise RuntimeError(
            f"cannot start a local Spark Connect server on {master}: this process already runs a Spark application "
            "(one per process); connect to a running server with an sc://host:port URL instead")
    port = _free_port()
    os.environ["PYTHONPATH"] = worker_python_path()  # the server's workers: Connect gives them no environment
    make_spark_session(master=master, cores=cores, settings={
        "spark.plugins": CONNECT_PLUGIN,
        "spark.connect.grpc.binding.port": str(port),
        **(settings or {}),
    })
    _LOCAL_SERVERS[master] = url = f"sc://localhost:{port}"
    return url


def _free_port() -> int:
    """A TCP port free on this machine now (the server binds it moments later)."""
    with socket.socket() as probe:
        probe.bind(("localhost", 0))
        return probe.getsockname()[1]
