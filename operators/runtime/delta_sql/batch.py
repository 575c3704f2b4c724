"""One micro-batch of the JVM delta strategy: the ``foreachBatch`` function of its streaming query.

Per micro-batch ``b`` (``DeltaBatch.__call__``):

1. every table's changes are validated and folded to net changes (``net_changes``), all tables before
   anything is written, so an invalid batch under the ``error`` policy fails with every state as it was;
2. each table is viewed as ``old`` (its stored rows before ``b``), ``delta`` (the net changes, ``_op``
   ±1) and ``new`` (old without the rows deleted, plus those inserted), and the plan's delta terms join
   them, always broadcasting the rows so far (the small side) and scanning the state;
3. with aggregation the terms' rows are summed per group into the ring's partial sums (``dagg``); the
   result's changes are the changed groups' old and new rows, or, for a top-k and a global aggregate,
   the difference between the result before (the sink's previous version) and after;
4. the state logs get the batch's net changes and partial sums (``state_files``), then the sink writes
   the result's changes and the rejected input, both idempotent per batch id.

Every step is Spark SQL in the JVM; the driver holds the batch's result changes, the rejected changes,
and the few changes validated one by one.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from functools import reduce
from pathlib import Path

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import LongType, StructField, StructType

from catalog.schema import Table
from operators.runtime.delta_sql.net_changes import (
    FINGERPRINT,
    Classified,
    NetChanges,
    classified_changes,
    net_changes,
)
from operators.runtime.delta_sql.plan import (
    AGGREGATE_REF,
    ARGUMENT,
    GROUP,
    GROUP_REF,
    NON_NULL,
    ROWS,
    SUM,
    WEIGHT,
    DeltaSqlPlan,
    DeltaTerm,
    renamed,
)
from operators.runtime.delta_sql.state_files import INSERTED, StateFiles
from operators.runtime.spark_changes import OP, SEQ
from operators.runtime.spark_sink import ResultSink, table_rows
from operators.zset import Changelog, consolidate

#: The log of the aggregate's partial sums in the state directory.
AGGREGATE_LOG = "__aggregate"
#: The column naming each change's table in the query's one stream of changes (``tagged_changes``).
TABLE = "_table"


def tagged_changes(changes: Mapping[str, DataFrame], tables: Mapping[str, Table]) -> DataFrame:
    """The tables' change streams as one stream: ``_table``, ``_op``, ``_seq`` and one struct column per
    table (``t_<table>``, NULL in the other tables' rows), so one micro-batch holds every table's part."""
    def struct_type(table: Table) -> str:
        return f"struct<{', '.join(f'`{c.name}`: {c.type}' for c in table.columns)}>"

    parts = []
    for name, stream in changes.items():
        structs = [F.struct(*(F.col(f"`{c}`") for c in tables[other].column_names)).alias(f"t_{other}") if other == name
                   else F.lit(None).cast(struct_type(tables[other])).alias(f"t_{other}") for other in tables]
        parts.append(stream.select(F.lit(name).alias(TABLE), F.col(OP), F.col(SEQ), *structs))
    return reduce(DataFrame.unionByName, parts)


def stored_schema(table: Table) -> StructType:
    """A table's stored rows: its columns (Spark types), ``_ins`` and the fingerprint ``_fp``."""
    return StructType([*StructType.fromDDL(", ".join(f"`{c.name}` {c.type}" for c in table.columns)).fields,
                       StructField(INSERTED, LongType()), StructField(FINGERPRINT, LongType())])


class DeltaBatch:
    """The ``foreachBatch`` function; see the module docstring. ``directory`` holds the state logs."""

    def __init__(self, plan: DeltaSqlPlan, tables: Mapping[str, Table], directory: Path, sink: ResultSink,
                 policy: str, compact_every: int = 8):
        self.plan, self.tables, self.directory, self.sink = plan, dict(tables), directory, sink
        self.policy, self.compact_every = policy, compact_every
        #: Per batch id, seconds per phase (validation, result changes, storing, sink): ``spark_profile.py``.
        self.phases: dict[int, dict[str, float]] = {}

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        started = time.perf_counter()
        spark = batch.sparkSession
        # The streaming query's own session: a query here is one job plus its broadcasts, where adaptive
        # execution would make each shuffle stage a job of its own (~0.1-0.5 s each on 2 cores;
        # measured 1.15x faster without it, RESULTS.md's log, "2026-11-28 (sixth session)").
        spark.conf.set("spark.sql.adaptive.enabled", "false")
        state = StateFiles(spark, self.directory, self.compact_every)
        state.start_batch(batch_id)
        batch = batch.persist()
        nets: dict[str, NetChanges] = {}
        classified: dict[str, Classified] = {}
        befores: dict[str, DataFrame] = {}
        views: dict[tuple[str, str], DataFrame] = {}
        phases = self.phases[batch_id] = {}
        clock = [time.perf_counter()]
        context = spark.sparkContext  # each job is described by its phase, in Spark's UI and in profiles

        def lap(phase: str) -> None:
            now = time.perf_counter()
            phases[phase] = phases.get(phase, 0.0) + now - clock[0]
            clock[0] = now
            context.setJobDescription(f"ivm batch {batch_id} after {phase}")

        context.setJobDescription(f"ivm batch {batch_id} validate")

        try:
            for name, table in self.tables.items():
                changes = batch.where(F.col(TABLE) == name).select(f"t_{name}.*", OP, SEQ)
                before = state.rows_before(name, stored_schema(table), table.primary_key, batch_id)
                classified[name] = classified_changes(table, changes, before)
                befores[name] = before
            counts: dict[str, dict[tuple[bool, int], int]] = {name: {} for name in self.tables}
            for row in reduce(DataFrame.unionByName, [c.counts() for c in classified.values()]).collect():
                counts[row["table"]][(row[1], row[OP])] = row["count"]
            lap("validate")
            for name, table in self.tables.items():
                nets[name] = net = net_changes(spark, classified[name], counts[name], self.policy)
                views.update(_views(name, table, befores[name], net))
            lap("net changes")
            changes = self._result_changes(spark, state, views, batch_id)
            lap("result changes")
            for name, table in self.tables.items():
                _store(state, name, table, nets[name], views, batch_id)
                lap(f"store {name}")
            computed = time.perf_counter()
            self.sink.write_batch(batch_id, changes, [r for net in nets.values() for r in net.rejected])
            lap("sink")
            self.sink.seconds[batch_id] = (computed - started, time.perf_counter() - computed)
        finally:
            context.setJobDescription(None)
            batch.unpersist()
            for view in [*views.values(), *(c.joined for c in classified.values())]:
                view.unpersist()

    def _result_changes(self, spark: SparkSession, state: StateFiles, views: dict, batch_id: int) -> Changelog:
        rows = reduce(DataFrame.unionByName, [self._term_rows(term, views) for term in self.plan.terms])
        if not self.plan.aggregated:
            columns = [c for c in rows.columns if c != WEIGHT]
            summed = rows.groupBy(*columns).agg(F.sum(WEIGHT).alias(WEIGHT)).where(F.col(WEIGHT) != 0)
            return [(tuple(r[:-1]), r[-1]) for r in _rows(summed)]
        dagg = self._partial_sums(rows).persist()
        try:
            before = state.sums_before(AGGREGATE_LOG, dagg.schema, batch_id)
            if self.plan.recomputes_top:
                current = _summed(before.unionByName(dagg), dagg.schema, self.plan.groups)
                changes = [(row, 1) for row in _rows(self._top(spark, self._final(current)))]
                changes += [(row, -1) for row in self.sink.result_before(batch_id)]
            else:
                groups = [f"{GROUP}{i}" for i in range(self.plan.groups)]
                keys = F.broadcast(dagg.select(*groups).alias("k"))
                same = reduce(Column.__and__, [before[g].eqNullSafe(F.col(f"k.{g}")) for g in groups])
                old = _summed(before.join(keys, same, "left_semi"), dagg.schema, self.plan.groups)
                new = _summed(old.unionByName(dagg), dagg.schema, self.plan.groups)
                changes = [(row, -1) for row in _rows(self._final(old))] + [(row, 1) for row in _rows(self._final(new))]
                current = None
            state.write(AGGREGATE_LOG, "ins", batch_id, dagg)
            if state.compacts(AGGREGATE_LOG, batch_id):
                if current is None:
                    current = _summed(before.unionByName(dagg), dagg.schema, self.plan.groups)
                state.write(AGGREGATE_LOG, "base", batch_id, current)
        finally:
            dagg.unpersist()
        return consolidate(changes)

    def _term_rows(self, term: DeltaTerm, views: dict) -> DataFrame:
        """Term ``term``'s rows: its steps joined, the rows so far broadcast to each next state."""
        rows = None
        for step in term.steps:
            occurrence = self.plan.occurrences[step.occurrence]
            view = views[(step.kind, occurrence.table)]
            side = view.select(*(F.col(f"`{c}`").alias(renamed(occurrence.alias, c)) for c in view.columns))
            if step.filter:
                side = side.where(F.expr(step.filter))
            rows = side if rows is None else F.broadcast(rows).join(side, F.expr(step.condition), "inner")
        return rows.selectExpr(*term.columns)

    def _partial_sums(self, rows: DataFrame) -> DataFrame:
        """The terms' rows summed per group into the ring: per aggregate j a signed sum and a count of
        non-NULL arguments, and the group's row count."""
        weight = F.col(WEIGHT)
        sums = []
        for j, aggregate in enumerate(self.plan.aggregates):
            if aggregate.argument is None:
                continue
            argument = F.col(f"{ARGUMENT}{aggregate.argument}")
            if aggregate.kind == "avg":
                argument = argument.cast("double")
            if aggregate.kind in ("sum", "avg"):
                sums.append(F.sum(F.when(weight > 0, argument).otherwise(-argument)).alias(f"{SUM}{j}"))
            sums.append(F.sum(F.when(argument.isNull(), 0).otherwise(weight)).alias(f"{NON_NULL}{j}"))
        sums.append(F.sum(weight).alias(ROWS))
        return rows.groupBy(*(f"{GROUP}{i}" for i in range(self.plan.groups))).agg(*sums)

    def _final(self, sums: DataFrame) -> DataFrame:
        """The result's rows of the groups in ``sums`` (a row per group, HAVING applied)."""
        values = [F.col(f"{GROUP}{i}").alias(f"{GROUP_REF}{i}") for i in range(self.plan.groups)]
        for j, aggregate in enumerate(self.plan.aggregates):
            count = F.coalesce(F.col(ROWS if aggregate.argument is None else f"{NON_NULL}{j}"), F.lit(0))
            if aggregate.kind == "sum":
                value = F.when(count > 0, F.col(f"{SUM}{j}"))
            elif aggregate.kind == "avg":
                value = F.when(count > 0, F.col(f"{SUM}{j}") / count)
            else:
                value = count
            values.append(value.alias(f"{AGGREGATE_REF}{j}"))
        rows = sums.select(*values)
        if self.plan.having:
            rows = rows.where(F.expr(self.plan.having))
        return rows.selectExpr(*self.plan.select)

    def _top(self, spark: SparkSession, rows: DataFrame) -> DataFrame:
        if self.plan.limit is None:
            return rows
        ties = ", ".join(str(i + 1) for i in range(len(rows.columns)))  # a fixed choice among equal keys
        return spark.sql(f"SELECT * FROM {{rows}} ORDER BY {self.plan.order}, {ties} LIMIT {self.plan.limit}", rows=rows)


def _views(name: str, table: Table, before: DataFrame, net: NetChanges) -> dict[tuple[str, str], DataFrame]:
    """Table ``name`` as the terms read it: ``old``, ``delta`` and ``new``; the net changes persisted
    (each is read by several terms and stored)."""
    inserted, deleted = net.inserted.persist(), net.deleted.persist()
    columns = list(table.column_names)
    key = [*table.primary_key, INSERTED]
    kept = before.join(F.broadcast(deleted.select(*key)), key, "left_anti")
    return {
        ("old", name): before.select(*columns),
        ("delta", name): inserted.select(*columns).withColumn(OP, F.lit(1))
        .unionByName(deleted.select(*columns).withColumn(OP, F.lit(-1))),
        ("new", name): kept.select(*columns).unionByName(inserted.select(*columns)),
        ("inserted", name): inserted,
        ("deleted", name): deleted,
        ("kept", name): kept,
    }


def _store(state: StateFiles, name: str, table: Table, net: NetChanges, views: dict, batch_id: int) -> None:
    """Log table ``name``'s net changes of ``batch_id`` (and its whole rows every few batches)."""
    inserted = views[("inserted", name)].withColumn(INSERTED, F.lit(batch_id).cast("bigint"))
    inserted = inserted.select(*stored_schema(table).names)
    deleted = views[("deleted", name)]
    if net.inserted_rows:
        state.write(name, "ins", batch_id, inserted)
    if net.deleted_rows:
        state.write(name, "del", batch_id, deleted.select(*table.primary_key, INSERTED))
    if state.compacts(name, batch_id):
        state.write(name, "base", batch_id, views[("kept", name)].unionByName(inserted))


def _summed(sums: DataFrame, schema: StructType, groups: int) -> DataFrame:
    """Partial sums per group, added up (in their own types: a DECIMAL sum would widen) and without
    groups no row reaches; a global aggregate's one row is always kept."""
    keys = [f"{GROUP}{i}" for i in range(groups)]
    totals = [F.sum(f.name).cast(f.dataType).alias(f.name) for f in schema.fields if f.name not in keys]
    if not keys:
        return sums.agg(*totals)
    return sums.groupBy(*keys).agg(*totals).where(F.col(ROWS) != 0)


def _rows(rows: DataFrame) -> list[tuple]:
    """The rows of ``rows`` on the driver, as the sink's result files give them back (``table_rows``)."""
    return table_rows(rows.toArrow())
