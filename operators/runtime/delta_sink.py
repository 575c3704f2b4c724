"""A view's change feed, or its current result, kept in a Delta table with delta-rs, exactly once per
micro-batch.

    query = (view.changes().writeStream.foreachBatch(DeltaBatchWriter("/data/q3_changes", app_id="q3"))
             .option("checkpointLocation", "/data/ivm/q3_sink").start())
    # or DeltaResultWriter("/data/q3", app_id="q3"): the result itself, changed in place

Spark's ``foreachBatch`` runs a batch again after a failure or a restart, with the same batch id; so
each batch is appended in one Delta commit that also records the app transaction ``(app_id, batch
id)`` (Delta's ``txn`` action, what Delta's own Spark sink uses), and a batch whose id the table has
already recorded for ``app_id`` is skipped. The append and the record are one commit, so a batch is
in the table whole or not at all, and never twice.

The rows are the change feed's (``IncrementalView.changes``: the result's columns, ``_batch``,
``_weight``); summing ``_weight`` per row over the table gives the view's current result. The
batch is collected on the driver (``toArrow``) and written from there: a change feed's batches are
the result's changes, small next to the tables they come from.

**The result** (``DeltaResultWriter``, ``apply_batch``): a table of the view's distinct rows, each with
``_count``, how many times the result holds it (1 for a view whose rows are distinct: GROUP BY,
DISTINCT). A batch's changes are summed per row (NULLs equal, as in a GROUP BY) and applied in one
MERGE on every column (``IS NOT DISTINCT FROM``): a row whose count reaches 0 is deleted, another
matched row gets its new count, a new row is inserted. The MERGE commit records the app
transaction, so, as for the feed, a replayed batch is skipped. A batch costs a MERGE over the table
(delta-rs scans the files it rewrites), not a rewrite of the result; the result's order (ORDER BY) is
not kept, a Delta table having none.
"""

from __future__ import annotations

from collections.abc import Mapping

import pyarrow as pa
import pyarrow.compute as pc
from deltalake import CommitProperties, DeltaTable, Transaction, write_deltalake

#: the result table's multiplicity column, and the change feed's columns that are not result columns
COUNT, WEIGHT, BATCH = "_count", "_weight", "_batch"


def _recorded(path: str, app_id: str, batch_id: int, options: dict) -> bool:
    """Whether the Delta table at ``path`` exists and has recorded batch ``batch_id`` of ``app_id``."""
    if not DeltaTable.is_deltatable(path, storage_options=options):
        return False
    done = DeltaTable(path, storage_options=options).transaction_version(app_id)
    return done is not None and done >= batch_id


def write_batch(path: str, data: pa.Table, app_id: str, batch_id: int,
                storage_options: Mapping[str, str] | None = None,
                configuration: Mapping[str, str] | None = None) -> bool:
    """Append ``data`` as batch ``batch_id`` of ``app_id`` to the Delta table at ``path`` (created by the
    first batch, with ``configuration``) unless that batch is there already; return whether it wrote."""
    options = dict(storage_options or {})
    if _recorded(path, app_id, batch_id, options):
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


def net_changes(changes: pa.Table) -> pa.Table:
    """A change feed's rows (result columns, ``_weight``, optionally ``_batch``) summed per distinct row,
    rows summing to 0 left out: the result columns and ``_weight`` (int64)."""
    if COUNT in changes.column_names:
        raise ValueError(f"a view's result column is named {COUNT}, which the Delta result table uses for counts")
    columns = [name for name in changes.column_names if name not in (WEIGHT, BATCH)]
    summed = changes.select([*columns, WEIGHT]).group_by(columns, use_threads=False).aggregate([(WEIGHT, "sum")])
    summed = summed.rename_columns([*columns, WEIGHT]).select([*columns, WEIGHT])
    weights = summed.column(WEIGHT).cast(pa.int64())
    return summed.set_column(len(columns), WEIGHT, weights).filter(pc.not_equal(weights, 0))


def apply_batch(path: str, changes: pa.Table, app_id: str, batch_id: int,
                storage_options: Mapping[str, str] | None = None,
                configuration: Mapping[str, str] | None = None) -> bool:
    """Apply one batch of a view's change feed to the result table at ``path`` (created by the first
    batch, with ``configuration``) unless that batch is there already; return whether it wrote.
    See the module docstring."""
    options = dict(storage_options or {})
    if _recorded(path, app_id, batch_id, options):
        return False
    net = net_changes(changes)
    columns = net.column_names[:-1]
    commit = CommitProperties(app_transactions=[Transaction(app_id, batch_id)])
    if not DeltaTable.is_deltatable(path, storage_options=options):
        if pc.any(pc.less(net.column(WEIGHT), 0)).as_py():
            raise ValueError(f"batch {batch_id} deletes rows from the empty result table at {path}")
        write_deltalake(path, net.rename_columns([*columns, COUNT]), storage_options=options,
                        configuration=configuration, commit_properties=commit)
        return True
    on = " AND ".join(f"(t.`{name}` IS NOT DISTINCT FROM s.`{name}`)" for name in columns)
    (DeltaTable(path, storage_options=options)
     .merge(net, on, source_alias="s", target_alias="t", commit_properties=commit)
     .when_matched_delete(predicate=f"t.{COUNT} + s.{WEIGHT} = 0")
     .when_matched_update(updates={COUNT: f"t.{COUNT} + s.{WEIGHT}"})
     .when_not_matched_insert(updates={**{f"`{name}`": f"s.`{name}`" for name in columns}, COUNT: f"s.{WEIGHT}"})
     .execute())
    return True


class DeltaResultWriter(DeltaBatchWriter):
    """A ``foreachBatch`` function keeping the view's current result in a Delta table with ``apply_batch``."""

    def __call__(self, batch, batch_id: int) -> None:
        apply_batch(self.path, batch.toArrow(), self.app_id, batch_id, self.storage_options, self.configuration)
