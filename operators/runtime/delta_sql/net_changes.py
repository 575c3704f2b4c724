"""A micro-batch's changes to one table, validated and folded to one net change per primary key.

Set semantics as everywhere (``validate.keyed_change_defect``): an insert needs its key absent, a
delete needs the stored row. Within a batch a key's changes apply in ``(_seq, _op)`` order
(``spark_changes``). Most keys change once per batch and are checked by one join against the stored
rows, in the JVM: the stored rows are scanned once against the broadcast keys of the batch, never
shuffled. The rest (a key changed more than once, or a change that fails that check) go to the driver
with their stored row and are applied one by one in order, where each invalid change is refused under
the ``error`` policy or quarantined with its reason. They are few: a valid stream changes a key twice in
one batch only for an update (a delete and an insert).

The net change of a key is its stored row out and its final row in (nothing when they are equal), so
the delta terms see one consistent before and after per batch, whatever happened in between.
"""

from __future__ import annotations

import attrs
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StructType
from pyspark.sql.window import Window

from catalog.schema import Table
from operators.runtime.delta_sql.state_files import INSERTED
from operators.runtime.spark_changes import OP, SEQ
from operators.runtime.spark_sink import RejectedChange
from operators.runtime.stream import Update
from operators.runtime.validate import InvalidChangeError, keyed_change_defect

_STORED = "__stored_"
_COUNT = "__changes"
_PLAIN = "__plain"


@attrs.frozen
class NetChanges:
    """A table's accepted net changes: rows in (its columns) and stored rows out (with ``_ins``), how
    many of each, and the changes the policy quarantined."""

    inserted: DataFrame
    deleted: DataFrame
    inserted_rows: int
    deleted_rows: int
    rejected: list[RejectedChange]


@attrs.frozen
class Classified:
    """A table's changes joined to their stored rows and marked ``__plain`` where one join decides them
    (cached for the batch: the counts, the net changes and the driver's share all read it)."""

    table: Table
    joined: DataFrame

    def counts(self) -> DataFrame:
        """Rows per (plain, ``_op``), tagged with the table: one small job counts every table's at once."""
        return self.joined.groupBy(_PLAIN, OP).count().select(F.lit(self.table.name).alias("table"), _PLAIN, OP, "count")


def classified_changes(table: Table, changes: DataFrame, stored: DataFrame) -> Classified:
    """``changes`` (the table's columns, ``_op``, ``_seq``) joined to ``stored`` (the rows before the
    batch), the stored rows scanned once against the broadcast keys of the changes."""
    key, columns = list(table.primary_key), list(table.column_names)
    counted = changes.withColumn(_COUNT, F.count(F.lit(1)).over(Window.partitionBy(*key)))
    touched = stored.join(F.broadcast(changes.select(*key)), key, "left_semi")
    joined = counted.join(F.broadcast(touched.select(*key, *(F.col(c).alias(_STORED + c) for c in [*columns, INSERTED]))),
                          key, "left")
    present = F.col(_STORED + INSERTED).isNotNull()
    same = _all([F.col(c).eqNullSafe(F.col(_STORED + c)) for c in columns])
    plain = (F.col(_COUNT) == 1) & (((F.col(OP) == 1) & ~present) | ((F.col(OP) == -1) & present & same))
    return Classified(table, joined.withColumn(_PLAIN, plain).persist())


def net_changes(spark: SparkSession, classified: Classified, counts: dict[tuple[bool, int], int],
                stored_schema: StructType, policy: str) -> NetChanges:
    """The net changes of ``classified`` given its ``counts`` (``Classified.counts``); see the module
    docstring. Raises ``InvalidChangeError`` under the ``error`` policy."""
    table, joined = classified.table, classified.joined
    columns = list(table.column_names)
    plain = F.col(_PLAIN)
    inserted = joined.where(plain & (F.col(OP) == 1)).select(*columns)
    deleted = joined.where(plain & (F.col(OP) == -1)).select(*(F.col(_STORED + c).alias(c) for c in [*columns, INSERTED]))
    inserted_rows, deleted_rows = counts.get((True, 1), 0), counts.get((True, -1), 0)
    if not any(n for (is_plain, _), n in counts.items() if not is_plain):
        return NetChanges(inserted, deleted, inserted_rows, deleted_rows, [])
    more_in, more_out, rejected = _one_by_one(table, joined.where(~plain).collect(), policy)
    return NetChanges(inserted.unionByName(spark.createDataFrame(more_in, inserted.schema)),
                      deleted.unionByName(spark.createDataFrame(more_out, stored_schema)),
                      inserted_rows + len(more_in), deleted_rows + len(more_out), rejected)


def _all(conditions: list):
    result = conditions[0]
    for condition in conditions[1:]:
        result = result & condition
    return result


def _one_by_one(table: Table, rows: list, policy: str) -> tuple[list[tuple], list[tuple], list[RejectedChange]]:
    """The changes of keys that need an ordered check (collected rows of ``net_changes``'s join):
    applied per key in ``(_seq, _op)`` order; returns rows in, stored rows out, and the rejected."""
    columns = table.column_names
    by_key: dict[tuple, list] = {}
    for row in rows:
        by_key.setdefault(tuple(row[c] for c in table.primary_key), []).append(row)
    inserted, deleted, rejected = [], [], []
    for key, changes in by_key.items():
        first = changes[0]
        initial = None if first[_STORED + INSERTED] is None else tuple(first[_STORED + c] for c in columns)
        current = initial
        for change in sorted(changes, key=lambda r: (r[SEQ] is not None, r[SEQ] or 0, r[OP])):
            row, op = tuple(change[c] for c in columns), change[OP]
            reason = keyed_change_defect(current, row, op, key)
            if reason is not None:
                if policy == "error":
                    raise InvalidChangeError(Update(change[SEQ], table.name, op, row), reason)
                rejected.append(RejectedChange(table.name, change[SEQ], op, row, reason))
                continue
            current = row if op == 1 else None
        if current != initial:
            if initial is not None:
                deleted.append((*initial, first[_STORED + INSERTED]))
            if current is not None:
                inserted.append(current)
    return inserted, deleted, rejected
