"""Starting the local Spark session the Spark runner needs (ARCHITECTURE.md, "Physical execution").

Two settings are not optional: ``transformWithState`` refuses the default HDFS-backed state store
(``STORE_BACKEND_NOT_SUPPORTED_FOR_TWS``), so the RocksDB provider is configured; and the Python
workers must run the interpreter that holds this project and be able to import it (stage objects are
pickled by reference to their modules), so ``PYSPARK_PYTHON`` points at it and the project root is put
on the workers' ``PYTHONPATH``. The rest
keeps a small local run quiet and cheap: no UI, no console progress bars, and as many shuffle
partitions as cores (the default 200 would mean 200 state-store partitions per stage), and RocksDB
writes a changelog per commit instead of a snapshot. Unix domain sockets, RocksDB's row count off and
fewer snapshots were measured on Q3 and did not pay (RESULTS.md, 2026-11-28 17:20), so they are not set.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from pyspark.sql import SparkSession

log = logging.getLogger(__name__)

MINIMUM_JAVA = 17
PROJECT_ROOT = Path(__file__).resolve().parents[2]
ROCKSDB_PROVIDER = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
INSTALL_HINT = (
    f"Spark needs Java {MINIMUM_JAVA} or newer: install it with "
    f"`apt-get install openjdk-{MINIMUM_JAVA}-jre-headless`, or set JAVA_HOME to an existing JDK/JRE"
)


def ensure_java() -> str:
    """The ``java`` executable Spark will launch (JAVA_HOME first, then PATH), checked to be ≥ 17."""
    java_home = os.environ.get("JAVA_HOME")
    if java_home:
        java = Path(java_home) / "bin" / "java"
        if not java.is_file():
            raise RuntimeError(f"JAVA_HOME={java_home} has no bin/java. {INSTALL_HINT}.")
        where = f"JAVA_HOME={java_home}"
    else:
        found = shutil.which("java")
        if found is None:
            raise RuntimeError(f"No Java found (JAVA_HOME is unset and `java` is not on PATH). {INSTALL_HINT}.")
        java = Path(found)
        where = f"{found} on PATH"
    version = java_major_version(str(java))
    if version < MINIMUM_JAVA:
        raise RuntimeError(f"Java {version} found ({where}) is too old. {INSTALL_HINT}.")
    return str(java)


def java_major_version(java: str) -> int:
    """Major version of the ``java`` executable, from its ``-version`` banner."""
    completed = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60)
    return parse_java_version(completed.stderr + completed.stdout)


def parse_java_version(banner: str) -> int:
    """Major version in a ``java -version`` banner; Java 8 and older print ``1.<major>``.

    >>> parse_java_version('openjdk version "17.0.15" 2025-04-15')
    17
    >>> parse_java_version('java version "1.8.0_392"')
    8
    """
    match = re.search(r'version "(\d+)(?:\.(\d+))?', banner)
    if match is None:
        raise RuntimeError(f"Cannot read the Java version from `java -version`: {banner.strip()!r}")
    major, minor = int(match.group(1)), int(match.group(2) or 0)
    return minor if major == 1 else major


def make_spark_session(app: str = "spark-ivm", cores: int = 2, master: str | None = None,
                       settings: Mapping[str, str] | None = None) -> SparkSession:
    """The active session if there is one, else a new session set up for the runner, on ``master``
    (default ``local[cores]``; ``local-cluster[2,1,1024]`` runs two executor JVMs on this machine).
    ``settings`` are the caller's Spark settings, applied after (so over) the runner's defaults.

    A reused session keeps its own settings, except the state-store provider, which is set here
    because it is a session (SQL) setting and the runner cannot work without it, and what its Python
    workers need to import this project (``prepare_workers``).
    """
    active = SparkSession.getActiveSession()
    if active is not None:
        prepare_workers(active)
        return active
    ensure_java()
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    builder = (
        SparkSession.builder.master(master or f"local[{cores}]")
        .appName(app)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", "4g")
        .config("spark.log.level", "ERROR")
        .config("spark.sql.shuffle.partitions", str(cores))
        .config("spark.executorEnv.PYTHONPATH", worker_python_path())
        .config("spark.sql.streaming.stateStore.providerClass", ROCKSDB_PROVIDER)
        .config("spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled", "true")
    )
    for key, value in (settings or {}).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    prepare_workers(spark)
    return spark


def worker_python_path() -> str:
    """The caller's PYTHONPATH with the project root in front; Spark adds its own entries to it."""
    inherited = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    return os.pathsep.join(dict.fromkeys(entry for entry in (str(PROJECT_ROOT), *inherited) if entry))


