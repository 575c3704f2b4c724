"""Where the Spark runner's results leave the query: idempotent files keyed by the micro-batch id.

``ResultSink`` is the query's ``foreachBatch`` target. Per micro-batch it receives the rows addressed to
``RESULT`` (the result's changes) and to ``REJECTED`` (quarantined input), and writes, under the view's
output directory:

- ``changes/batch-<id>.parquet``: the result's change feed, the result's columns (without ORDER BY's
  hidden ones) plus ``_batch`` and ``_weight``. Spark's file source can read the directory as a streaming DataFrame.
- ``rejects/batch-<id>.jsonl``: the quarantined changes with their reasons.
- ``result/batch-<id>.parquet``: the whole result after the batch (one row per copy, ORDER BY's hidden
  columns included), built from the latest version before ``<id>`` (or ``initial.parquet``, the result
  before any change) plus the batch's changes; and ``result/CURRENT`` naming the newest version.

Exactly once: Spark writes a batch's commit only after ``foreachBatch`` returned, and re-runs an
uncommitted batch with the same id and the same input after a crash. Every file above is named by
that id, written to a temporary name and renamed into place, and each result version is built from
the version *before* its id, so a re-run batch rewrites the same files with the same contents
instead of appending twice or counting its changes twice. Only the previous version is kept besides
the newest. A batch that changes nothing writes nothing.

The driver holds one batch's result changes (and the result, while writing a new version): the
per-row state of the view lives in the executors' state stores.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import attrs
import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import DataFrame

from catalog.types import DataType
from operators.doubles import canonical_values
from operators.runtime.result_files import rows_table
from operators.runtime.spark_edges import REJECTED, RESULT, unpack
from operators.zset import Changelog, Row, apply_changes, consolidate

_VERSION = re.compile(r"^batch-(\d+)\.parquet$")
#: The result table before any batch (a global aggregate over no rows still has its one row).
INITIAL = "initial.parquet"


class ResultResetError(RuntimeError):
    """A result table asked to apply a batch its query already went past: the query was reset alone."""


@attrs.frozen
class RejectedChange:
    """A change validation quarantined on the executors, as the sink received it."""

    table: str
    seq: int | None
    op: int | None
    row: tuple
    reason: str

    def as_json(self) -> str:
        return json.dumps({"table": self.table, "seq": self.seq, "op": self.op,
                           "row": [None if v is None else str(v) for v in self.row], "reason": self.reason})


@attrs.frozen
class BatchOutput:
    """What one micro-batch produced: the result's changes and the quarantined input."""

    batch_id: int
    changes: Changelog
    rejected: list[RejectedChange]


