"""A view's change feed written to a Delta table with delta-rs, exactly once per micro-batch.

    query = (view.changes().writeStream.foreachBatch(DeltaBatchWriter("/data/q3_changes", app_id="q3"))
             .option("checkpointLocation", "/data/ivm/q3_sink").start())

Spark's ``foreachBatch`` runs a batch again after a failure or a restart, with the same batch id; so
each batch is appended in one Delta commit that also records the app transaction ``(app_id, batch
id)`` (Delta's ``txn`` action, what Delta's own Spark sink uses), and a batch whose id the table has
already recorded for ``app_id`` is skipped. The append and the record are one commit, so a batch is
in the table whole or not at all, and never twice.

The rows are the change feed's (``IncrementalView.changes``: the result's columns, ``_batch``,
``_weight``); summing ``_weight`` per row over the table gives the view's current result. The
batch is collected on the driver (``toArrow``) and written from there: a change feed's batches are
the result's changes, small next to the tables they come from.
"""

from __future__ import annotations

from collections.abc import Mapping

import pyarrow as pa
from deltalake import CommitProperties, DeltaTable, Transaction, write_deltalake


def write_batch(path: str, data: pa.Table, app_id: str, batch_id: int,
                storage_options: Mapping[str, str] | None = None,
                configuration: Mapping[str, str] | None = None) -> bool:
    """Append ``data`` as batch ``batch_id`` of ``app_id`` to the Delta table at ``path`` (created by the
    first batch, with ``configuration``) unless that batch is there already; return whether it wrote."""
    options = dict(storage_options or {})
    if DeltaTable.is_deltatable(path, storage_options=options):
        done = DeltaTable(path, storage_options=options).transaction_version(app_id)
        if done is not None and done >= batch_id:
            return False
    write_deltalake(path, data, mode="append", storage_options=options, configuration=configuration,
                    commit_properties=CommitProperties(app_transactions=[Transaction(app_id, batch_id)]))
    return True


class DeltaBatchWriter:
    """A ``foreachBatch`` function writing each micro-batch with ``write_batch`` (see the module docstring)."""

    def __init__(self, path: str, app_id: str, storage_options: Mapping[str, str] | None = None,
                 configuration: Mapping[str, str] | None = None):
        self.path, self.app_id = path, app_id
        self.storage_options, self.configuration = storage_options, configuration

    def __call__(self, batch, batch_id: int) -> None:
        write_batch(self.path, batch.toArrow(), self.app_id, batch_id, self.storage_options, self.configuration)
