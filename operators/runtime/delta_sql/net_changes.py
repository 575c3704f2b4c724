"""A micro-batch's changes to one table, validated and folded to one net change per primary key.

Set semantics as everywhere (``validate.set_semantics_defect``): an insert needs its key absent, a
delete needs the stored row. A stored row carries a 64-bit fingerprint of its values (``_fp``: Spark's
xxhash64 of the columns and of which of them are NULL), and a delete is checked against it, so the
check reads three columns of the stored rows (key, ``_ins``, ``_fp``), not all of them; a delete whose
fingerprint matches is the stored row, whose values the delete itself carries. Within a batch a key's
changes apply in ``(_seq, _op)`` order (``spark_changes``). Most keys change once per batch and are
checked by one join against the stored rows, in the JVM: the stored rows are scanned once against the
broadcast keys of the batch, never shuffled. The rest (a key changed more than once, or a change that
fails that check) go to the driver with their stored fingerprint and are applied one by one in order,
where each invalid change is refused under the ``error`` policy or quarantined with its reason. They
are few: a valid stream changes a key twice in one batch only for an update (a delete and an insert).

The net change of a key is its stored row out and its final row in (nothing when they are equal), so
the delta terms see one consistent before and after per batch, whatever happened in between.
"""

from __future__ import annotations

import attrs
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.window import Window

from catalog import types
from catalog.literals import sql_literal
from catalog.schema import Table
from operators.runtime.delta_sql.state_files import INSERTED
from operators.runtime.spark_changes import OP, SEQ
from operators.runtime.spark_sink import RejectedChange
from operators.runtime.stream import Update
from operators.runtime.validate import InvalidChangeError, set_semantics_defect

_STORED = "__stored_"
_COUNT = "__changes"
#: A stored row's fingerprint column.
FINGERPRINT = "_fp"
_PLAIN = "__plain"


@attrs.frozen
class NetChanges:
    """A table's accepted net changes: rows in (its columns and ``_fp``) and stored rows out (its columns
    and ``_ins``), how many of each, and the changes the policy quarantined."""

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
    key = list(table.primary_key)
    counted = (changes.withColumn(_COUNT, F.count(F.lit(1)).over(Window.partitionBy(*key)))
               .withColumn(FINGERPRINT, fingerprint(table)))
    touched = stored.select(*key, *(F.col(c).alias(_STORED + c) for c in (INSERTED, FINGERPRINT)))
    touched = touched.join(F.broadcast(changes.select(*key)), key, "left_semi")
    joined = counted.join(F.broadcast(touched), key, "left")
    present = F.col(_STORED + INSERTED).isNotNull()
    same = F.col(FINGERPRINT) == F.col(_STORED + FINGERPRINT)
    plain = (F.col(_COUNT) == 1) & (((F.col(OP) == 1) & ~present) | ((F.col(OP) == -1) & present & same))
    return Classified(table, joined.withColumn(_PLAIN, plain).persist())


def net_changes(spark: SparkSession, classified: Classified, counts: dict[tuple[bool, int], int],
                policy: str) -> NetChanges:
    """The net changes of ``classified`` given its ``counts`` (``Classified.counts``); see the module
    docstring. Raises ``InvalidChangeError`` under the ``error`` policy."""
    table, joined = classified.table, classified.joined
    columns = list(table.column_names)
    plain = F.col(_PLAIN)
    inserted = joined.where(plain & (F.col(OP) == 1)).select(*columns, FINGERPRINT)
    deleted = joined.where(plain & (F.col(OP) == -1)).select(*columns, F.col(_STORED + INSERTED).alias(INSERTED))
    inserted_rows, deleted_rows = counts.get((True, 1), 0), counts.get((True, -1), 0)
    if not any(n for (is_plain, _), n in counts.items() if not is_plain):
        return NetChanges(inserted, deleted, inserted_rows, deleted_rows, [])
    more_in, more_out, rejected = _one_by_one(table, joined.where(~plain).collect(), policy)
    return NetChanges(inserted.unionByName(spark.createDataFrame(more_in, inserted.schema)),
                      deleted.unionByName(spark.createDataFrame(more_out, deleted.schema)),
                      inserted_rows + len(more_in), deleted_rows + len(more_out), rejected)


def fingerprint(table: Table) -> Column:
    """A row's fingerprint: xxhash64 of its values and of which are NULL (the hash skips a NULL, so
    ``(1, NULL)`` and ``(NULL, 1)`` would collide without the mask). A DOUBLE (FLOAT is read as one) is hashed plus 0.0,
    which makes −0.0 the 0.0 it equals, as the validation's row comparison has it (the hash reads the
    bits; every NaN it reads as the one NaN already)."""
    values = [F.col(f"`{c.name}`") + F.lit(0.0) if c.type == types.DOUBLE else F.col(f"`{c.name}`")
              for c in table.columns]
    nulls = F.concat(*(F.when(F.col(f"`{c}`").isNull(), "1").otherwise("0") for c in table.column_names))
    return F.xxhash64(*values, nulls)


def _one_by_one(table: Table, rows: list, policy: str) -> tuple[list[tuple], list[tuple], list[RejectedChange]]:
    """The changes of keys that need an ordered check (collected rows of the classified join): applied
    per key in ``(_seq, _op)`` order against the stored fingerprint; returns rows in (columns and
    ``_fp``), rows out (columns and ``_ins``: the values of the delete that matched), and the rejected."""
    columns = table.column_names
    by_key: dict[tuple, list] = {}
    for row in rows:
        by_key.setdefault(tuple(row[c] for c in table.primary_key), []).append(row)
    inserted, deleted, rejected = [], [], []
    for key, changes in by_key.items():
        initial = changes[0][_STORED + FINGERPRINT]
        current, values, stored_values = initial, None, None  # the present row's fingerprint and values
        for change in sorted(changes, key=lambda r: (r[SEQ] is not None, r[SEQ] or 0, r[OP])):
            row, op = tuple(change[c] for c in columns), change[OP]
            shown = "the stored row" if values is None else sql_literal(values)
            reason = set_semantics_defect(op, key, current is not None, change[FINGERPRINT] == current, shown)
            if reason is not None:
                if policy == "error":
                    raise InvalidChangeError(Update(change[SEQ], table.name, op, row), reason)
                rejected.append(RejectedChange(table.name, change[SEQ], op, row, reason))
                continue
            if op == -1 and values is None:
                stored_values = row  # the delete matched the stored row: these are its values
            current, values = (change[FINGERPRINT], row) if op == 1 else (None, None)
        if current != initial:
            if initial is not None:
                deleted.append((*stored_values, changes[0][_STORED + INSERTED]))
            if current is not None:
                inserted.append((*values, current))
    return inserted, deleted, rejected
