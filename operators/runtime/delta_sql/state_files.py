"""The JVM delta strategy's state: versioned Parquet directories, one log per table and one for the aggregate.

Spark has no keyed state a batch job can update in place, and Delta Lake's and Iceberg's jars are not
at hand, so each state is a log-structured set of Parquet directories under ``directory/<name>/``:

- ``ins-<b>``: rows added by micro-batch ``b`` (a table's net inserts, or the aggregate's change of
  partial sums, which are additive);
- ``del-<b>``: a table's rows removed by ``b``, by primary key and the batch that inserted them
  (``_ins``): a key holds at most one row at a time and is inserted at most once per batch, so the
  pair names one stored row;
- ``base-<b>``: the whole state after ``b``, written every ``compact_every`` batches so a read goes
  through few directories.

A batch writes O(its changes) (a base only now and then); the state before batch ``b`` is the newest
base before ``b`` plus the logs after it and before ``b``. That makes a re-run of ``b`` (after a crash
before Spark committed it) exact: it first removes whatever an earlier attempt of ``b`` (or of a later,
withdrawn batch) wrote, then reads only what batches before ``b`` wrote. Directories older than the
base a batch reads are removed when the batch starts: only a re-run of the newest batch ever reads the
past, and it needs nothing before its own base.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Sequence
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

#: The column of a table's stored row naming the micro-batch that inserted it.
INSERTED = "_ins"
_ENTRY = re.compile(r"^(ins|del|base)-(\d+)$")


class StateFiles:
    """The states under ``directory``; see the module docstring."""

    def __init__(self, spark: SparkSession, directory: Path, compact_every: int = 8):
        self.spark, self.directory, self.compact_every = spark, directory, compact_every
        directory.mkdir(parents=True, exist_ok=True)

    def start_batch(self, batch_id: int) -> None:
        """Forget what attempts of ``batch_id`` or later batches wrote, and what no re-run can need."""
        for log in self._logs():
            entries = self._entries(log)
            for kind, number in entries:
                if number >= batch_id:
                    shutil.rmtree(log / f"{kind}-{number}", ignore_errors=True)
            base = self._base_before(log, batch_id)
            for kind, number in entries:
                if base is not None and (number < base or (number == base and kind != "base")):
                    shutil.rmtree(log / f"{kind}-{number}", ignore_errors=True)

    def rows_before(self, name: str, schema: StructType, key: Sequence[str], batch_id: int) -> DataFrame:
        """Table ``name``'s stored rows before ``batch_id`` (``schema``: its columns and ``_ins``)."""
        log = self.directory / name
        rows = self._read(self._paths(log, "ins", batch_id, with_base=True), schema)
        deleted = self._paths(log, "del", batch_id)
        if not deleted:
            return rows
        del_schema = StructType([schema[c] for c in (*key, INSERTED)])
        return rows.join(F.broadcast(self._read(deleted, del_schema)), [*key, INSERTED], "left_anti")

    def sums_before(self, name: str, schema: StructType, batch_id: int) -> DataFrame:
        """The additive rows of log ``name`` before ``batch_id``, unsummed (the caller groups them)."""
        return self._read(self._paths(self.directory / name, "ins", batch_id, with_base=True), schema)

    def write(self, name: str, kind: str, batch_id: int, rows: DataFrame) -> None:
        """Write ``rows`` as log ``name``'s ``kind`` (``ins``/``del``/``base``) of ``batch_id``."""
        rows.write.mode("overwrite").parquet(str(self.directory / name / f"{kind}-{batch_id}"))

    def compacts(self, name: str, batch_id: int) -> bool:
        """Whether ``batch_id`` writes a base of log ``name``: ``compact_every`` batches after the last."""
        base = self._base_before(self.directory / name, batch_id)
        return batch_id - (-1 if base is None else base) >= self.compact_every

    def _paths(self, log: Path, kind: str, batch_id: int, with_base: bool = False) -> list[str]:
        base = self._base_before(log, batch_id)
        since = -1 if base is None else base
        paths = [log / f"base-{base}"] if with_base and base is not None else []
        paths += [log / f"{k}-{n}" for k, n in sorted(self._entries(log), key=lambda e: e[1])
                  if k == kind and since < n < batch_id]
        return [str(p) for p in paths if (p / "_SUCCESS").exists()]

    def _read(self, paths: list[str], schema: StructType) -> DataFrame:
        if not paths:
            return self.spark.createDataFrame([], schema)
        return self.spark.read.schema(schema).parquet(*paths).select(*(F.col(f.name) for f in schema.fields))

    def _base_before(self, log: Path, batch_id: int) -> int | None:
        bases = [n for k, n in self._entries(log) if k == "base" and n < batch_id
                 and (log / f"base-{n}" / "_SUCCESS").exists()]
        return max(bases) if bases else None

    def _logs(self) -> list[Path]:
        return [p for p in self.directory.iterdir() if p.is_dir()]

    @staticmethod
    def _entries(log: Path) -> list[tuple[str, int]]:
        if not log.is_dir():
            return []
        return [(m.group(1), int(m.group(2))) for p in log.iterdir() if (m := _ENTRY.match(p.name))]

    def row_count(self, name: str) -> int:
        """Rows in log ``name``'s newest base and later logs (a diagnostic: inserted minus deleted rows)."""
        log = self.directory / name
        counts = {kind: sum(self.spark.read.parquet(p).count() for p in self._paths(log, kind, 2**62, kind == "ins"))
                  for kind in ("ins", "del")}
        return counts["ins"] - counts["del"]