class WorkerSetupError(RuntimeError):
    """The session's Python workers cannot run the project's stages; the message names the settings."""


_PREPARED: set[str] = set()  # the application ids whose workers were prepared and checked


def is_connect(spark: SparkSession) -> bool:
    """Whether ``spark`` is a Spark Connect session: a client of a server, with no JVM or
    ``SparkContext`` in this process (``pyspark.sql.connect.session.SparkSession``)."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def application_id(spark: SparkSession) -> str:
    """The Spark application ``spark`` runs in (a Connect client asks its server)."""
    return spark.conf.get("spark.app.id") if is_connect(spark) else spark.sparkContext.applicationId


def prepare_workers(spark: SparkSession) -> None:
    """Make ``spark``'s Python workers able to run this project's stages, or say which settings they need.

    A session the user built (``SparkSession.builder...getOrCreate()`` in a notebook or script) runs
    its workers with ``PYSPARK_PYTHON`` or ``python3`` from ``PATH``, which need not have this
    project or its dependencies (pyarrow, attrs): the first micro-batch then fails with pages of JVM
    traces. Python functions are shipped with the interpreter and environment the driver's
    ``SparkContext`` holds when they are created (``pythonExec``, ``environment``), so on a local
    master, where workers run on this machine, they are pointed at this interpreter and the project
    root is put in front of their ``PYTHONPATH`` unless the caller chose an interpreter
    (``PYSPARK_PYTHON``). On any master the project's packages are then checked to import in a worker
    once per application (one small job, a few seconds); when they do not, ``WorkerSetupError`` names
    the settings to give instead of the traces. Also sets the state-store provider
    ``transformWithState`` requires (a session setting).

    A Spark Connect session has no ``SparkContext`` here: its server runs Python functions with the
    interpreter and ``PYTHONPATH`` of the server's own environment, which only whoever starts the
    server can set (``spark_connect.connect_session`` does for a local server), so there the check
    is all that can be done (with a Python UDF instead of an RDD job).
    """
    spark.conf.set("spark.sql.streaming.stateStore.providerClass", ROCKSDB_PROVIDER)
    application = application_id(spark)
    if application in _PREPARED:
        return
    if is_connect(spark):
        workers, problem = "the Spark Connect server's Python workers", _connect_probe_problem(spark)
        advice = (f"start the server with PYSPARK_PYTHON={sys.executable} and PYTHONPATH={PROJECT_ROOT} in its "
                  "environment (a local server started by spark-ivm, e.g. --spark-remote local[2], has them), "
                  "or install spark-ivm and its dependencies where the server and its executors run")
    else:
        send_worker_output_to_log(spark)
        problem = _classic_probe_problem(spark)  # (which may point the workers at this interpreter first)
        workers = f"Spark's Python workers ({spark.sparkContext.pythonExec})"
        advice = (f"set PYSPARK_PYTHON={sys.executable} before the session starts (or spark.pyspark.python), and "
                  f"spark.executorEnv.PYTHONPATH={PROJECT_ROOT}; on a cluster, install spark-ivm and its "
                  "dependencies on every executor")
    if problem:
        raise WorkerSetupError(
            f"{workers} cannot run spark-ivm's stages: {problem}. Give the workers this interpreter and the "
            f"project: {advice}") from None
    _PREPARED.add(application)


def _classic_probe_problem(spark: SparkSession) -> str:
    """Point a local master's workers at this interpreter and project, then probe one (see above)."""
    context = spark.sparkContext
    if context.master.startswith("local") and "PYSPARK_PYTHON" not in os.environ:
        context.pythonExec = sys.executable
    paths = context.environment.get("PYTHONPATH", "").split(os.pathsep)
    if str(PROJECT_ROOT) not in paths:
        context.environment["PYTHONPATH"] = os.pathsep.join(p for p in (str(PROJECT_ROOT), *paths) if p)
    try:
        return context.parallelize([0], 1).map(_import_probe()).collect()[0]
    except Exception as error:  # the worker could not even start or unpickle the probe
        return _last_line(str(error))


def _connect_probe_problem(spark: SparkSession) -> str:
    """The import probe as a Python UDF run by the Connect server's workers: '' when they import the stages."""
    from pyspark.sql.functions import udf

    try:
        return spark.range(1).select(udf(_import_probe(), "string")("id")).first()[0]
    except Exception as error:  # the worker could not even start or unpickle the probe
        return _last_line(str(error))


def worker_log_path(spark: SparkSession) -> Path:
    """Where ``send_worker_output_to_log`` puts the Python workers' output of ``spark``'s application."""
    return Path(tempfile.gettempdir()) / f"spark-ivm-python-workers-{spark.sparkContext.applicationId}.log"


