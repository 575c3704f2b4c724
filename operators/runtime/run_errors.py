"""Errors of a run on the Spark engine, importable without importing pyspark (the CLI names them)."""

from __future__ import annotations


class SparkBatchError(RuntimeError):
    """A micro-batch failed and was not committed; ``error`` names the Python error the worker raised."""

    def __init__(self, error: str, message: str):
        super().__init__(f"{error}: {message}")
        self.error = error


class WorkDirMismatchError(ValueError):
    """A work directory holds a run started with other arguments; resuming it would mix two runs."""
