"""Starting the local Spark session the Spark runner needs (ARCHITECTURE.md, "Physical execution").

Two settings are not optional: ``transformWithState`` refuses the default HDFS-backed state store
(``STORE_BACKEND_NOT_SUPPORTED_FOR_TWS``), so the RocksDB provider is configured; and the Python
workers must run the interpreter that holds this project and be able to import it (stage objects are
pickled by reference to their modules), so ``PYSPARK_PYTHON`` points at it and the project root is put
on the workers' ``PYTHONPATH``. The rest
keeps a small local run quiet and cheap: no UI, no console progress bars, and as many shuffle
partitions as cores (the default 200 would mean 200 state-store partitions per stage).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from pyspark.sql import SparkSession

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


def make_spark_session(app: str = "spark-ivm", cores: int = 2, master: str | None = None) -> SparkSession:
    """The active session if there is one, else a new session set up for the runner, on ``master``
    (default ``local[cores]``; ``local-cluster[2,1,1024]`` runs two executor JVMs on this machine).

    A reused session keeps its own settings, except the state-store provider, which is set here
    because it is a session (SQL) setting and the runner cannot work without it; its Python workers
    must already be able to import this project.
    """
    active = SparkSession.getActiveSession()
    if active is not None:
        active.conf.set("spark.sql.streaming.stateStore.providerClass", ROCKSDB_PROVIDER)
        return active
    ensure_java()
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    spark = (
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
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def worker_python_path() -> str:
    """The caller's PYTHONPATH with the project root in front; Spark adds its own entries to it."""
    inherited = os.environ.get("PYTHONPATH", "")
    return os.pathsep.join(entry for entry in (str(PROJECT_ROOT), inherited) if entry)