def send_worker_output_to_log(spark: SparkSession) -> Path:
    """Send what Spark's Python workers print to a log file instead of the user's terminal.

    Spark copies the standard output and error of every Python worker it starts to the JVM's
    ``System.err`` as raw bytes, not through its logging: each ``transformWithState`` query start
    prints half a dozen "Streaming TransformWithStateInPandas Python worker ..." lines per stage,
    which no log level silences. The driver JVM's ``System.err`` is pointed at a file (appended,
    one per application); Spark's own log messages keep going to the terminal, because its console
    appender holds the stream it was configured with. A worker's failure still reaches the caller as
    the exception of the query, with the worker's traceback. On a cluster this covers the driver's
    workers; executors' workers write to the executors' logs as before.
    """
    path = worker_log_path(spark)
    jvm = spark.sparkContext._jvm
    stream = jvm.java.io.PrintStream(jvm.java.io.FileOutputStream(str(path), True), True)
    jvm.java.lang.System.setErr(stream)
    log.info("Spark's Python workers write their output to %s", path)
    return path


def _import_probe():
    """A function for a worker: '' when the modules a stage needs import there, else the import error.
    Made here as a closure so that it is pickled by value: a function of this module would be
    pickled by reference, and unpickling it would need the very import it checks."""

    def probe(_: object) -> str:
        try:
            import operators.runtime.spark_stage_processors  # noqa: F401
            import operators.runtime.spark_validation  # noqa: F401
        except ImportError as error:
            return f"{type(error).__name__}: {error}"
        return ""

    return probe


def _last_line(trace: str) -> str:
    """The last line of a worker's traceback that names an error (``ModuleNotFoundError: ...``)."""
    errors = [line.strip() for line in trace.splitlines() if re.match(r"\s*\w+(Error|Exception)\b", line)]
    return errors[-1] if errors else trace.strip().splitlines()[0]


SHUFFLE_PARTITIONS = "spark.sql.shuffle.partitions"


#: The file of a work directory that records its query's state partitions (``recorded_partitions``).
PARTITIONS_FILE = "state-partitions"


def recorded_partitions(spark: SparkSession, work_dir: Path, fresh: bool) -> int:
    """The state partitions of the query kept in ``work_dir``: chosen when it first starts (the cluster's
    cores, ``defaultParallelism``, whatever the session's ``spark.sql.shuffle.partitions`` says) and
    recorded in ``PARTITIONS_FILE``, then read back on every restart. Spark freezes the count into
    the checkpoint at batch 0 anyway; recording it states it where a reader of the work directory
    sees it, and keeps every later query start of the view setting the same count."""
    marker = work_dir / PARTITIONS_FILE
    if not fresh and marker.exists():
        return int(marker.read_text())
    count = default_parallelism(spark)
    work_dir.mkdir(parents=True, exist_ok=True)
    marker.write_text(str(count))
    return count


@contextmanager
def state_partitions_pinned(spark: SparkSession, partitions: int | None = None) -> Iterator[int]:
    """While a streaming query starts, its shuffle (and so state-store) partitions set to
    ``partitions`` (default: the cluster's cores, ``defaultParallelism``), then the caller's setting
    restored.

    A streaming query clones its session's settings when it starts and records the partition count in
    its checkpoint at batch 0, for the checkpoint's whole life. A user's session keeps Spark's default
    of 200: every stage would then run 200 tasks, state-store commits and Python connections per
    micro-batch on a machine of 2 cores. A resumed query keeps the count its checkpoint recorded.
    """
    previous = spark.conf.get(SHUFFLE_PARTITIONS)
    count = default_parallelism(spark) if partitions is None else partitions
    spark.conf.set(SHUFFLE_PARTITIONS, str(count))
    try:
        yield count
    finally:
        spark.conf.set(SHUFFLE_PARTITIONS, previous)


_PARALLELISM: dict[str, int] = {}  # per application: a Connect client asks its server once


def default_parallelism(spark: SparkSession) -> int:
    """The cluster's cores as Spark counts them (``defaultParallelism``). A Connect client has no
    ``SparkContext`` to ask, so it counts the partitions of ``spark.range``, which Spark splits into
    that many (``spark.sql.leafNodeDefaultParallelism``, by default ``defaultParallelism``): one small job."""
    if not is_connect(spark):
        return max(spark.sparkContext.defaultParallelism, 1)
    application = application_id(spark)
    if application not in _PARALLELISM:
        from pyspark.sql import functions as F

        partitions = spark.range(0, 1 << 16).select(F.spark_partition_id().alias("p")).distinct().count()
        _PARALLELISM[application] = max(partitions, 1)
    return _PARALLELISM[application]
