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
non-empty chunk of its keys (``spark_edges.chunk_of``), ``states`` the pickled dict key text → state.
A batch reads the list once, unpickles only the chunks its keys fall in, and writes the list back once
(``clear`` when no chunk is left), the chunks it did not open as the bytes it read. State calls per
micro-batch: three per bucket the batch touches (the grouping key pyspark sets, ``get``, ``put``),
where the MapState layout made one plus two per touched chunk.

The cost moved elsewhere: the bytes of a touched bucket's whole state travel to Python and back and
are rewritten in RocksDB each batch, O(state / buckets) per touched bucket, while the Python work
(unpickling, the stage, pickling) stays O(touched chunks).
"""

from __future__ import annotations

import pickle
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pyspark.sql.types import BinaryType, IntegerType, StructField, StructType

from operators.runtime.run_errors import WorkDirMismatchError
from operators.runtime.spark_counters import OFF, Counters
from operators.runtime.spark_edges import PICKLE_PROTOCOL, chunk_of

#: The state layout a checkpoint is written in, recorded in the work directory's ``LAYOUT_FILE``.
STATE_LAYOUT = "bucket chunks in a ListState"
LAYOUT_FILE = "state-layout"

#: A StructType, not DDL text: pyspark parses a DDL schema with one more state-server call per task.
CHUNKS_SCHEMA = StructType([StructField("chunk", IntegerType(), False), StructField("states", BinaryType(), False)])


class BucketStates:
    """The key states of the bucket whose group is being processed, chunk by chunk, from ``state``
    (``handle.getListState(name, CHUNKS_SCHEMA)``); see the module docstring. ``chunk`` gives a chunk's
    dict to read and change in place; ``save`` writes every chunk back."""

    def __init__(self, state: Any, counters: Counters = OFF):
        self.state, self.counters = state, counters
        self.stored: dict[int, bytes] = {chunk: data for chunk, data in state.get()}
        self.had_state = bool(self.stored)
        self.opened: dict[int, dict[str, Any]] = {}

    def chunk(self, number: int) -> dict[str, Any]:
        """Chunk ``number``'s key text → state (empty when it holds none); changes are saved by ``save``."""
        states = self.opened.get(number)
        if states is None:
            data = self.stored.get(number)
            with self.counters.phase("unpickle state"):
                states = {} if data is None else pickle.loads(data)
            self.opened[number] = states
        return states

    def save(self) -> None:
        """Write the bucket back in one call: the opened chunks pickled again (dropped when empty), the
        others as read; nothing when no chunk was opened."""
        if not self.opened:
            return
        with self.counters.phase("pickle state"):
            for number, states in self.opened.items():
                if states:
                    self.stored[number] = pickle.dumps(states, PICKLE_PROTOCOL)
                else:
                    self.stored.pop(number, None)
        if self.stored:
            self.state.put(sorted(self.stored.items()))
        elif self.had_state:
            self.state.clear()
        self.opened, self.had_state = {}, bool(self.stored)


def by_chunk(texts: Iterable[str], buckets: int, chunks: int) -> dict[int, list[str]]:
    """Key texts grouped by their chunk, so that each chunk is unpickled once."""
    grouped: dict[int, list[str]] = {}
    for text in texts:
        grouped.setdefault(chunk_of(text, buckets, chunks), []).append(text)
    return grouped


def check_state_layout(work_dir: Path, fresh: bool) -> None:
    """Record the state layout in a fresh work directory; refuse to resume a checkpoint written in
    another. Why: Spark itself refuses a state variable whose type changed, but only inside the first
    micro-batch, as a stack trace (``STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE``); a work directory
    without the file was written before the layout was recorded (one MapState entry per chunk)."""
    marker = work_dir / LAYOUT_FILE
    if fresh:
        work_dir.mkdir(parents=True, exist_ok=True)
        marker.write_text(STATE_LAYOUT)
        return
    found = marker.read_text() if marker.exists() else "a MapState entry per chunk"
    if found != STATE_LAYOUT:
        raise WorkDirMismatchError(
            f"{work_dir} holds a checkpoint whose state is kept as {found}, which this version does not read "
            f"(it keeps {STATE_LAYOUT}); maintain the view again in a new work directory")
