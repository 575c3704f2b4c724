"""What flows between the stateful operators of the Spark runner's query: packed rows.

Every edge of the query carries ``PACKED_SCHEMA``: one Spark row per (destination stage, bucket)
and task, whose ``changes`` is the pickled list of that bucket's changes, each ``(key text, port, row,
weight)``. Measured (examples/benchmarks/spark_state_access.py, RESULTS.md "Keyed-stage layouts"):
with one Spark row per change, pyspark's Row API converts every row cell by cell on the way in and
builds a Row and a dict per row on the way out, and one Spark group per stage key pays three state
round trips to the JVM; per changed key that cost ~300 µs, packed and bucketed ~25 µs. Rows stay
Python values end to end, exactly as the local runner sees them.

A stage's state lives in the group of its key's bucket (``bucket_of`` the key's canonical text), in
``chunk_of`` chunks of keys: one element per chunk of the bucket's ListState (``spark_bucket_state``). Rows addressed to ``RESULT`` are the
result's changes; rows addressed to ``REJECTED`` are quarantined input changes, each entry
``(reason, 0, (table, _seq, _op, row), 0)``. The bucket and chunk counts are part of the state
layout: a checkpoint is resumed with the counts it was written with.
"""

from __future__ import annotations

import pickle
import zlib
from collections.abc import Iterable, Sequence
from typing import Any

import pyarrow as pa

from operators.zset import Row
from operators.zset import key_text as key_text  # re-exported: the runtime names it from here

BUCKET_COLUMN = "bucket"
PACKED_SCHEMA = f"stage int, {BUCKET_COLUMN} int, changes binary"
PACKED_ARROW_SCHEMA = pa.schema([("stage", pa.int32()), (BUCKET_COLUMN, pa.int32()), ("changes", pa.binary())])
#: ``stage`` of the rows a last stage emits: they go to the result, not to a stage.
RESULT = -1
#: ``stage`` of a quarantined input change (validation's rejects output).
REJECTED = -2
#: ``stage`` of a table's changes on their way into its validation stage.
VALIDATION = -3


def folded_input(index: int) -> int:
    """``stage`` of a table's changes on their way into the stage its validation is folded into
    (``spark_operators``), the ``index``-th table folded there."""
    return VALIDATION - 1000 - index


def dependency_stage(index: int) -> int:
    """``stage`` of a table's accepted changes on their way into the check of its ``index``-th declared
    functional dependency (``spark_dependencies``), keyed by the dependency's determinant."""
    return VALIDATION - 1 - index


#: Spark groups per stage: many more than shuffle partitions so the groups spread, few enough that the
#: per-group toll is paid a few hundred times per batch (see the benchmark).
DEFAULT_BUCKETS = 256
#: Chunks of keys per bucket, each one element of its ListState. A batch that touches a key (un)pickles its whole
#: chunk, so keys per chunk (state keys / (buckets · chunks)) should stay within ~3–50: 256 · 64 chunks
#: suit states of 50 000–800 000 keys. Larger states need more chunks (not adaptive yet).
DEFAULT_CHUNKS = 64
PICKLE_PROTOCOL = pickle.HIGHEST_PROTOCOL


def bucket_of(text: str, buckets: int) -> int:
    """The Spark group of a key text: CRC-32 of its UTF-8 bytes modulo ``buckets``."""
    return zlib.crc32(text.encode()) % buckets


def chunk_of(text: str, buckets: int, chunks: int) -> int:
    """The chunk of a key text within its bucket: the CRC-32 bits above the bucket's, so a bucket's
    keys spread over all its chunks."""
    return zlib.crc32(text.encode()) // buckets % chunks


def pack(changes: Iterable[tuple[int, str, int, Row, int]], buckets: int = DEFAULT_BUCKETS) -> list[dict[str, Any]]:
    """Rows of ``PACKED_SCHEMA`` from (stage, key text, port, row, weight): one per (stage, bucket of the
    key); rows for the result or the rejects all go to bucket 0."""
    groups: dict[tuple[int, int], list[tuple[str, int, Row, int]]] = {}
    for stage, key, port, row, weight in changes:
        bucket = 0 if stage in (RESULT, REJECTED) else bucket_of(key, buckets)
        groups.setdefault((stage, bucket), []).append((key, port, row, weight))
    return [{"stage": stage, BUCKET_COLUMN: bucket, "changes": pickle.dumps(packed, PICKLE_PROTOCOL)}
            for (stage, bucket), packed in groups.items()]


def pack_by(stage: int, entries: Sequence[tuple], bucket_texts: Sequence[str], buckets: int) -> list[dict[str, Any]]:
    """Rows of ``PACKED_SCHEMA`` for ``stage`` from entries each in the bucket of its own text in
    ``bucket_texts`` rather than of its key text: a table's changes keyed by their primary key for
    validation, sent to the buckets of the stage the validation is folded into (``spark_operators``)."""
    groups: dict[int, list[tuple]] = {}
    for entry, text in zip(entries, bucket_texts, strict=True):
        groups.setdefault(bucket_of(text, buckets), []).append(entry)
    return [{"stage": stage, BUCKET_COLUMN: bucket, "changes": pickle.dumps(packed, PICKLE_PROTOCOL)}
            for bucket, packed in groups.items()]


def unpack(changes: bytes) -> list[tuple[str, int, Row, int]]:
    """The (key text, port, row, weight) changes of one packed row."""
    return pickle.loads(changes)
