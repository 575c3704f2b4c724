"""What a Spark stage's Python worker measures about itself when profiling is on.

Why: Spark's own metrics stop at the Python worker's boundary ("time to execute Python code" per
operator), and where a stage's Python time goes (the state-server round trips, unpickling, the stage
logic, pickling) is what decides how the runner should store state. So each stateful processor keeps
one ``TaskCounters`` per task (one operator partition in one micro-batch): named phases' seconds,
counts (changes in and out, Spark groups, chunks touched), and every state-server call with its round
trip, counted where pyspark sends it (``StatefulProcessorApiClient``: one synchronous socket message to
the JVM per call, implicit-key settings included). At the task's end (the processor's ``close``) the
counters are appended as one JSON line to ``<directory>/<pid>.jsonl`` with the micro-batch id, read by
``examples/benchmarks/spark_profile.py``.

Profiling is on when the worker's environment names the directory (``PROFILE_ENV``; the profiler sets
it through ``spark.executorEnv``). Off, ``task_counters`` returns ``OFF``, whose methods do nothing,
and pyspark's state client is left as it is.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

PROFILE_ENV = "SPARK_IVM_PROFILE"
#: The local property Structured Streaming sets on a micro-batch's jobs (``MicroBatchExecution``).
BATCH_ID_PROPERTY = "streaming.sql.batchId"


class Counters:
    """The no-op counters of a task that is not profiled; ``TaskCounters`` keeps them."""

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        yield

    def count(self, name: str, n: int = 1) -> None:
        pass

    def flush(self) -> None:
        pass


OFF = Counters()


class TaskCounters(Counters):
    """One task's counters: ``operator`` names the stateful operator by its state variable."""

    def __init__(self, operator: str, directory: Path):
        self.operator, self.directory = operator, directory
        self.seconds: dict[str, float] = {}
        self.counts: dict[str, int] = {}
        self.started = time.time()
        self.sent_at = 0.0

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - started

    def count(self, name: str, n: int = 1) -> None:
        self.counts[name] = self.counts.get(name, 0) + n

    def flush(self) -> None:
        """Append this task's line; a driver-side ``init`` (pyspark's pre-init, no task) writes none."""
        from pyspark import TaskContext

        context = TaskContext.get()
        if context is None:
            return
        batch = context.getLocalProperty(BATCH_ID_PROPERTY)
        record = {"operator": self.operator, "batch": None if batch is None else int(batch),
                  "partition": context.partitionId(), "started": self.started, "ended": time.time(),
                  "seconds": self.seconds, "counts": self.counts}
        with open(self.directory / f"{os.getpid()}.jsonl", "a") as out:
            out.write(json.dumps(record) + "\n")


_current: TaskCounters | None = None


def task_counters(operator: str) -> Counters:
    """The counters of the task now starting in this worker (``OFF`` unless profiling is on)."""
    global _current
    directory = os.environ.get(PROFILE_ENV)
    if not directory:
        return OFF
    _count_state_calls()
    _current = TaskCounters(operator, Path(directory))
    return _current


_RECEIVES = ("_receive_proto_message", "_receive_proto_message_with_long_value",
             "_receive_proto_message_with_string_value", "_receive_proto_message_with_list_get",
             "_receive_proto_message_with_map_keys_values", "_receive_proto_message_with_map_pairs",
             "_receive_proto_message_with_timers")


def _count_state_calls() -> None:
    """Wrap pyspark's state client once per worker process: each message sent counts one state call,
    and the time from its send to the end of its answer's receive is its round trip."""
    from pyspark.sql.streaming.stateful_processor_api_client import StatefulProcessorApiClient as client

    if getattr(client, "_ivm_counted", False):
        return
    send = client._send_proto_message

    def counted_send(self, message: bytes) -> None:
        if _current is not None:
            _current.count("state calls")
            _current.sent_at = time.perf_counter()
        send(self, message)

    def timed(receive):
        def timed_receive(self, *args):
            answer = receive(self, *args)
            if _current is not None:
                elapsed = time.perf_counter() - _current.sent_at
                _current.seconds["state calls"] = _current.seconds.get("state calls", 0.0) + elapsed
            return answer
        return timed_receive

    client._send_proto_message = counted_send
    for name in _RECEIVES:
        if hasattr(client, name):
            setattr(client, name, timed(getattr(client, name)))
    client._ivm_counted = True
