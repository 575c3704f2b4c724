"""``SparkRunner.run_available`` starts its query again when a micro-batch failed only on Spark's fixed
10 s Python connect-back (nothing committed: the checkpoint resumes it), twice at most, and raises
any other failure at once. A stand-in query, no Spark session: what is checked is the retry rule."""

from __future__ import annotations

import pytest
from pyspark.errors import StreamingQueryException

from operators.runtime.run_errors import SparkBatchError
from operators.runtime.spark_runner import CONNECT_BACK, CONNECT_BACK_RETRIES, SparkRunner

CONNECT_BACK_FAILURE = f"[STREAM_FAILED] Query terminated with exception: {CONNECT_BACK}. SQLSTATE: XXKST"


class StandInQuery:
    """Fails its run with the next of ``failures`` (None: succeeds), then is inactive, as a failed query is."""

    def __init__(self, failures: list[str | None]):
        self.failures = failures
        self.isActive = True

    def processAllAvailable(self) -> None:
        failure = self.failures.pop(0)
        if failure is not None:
            self.isActive = False
            raise StreamingQueryException(message=failure)


def runner_with(failures: list[str | None]) -> tuple[SparkRunner, list[StandInQuery]]:
    runner = SparkRunner.__new__(SparkRunner)
    started: list[StandInQuery] = []

    def start_query() -> StandInQuery:
        started.append(StandInQuery(failures))
        return started[-1]

    runner._start_query = start_query
    runner.query = start_query()
    return runner, started


def test_a_micro_batch_failed_on_the_connect_back_runs_again_from_the_checkpoint():
    runner, started = runner_with([CONNECT_BACK_FAILURE, CONNECT_BACK_FAILURE, None])
    runner.run_available()
    assert len(started) == 3


def test_the_connect_back_is_retried_twice_then_raised():
    runner, started = runner_with([CONNECT_BACK_FAILURE] * (CONNECT_BACK_RETRIES + 1))
    with pytest.raises(SparkBatchError, match="connect back"):
        runner.run_available()
    assert len(started) == CONNECT_BACK_RETRIES + 1


def test_any_other_failure_is_raised_at_once():
    runner, started = runner_with(["[STREAM_FAILED] Query terminated with exception: DIVIDE_BY_ZERO"])
    with pytest.raises(SparkBatchError, match="DIVIDE_BY_ZERO"):
        runner.run_available()
    assert len(started) == 1
