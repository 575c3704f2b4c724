"""``ivm run --engine spark``: a stream directory maintained by one Spark query, resumable after a crash.

The driver never reads the stream's rows: it plans batches of ``--batch-size`` ``_seq`` values from the
Parquet footers (``spark_stream_source``), starts the query and waits until every batch is committed.
The rows are read, validated and maintained on the executors; results leave through the sink's files
(``spark_sink``), from which ``--out``, ``--deltas`` and ``--rejects`` are assembled at the end.

Restart contract: everything lives in ``--work-dir`` (checkpoint, result versions, change feed,
rejects, and ``run.json`` with the run's arguments). Started again with the same arguments after the
process was killed at any moment, the run resumes after the last committed micro-batch and ends with
the same outputs as an uninterrupted run; started with different arguments it refuses, naming them.
Without ``--work-dir`` a temporary directory is used and removed at the end.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

import attrs
import pyarrow as pa
import pyarrow.parquet as pq

from catalog.schema import Catalog
from operators.runtime.run_errors import WorkDirMismatchError
from operators.runtime.spark_connect import connect_session
from operators.runtime.spark_session import make_spark_session
from operators.runtime.spark_stream_source import plan_batches, stream_changes, table_files
from operators.runtime.stream import StreamFormatError
from planner.view import MaintainedView

RUN_FILE = "run.json"


@attrs.frozen
class SparkRun:
    """What a finished run reports: its (closed) view, input size, time, result and output directory."""

    view: MaintainedView
    updates: int
    seconds: float
    result: list[tuple]
    work_dir: Path
    temporary: bool

    @property
    def output_dir(self) -> Path:
        return self.work_dir / "output"

    def cleanup(self) -> None:
        """Remove the work directory if the run made a temporary one (after its outputs were copied)."""
        if self.temporary:
            shutil.rmtree(self.work_dir, ignore_errors=True)


def run_stream(sql: str, catalog: Catalog, stream_dir: str | Path, batch_size: int, work_dir: str | Path | None,
               on_invalid: str, arguments: Mapping[str, object], planner_options: Mapping[str, object],
               master: str | None = None, remote: str | None = None) -> SparkRun:
    """Maintain ``sql`` over ``stream_dir`` in batches of ``batch_size`` ``_seq`` values; see the module
    docstring. ``arguments`` are what must match when the run is resumed (the CLI's options). With
    ``remote`` (a Connect server URL, or a local master to start one here) the query runs over Spark
    Connect: the same query, built by the client and run by the server."""
    stream_dir = Path(stream_dir)
    present = [name for name in catalog.tables if table_files(stream_dir, name)]
    _refuse_changes_without_seq(stream_dir, present)
    batches = plan_batches(stream_dir, present, batch_size)
    temporary = work_dir is None
    directory = Path(tempfile.mkdtemp(prefix="ivm-run-") if temporary else work_dir)
    _check_same_run(directory, {**arguments, "sql_sha256": hashlib.sha256(sql.encode()).hexdigest()})
    spark = connect_session(remote) if remote else make_spark_session(master=master)
    changes = {name: stream_changes(spark, stream_dir, catalog.table(name), batches) for name in present}
    started = time.perf_counter()
    view = MaintainedView(sql, catalog, engine="spark", on_invalid=on_invalid, spark=spark, work_dir=str(directory),
                          changes=changes, keep_outputs=False, **planner_options)
    with view:
        view.runner.run_available()
        seconds = time.perf_counter() - started
        result = view.result()
    updates = sum(pq.ParquetFile(path).metadata.num_rows for name in present for path in table_files(stream_dir, name))
    return SparkRun(view, updates, seconds, result, directory, temporary)


def _refuse_changes_without_seq(stream_dir: Path, tables: list[str]) -> None:
    """Batches are cut by ``_seq``, so a change without one would belong to no batch: refused by name."""
    for name in tables:
        for path in table_files(stream_dir, name):
            metadata = pq.ParquetFile(path).metadata
            position = metadata.schema.names.index("_seq") if "_seq" in metadata.schema.names else None
            if position is None:
                raise StreamFormatError(f"{path}: no _seq column (table {name})")
            nulls = sum(metadata.row_group(g).column(position).statistics.null_count or 0
                        for g in range(metadata.num_row_groups) if metadata.row_group(g).column(position).statistics)
            if nulls:
                raise StreamFormatError(f"{path}: {nulls} change(s) of table {name} without a _seq; the Spark engine "
                                        "cuts batches by _seq (the local engine quarantines them)")


def _check_same_run(directory: Path, arguments: Mapping[str, object]) -> None:
    record = directory / RUN_FILE
    if record.exists():
        previous = json.loads(record.read_text())
        differing = sorted(k for k in set(previous) | set(arguments) if previous.get(k) != arguments.get(k))
        if differing:
            raise WorkDirMismatchError(
                f"{directory} holds a run started with other arguments ({', '.join(differing)} differ); "
                "resume it with the same arguments or use another --work-dir"
            )
        return
    directory.mkdir(parents=True, exist_ok=True)
    record.write_text(json.dumps(dict(arguments), sort_keys=True, default=str))


def change_feed(output_dir: Path) -> pa.Table | None:
    """The run's change feed (``changes/batch-*.parquet``) in batch order, or None when it is empty."""
    files = sorted((output_dir / "changes").glob("batch-*.parquet"), key=lambda p: int(p.stem.split("-")[1]))
    return pa.concat_tables([pq.read_table(path) for path in files]) if files else None


def rejects_lines(output_dir: Path) -> list[str]:
    """The quarantined changes of every batch, in batch order, as JSON lines."""
    files = sorted((output_dir / "rejects").glob("batch-*.jsonl"), key=lambda p: int(p.stem.split("-")[1]))
    return [line for path in files for line in path.read_text().splitlines()]