class ResultSink:
    """The ``foreachBatch`` function of the runner's query; see the module docstring."""

    def __init__(self, directory: Path, names: Sequence[str], dtypes: Sequence[DataType | None],
                 initial_result: Sequence[Row] = (), keep_outputs: bool = True, visible: int | None = None):
        self.names, self.dtypes = tuple(names), tuple(dtypes)
        self.visible = len(self.names) if visible is None else visible
        self.changes_dir, self.rejects_dir, self.result_dir = (directory / name for name in ("changes", "rejects", "result"))
        for path in (self.changes_dir, self.rejects_dir, self.result_dir):
            path.mkdir(parents=True, exist_ok=True)
        self.initial_result = tuple(initial_result)
        if not (self.result_dir / "CURRENT").exists():  # the result table exists before any batch ran
            self._write_version(INITIAL, list(self.initial_result))
        #: Outputs of the batches run since ``take_outputs`` (the ``apply`` path); None: not kept.
        self.outputs: dict[int, BatchOutput] | None = {} if keep_outputs else None
        #: Per batch id: seconds until the batch's rows arrived (the whole query's work: the stages run
        #: as this sink collects them), and seconds spent writing them here (``spark_profile.py``).
        self.seconds: dict[int, tuple[float, float]] = {}

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        started = time.perf_counter()
        table = batch.select("stage", "changes").toArrow()
        arrived = time.perf_counter()
        self._write(table, batch_id)
        self.seconds[batch_id] = (arrived - started, time.perf_counter() - arrived)

    def _write(self, table: pa.Table, batch_id: int) -> None:
        changes: Changelog = []
        rejected: list[RejectedChange] = []
        for stage, packed in zip(table.column("stage").to_pylist(), table.column("changes").to_pylist(), strict=True):
            if stage == RESULT:
                changes.extend((row, weight) for _, _, row, weight in unpack(packed))
            elif stage == REJECTED:
                rejected.extend(RejectedChange(*change, reason) for reason, _, change, _ in unpack(packed))
        self.write_batch(batch_id, changes, rejected)

    def write_batch(self, batch_id: int, changes: Changelog, rejected: list[RejectedChange]) -> None:
        """Write micro-batch ``batch_id``'s result changes and rejected input (see the module docstring)."""
        changes = consolidate(changes)
        if changes:
            self._write_changes(batch_id, changes)
            self._write_result(batch_id, changes)
        if rejected:
            _replace(self.rejects_dir / f"batch-{batch_id}.jsonl",
                     lambda path: path.write_text("".join(r.as_json() + "\n" for r in rejected)))
        if self.outputs is not None:
            self.outputs[batch_id] = BatchOutput(batch_id, changes, rejected)

    def result_before(self, batch_id: int) -> list[Row]:
        """The result table before micro-batch ``batch_id`` (one row per copy)."""
        earlier = [version for version in self._versions() if version < batch_id]
        return _read_rows(self._version_path(max(earlier))) if earlier else list(self.initial_result)

    def take_outputs(self) -> list[BatchOutput]:
        """The outputs of the batches run since the last call, in batch order (then forgotten)."""
        taken = [self.outputs[batch_id] for batch_id in sorted(self.outputs)]
        self.outputs.clear()
        return taken

    def commit_changes(self, batch_id: int, changes: Changelog) -> None:
        """Write the result version of micro-batch ``batch_id``: the version before it plus ``changes``
        (a batch that changes nothing writes nothing). Re-committing ``batch_id`` rewrites the same
        version; a version *after* it means its query restarted from scratch while this result stayed,
        which would apply every change a second time, so that is refused."""
        later = [version for version in self._versions() if version > batch_id]
        if later:
            raise ResultResetError(f"the result in {self.result_dir} holds batch {later[-1]}, after batch {batch_id} "
                                   "being committed now: its query was reset (a new checkpoint) but not its result; "
                                   "delete the result directory to rebuild it from the query's changes")
        changes = consolidate(changes)
        if changes:
            self._write_result(batch_id, changes)

    def current_result(self) -> list[Row]:
        """The result after the newest batch (one row per copy)."""
        return _read_rows(self.current_result_path())

    def current_result_path(self) -> Path:
        """The newest version of the result table (a Parquet file)."""
        return self.result_dir / (self.result_dir / "CURRENT").read_text().strip()

    def _write_changes(self, batch_id: int, changes: Changelog) -> None:
        visible = self.visible
        if visible < len(self.names):  # ORDER BY's hidden columns order the result table only
            changes = consolidate([(row[:visible], weight) for row, weight in changes])
        rows = [row for row, _ in changes]
        extra = {"_batch": [batch_id] * len(rows), "_weight": [weight for _, weight in changes]}
        table = rows_table(rows, self.names[:visible], self.dtypes, extra)
        _replace(self.changes_dir / f"batch-{batch_id}.parquet", lambda path: pq.write_table(table, path))

    def _write_result(self, batch_id: int, changes: Changelog) -> None:
        earlier = [version for version in self._versions() if version < batch_id]
        counts = Counter(self.result_before(batch_id))
        apply_changes(counts, changes)
        self._write_version(self._version_path(batch_id).name, list(counts.elements()))
        for version in earlier[:-1]:  # keep the version this one was built from, drop older ones
            self._version_path(version).unlink(missing_ok=True)

    def _write_version(self, name: str, rows: list[Row]) -> None:
        table = rows_table(rows, self.names, self.dtypes)
        _replace(self.result_dir / name, lambda path: pq.write_table(table, path))
        _replace(self.result_dir / "CURRENT", lambda path: path.write_text(name))

    def _versions(self) -> list[int]:
        return sorted(int(m.group(1)) for p in self.result_dir.iterdir() if (m := _VERSION.match(p.name)))

    def _version_path(self, batch_id: int) -> Path:
        return self.result_dir / f"batch-{batch_id}.parquet"


def _read_rows(path: Path) -> list[Row]:
    """A result version's rows (``table_rows``)."""
    return table_rows(pq.read_table(path))


def table_rows(table: pa.Table) -> list[Row]:
    """An Arrow table of result rows as tuples, every NaN the one NaN (operators/doubles.py): the
    changes applied to them retract rows holding it."""
    columns = [canonical_values(column.to_pylist()) if pa.types.is_floating(column.type) else column.to_pylist()
               for column in table.columns]
    return list(zip(*columns, strict=True)) if columns else []


def _replace(path: Path, write) -> None:
    """Write ``path`` through a temporary name and rename it into place (atomic on one file system)."""
    staged = path.with_name(f".{path.name}.tmp")
    write(staged)
    os.replace(staged, path)

