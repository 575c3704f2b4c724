"""A bucket's key states in one ListState: read with one state-server call, written with one.

Why: every state call from a Python ``transformWithState`` worker is a synchronous round trip to the
JVM's state server. Kept as a MapState chunk → states, a bucket paid two calls per chunk a batch
touched (``getValue``, ``updateValue``); a batch of 100 000 changes touches nearly every one of the
256 × 64 chunks of a stage, and the profile (``examples/benchmarks/spark_profile.py``, RESULTS.md)
found those calls to be most of each micro-batch's time on TPC-H Q3. A ``ListState`` moves a whole
list in one call each way (``get`` answers with up to Spark's
``arrowTransformWithStateInPySparkMaxRecordsPerBatch`` elements, 10 000 by default, far more than the
chunks of a bucket; ``put`` replaces the list).

Layout: the Spark group of a bucket holds a ListState of rows ``(chunk int, states binary)``, one per
non-empty chunk of its keys (``spark_edges.chunk_of``), ``states`` the pickled dict key text → the
key's state as bytes (``spark_state_codec``: a table's rows in a compact typed encoding, other
states pickled). A batch reads the list once, opens only the chunks its keys fall in, decodes and
encodes only the keys it touches, and writes the list back once (``clear`` when no chunk is left),
the chunks it did not open as the bytes it read. State calls per micro-batch: three per bucket the
batch touches (the grouping key pyspark sets, ``get``, ``put``), where the MapState layout made one
plus two per touched chunk.

The cost moved elsewhere: the bytes of a touched bucket's whole state travel to Python and back and
are rewritten in RocksDB each batch, O(state / buckets) per touched bucket; the Python work is
O(touched chunks) for copying their bytes and O(touched keys) for decoding and encoding states.
"""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

from pyspark.sql.types import BinaryType, IntegerType, StructField, StructType

from operators.runtime.run_errors import WorkDirMismatchError
from operators.runtime.spark_counters import OFF, Counters
from operators.runtime.spark_edges import PICKLE_PROTOCOL, chunk_of
from operators.runtime.spark_state_codec import PICKLED, StateCodec

#: The state layout a checkpoint is written in, recorded in the work directory's ``LAYOUT_FILE``; it
#: names the operators' arrangement too (``spark_forwarding``), since that fixes their operator ids,
#: and the stages kept in pages (``spark_stage_processors.PAGED_STATES``): an RPAI tree's, a global
#: threshold's or a global MIN/MAX's state was one chunk before, which an older checkpoint holds where
#: pages are now looked for.
STATE_LAYOUT = ("bucket chunks of encoded key states in a ListState, operators in one line, RPAI trees, global "
                "thresholds and global MIN/MAX in pages")
LAYOUT_FILE = "state-layout"

#: A StructType, not DDL text: pyspark parses a DDL schema with one more state-server call per task.
CHUNKS_SCHEMA = StructType([StructField("chunk", IntegerType(), False), StructField("states", BinaryType(), False)])


class BucketStates:
    """The key states of the bucket whose group is being processed, from ``state``
    (``handle.getListState(name, CHUNKS_SCHEMA)``); see the module docstring. ``get`` decodes a key's
    state (None when absent), ``put`` encodes its new one (None removes the key), ``save`` writes
    the bucket back."""

    def __init__(self, state: Any, buckets: int, chunks: int, codec: StateCodec = PICKLED, counters: Counters = OFF):
        self.state, self.buckets, self.chunks, self.codec, self.counters = state, buckets, chunks, codec, counters
        self.stored: dict[int, bytes] = {chunk: data for chunk, data in state.get()}
        self.had_state = bool(self.stored)
        self.opened: dict[int, dict[str, bytes]] = {}
        self.changed: set[int] = set()

    def _open(self, number: int) -> dict[str, bytes]:
        encoded = self.opened.get(number)
        if encoded is None:
            data = self.stored.get(number)
            with self.counters.phase("unpickle state"):
                encoded = {} if data is None else pickle.loads(data)
            self.opened[number] = encoded
            self.counters.count("chunks")
        return encoded

    def get(self, text: str) -> Any | None:
        """The state of key ``text``, decoded (a new object each call), or None."""
        data = self._open(chunk_of(text, self.buckets, self.chunks)).get(text)
        if data is None:
            return None
        with self.counters.phase("unpickle state"):
            return self.codec.decode(data)

    def put(self, text: str, value: Any | None) -> None:
        """Key ``text``'s new state (encoded now: a later change to ``value`` is not seen); None removes it."""
        number = chunk_of(text, self.buckets, self.chunks)
        encoded = self._open(number)
        self.changed.add(number)
        if value is None:
            encoded.pop(text, None)
            return
        with self.counters.phase("pickle state"):
            encoded[text] = self.codec.encode(value)

    def save(self) -> None:
        """Write the bucket back in one call: the changed chunks pickled again (dropped when empty), the
        others as read; nothing when no key was put."""
        if not self.changed:
            return
        with self.counters.phase("pickle state"):
            for number in self.changed:
                encoded = self.opened[number]
                if encoded:
                    self.stored[number] = pickle.dumps(encoded, PICKLE_PROTOCOL)
                else:
                    self.stored.pop(number, None)
        if self.stored:
            self.state.put(sorted(self.stored.items()))
        elif self.had_state:
            self.state.clear()
        self.opened, self.changed, self.had_state = {}, set(), bool(self.stored)


def check_state_layout(work_dir: Path, fresh: bool, layout: str = STATE_LAYOUT) -> None:
    """Record the state layout in a fresh work directory; refuse to resume a checkpoint written in
    another. Why: Spark itself refuses a state variable whose type changed, but only inside the first
    micro-batch, as a stack trace (``STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE``); a work directory
    without the file was written before the layout was recorded (one MapState entry per chunk)."""
    marker = work_dir / LAYOUT_FILE
    if fresh:
        work_dir.mkdir(parents=True, exist_ok=True)
        marker.write_text(layout)
        return
    found = marker.read_text() if marker.exists() else "a MapState entry per chunk"
    if found != layout:
        raise WorkDirMismatchError(
            f"{work_dir} holds a checkpoint whose state is kept as {found}, which this view does not read "
            f"(it keeps {layout}); maintain the view again in a new work directory")
