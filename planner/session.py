"""Incremental views inside a Spark session: the embedding API.

    ivm = IncrementalViews(spark)                    # catalog from the session's tables and properties
    ivm.register_changes("lineitem", changes_df)     # or per view: source= / sources=
    v = ivm.create("q3", sql_text_or_dataframe, checkpoint="/data/ivm/q3")
    print(v.explain()); v.start(); v.process_available()
    v.result().show()                                # a DataFrame
    v.changes()                                      # the result's change feed, a streaming DataFrame
    ivm.sql("CREATE INCREMENTAL VIEW q3 AS SELECT ...")   # and EXPLAIN / DROP INCREMENTAL VIEW

Where each table's changes come from, per view: the streaming DataFrame given for it (the table's
columns, ``_op``, optional ``_seq``; a Delta-style change data feed with ``change_data_feed=True``),
or registered for the session. With ``bootstrap=True`` (the default) the rows the session's table
already holds are the view's first batch (``spark_changes.snapshot_changes``), so a view over data
that is already there starts from it and then follows its changes. A table with neither a source
nor a snapshot stays as it is in the view: empty.

A view given as a DataFrame is planned from Catalyst's analyzed plan (``planner/sql/catalyst.py``),
or on a Spark Connect session from the DataFrame's client-side plan (``planner/sql/connect_plan.py``);
a view given as SQL text from our SQL front end. Both are refused, with the reason, where we cannot
maintain them exactly. Each view is one Spark streaming query whose checkpoint, result table and
change feed live in its ``checkpoint`` directory; a view created again on the same directory resumes.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Mapping
from functools import reduce
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import LongType, StructField, StructType

from catalog.schema import Catalog, CatalogError
from catalog.spark import catalog_from_spark
from operators.runtime.spark_changes import from_change_data_feed, normalized_changes, snapshot_changes
from operators.runtime.spark_session import make_spark_session
from planner.compiler import CompiledQuery, compile_query
from planner.explain import explain_text
from planner.ir.timestamps import SPARK_TIME_ZONE
from planner.sql.catalyst import dataframe_sql
from planner.view import MaintainedView

_CREATE = re.compile(r"^\s*CREATE\s+INCREMENTAL\s+VIEW\s+(?P<name>\w+)\s+AS\s+(?P<query>.+?);?\s*$", re.I | re.S)
_EXPLAIN = re.compile(r"^\s*EXPLAIN\s+INCREMENTAL\s+VIEW\s+(?P<name>\w+)\s*;?\s*$", re.I)
_DROP = re.compile(r"^\s*DROP\s+INCREMENTAL\s+VIEW\s+(?P<exists>IF\s+EXISTS\s+)?(?P<name>\w+)\s*;?\s*$", re.I)
_INCREMENTAL = re.compile(r"\bINCREMENTAL\s+VIEW\b", re.I)


class IncrementalViewError(ValueError):
    """A view name or statement the session API cannot use; the message names it."""


class IncrementalView:
    """One maintained view of a session: ``explain``, ``start``, ``process_available``, ``result``,
    ``changes``, ``stop``."""

    def __init__(self, name: str, compiled: CompiledQuery, catalog: Catalog, spark: SparkSession,
                 changes: Mapping[str, DataFrame], checkpoint: Path, on_invalid: str):
        self.name, self.compiled, self.catalog, self.spark = name, compiled, catalog, spark
        self.checkpoint, self.on_invalid = checkpoint, on_invalid
        self._changes = dict(changes)
        self.view: MaintainedView | None = None

    def explain(self) -> str:
        """The maintenance plan: strategy, stages, and why stronger strategies did not apply."""
        return explain_text(self.compiled)

    def start(self) -> IncrementalView:
        """Start the view's streaming query (resuming from ``checkpoint`` if it ran before)."""
        if self.view is None:
            self.view = MaintainedView(self.compiled, self.catalog, engine="spark", on_invalid=self.on_invalid,
                                       spark=self.spark, work_dir=str(self.checkpoint), changes=self._changes,
                                       keep_outputs=False)
        return self

    def process_available(self) -> None:
        """Wait until every change available in the sources is maintained (a failed batch raises)."""
        self._started().runner.run_available()

    def result(self) -> DataFrame:
        """The current result as a DataFrame, in the query's ORDER BY."""
        runner = self._started().runner
        table = self.spark.read.parquet(str(runner.sink.current_result_path()))
        dataflow = self.compiled.dataflow
        names = table.columns
        order = [F.col(f"`{names[p]}`").asc() if ascending else F.col(f"`{names[p]}`").desc()
                 for p, ascending in dataflow.presentation_order]
        ordered = table.orderBy(*order) if order else table
        return ordered.select(*(F.col(f"`{name}`") for name in names[: dataflow.visible_width]))

    def changes(self) -> DataFrame:
        """The result's change feed (its columns, ``_batch``, ``_weight``) as a streaming DataFrame:
        each committed batch's changes exactly once."""
        runner = self._started().runner
        visible = self.compiled.dataflow.visible_width
        # the result table's file has the change feed's columns and Spark types, and always exists
        fields = self.spark.read.parquet(str(runner.sink.current_result_path())).schema.fields[:visible]
        schema = StructType([*fields, StructField("_batch", LongType()), StructField("_weight", LongType())])
        return self.spark.readStream.schema(schema).parquet(str(runner.sink.changes_dir))

    def stop(self) -> None:
        """Stop the streaming query; its checkpoint stays, so the view can be created again and resume."""
        if self.view is not None:
            self.view.close()
            self.view = None

    def _started(self) -> MaintainedView:
        if self.view is None:
            raise IncrementalViewError(f"incremental view {self.name} is not started: call start() first")
        return self.view


class IncrementalViews:
    """The incremental views of one Spark session; see the module docstring."""

    def __init__(self, spark: SparkSession | None = None, database: str | None = None,
                 work_dir: str | Path | None = None, catalog: Catalog | None = None):
        self.spark = spark if spark is not None else make_spark_session()
        self.catalog = catalog if catalog is not None else catalog_from_spark(self.spark, database=database)
        self.work_dir = (Path(work_dir) if work_dir is not None else Path(tempfile.mkdtemp(prefix="ivm-views-"))).resolve()
        self.views: dict[str, IncrementalView] = {}
        self._registered: dict[str, DataFrame] = {}

    def register_changes(self, table: str, changes: DataFrame, change_data_feed: bool = False) -> None:
        """Use ``changes`` (a streaming DataFrame) as ``table``'s changes in the views created from now on."""
        self._registered[table] = self._shaped(table, changes, change_data_feed)

    def create(self, name: str, query: str | DataFrame, source: DataFrame | None = None,
               sources: Mapping[str, DataFrame] | None = None, checkpoint: str | Path | None = None,
               bootstrap: bool = True, change_data_feed: bool = False, on_invalid: str = "error",
               **planner_options) -> IncrementalView:
        """Plan ``query`` (SQL text or a DataFrame) as the incremental view ``name``; see the module
        docstring for where changes come from. ``source`` is the changes of a view over one table."""
        if name in self.views:
            raise IncrementalViewError(f"incremental view {name} already exists: drop it first")
        compiled = self._compile(query, planner_options)
        tables = compiled.dataflow.tables()
        given = dict(sources or {})
        if source is not None:
            if len(tables) != 1:
                raise IncrementalViewError(f"source= is for a view over one table; {name} reads {', '.join(tables)}: "
                                           "pass sources={table: changes}")
            given[tables[0]] = source
        unknown = sorted(set(given) - set(tables))
        if unknown:
            raise IncrementalViewError(f"view {name} does not read table(s) {', '.join(unknown)}")
        # absolute: Spark (the JVM) and this process may not share a working directory
        directory = (Path(checkpoint) if checkpoint is not None else self.work_dir / name).resolve()
        changes = {}
        for table in tables:
            streams = []
            if bootstrap and self._exists(table):
                snapshot = snapshot_changes(self.spark, self.catalog.table(table), table, str(directory / "snapshot" / table))
                streams.append(snapshot)
            if table in given:
                streams.append(self._shaped(table, given[table], change_data_feed))
            elif table in self._registered:
                streams.append(self._registered[table])
            if streams:
                changes[table] = reduce(DataFrame.unionByName, streams)
        view = IncrementalView(name, compiled, self.catalog, self.spark, changes, directory, on_invalid)
        self.views[name] = view
        return view

    def drop(self, name: str, if_exists: bool = False) -> None:
        """Stop the view and delete its checkpoint, result table and change feed."""
        view = self.views.pop(name, None)
        if view is None:
            if if_exists:
                return
            raise IncrementalViewError(f"no incremental view {name}")
        view.stop()
        shutil.rmtree(view.checkpoint, ignore_errors=True)

    def sql(self, statement: str):
        """``CREATE INCREMENTAL VIEW name AS <query>`` (returns the started view), ``EXPLAIN INCREMENTAL
        VIEW name`` (its plan as text), ``DROP INCREMENTAL VIEW [IF EXISTS] name``; any other statement
        goes to ``spark.sql``."""
        if match := _CREATE.match(statement):
            return self.create(match["name"], match["query"]).start()
        if match := _EXPLAIN.match(statement):
            if match["name"] not in self.views:
                raise IncrementalViewError(f"no incremental view {match['name']}")
            return self.views[match["name"]].explain()
        if match := _DROP.match(statement):
            self.drop(match["name"], if_exists=bool(match["exists"]))
            return None
        if _INCREMENTAL.search(statement):
            raise IncrementalViewError("an INCREMENTAL VIEW statement is one of: CREATE INCREMENTAL VIEW name AS "
                                       "SELECT ...; EXPLAIN INCREMENTAL VIEW name; DROP INCREMENTAL VIEW [IF EXISTS] name")
        return self.spark.sql(statement)

    def _compile(self, query: str | DataFrame, planner_options) -> CompiledQuery:
        # a DataFrame's plan (Catalyst's analyzed plan, or a Connect DataFrame's client-side plan) is
        # rendered as the Spark SQL it stands for, node by node (refusing any node it cannot), and
        # planned like SQL text; EXPLAIN then shows that SQL
        text = query if isinstance(query, str) else dataframe_sql(query, self.catalog)
        if planner_options.get("time_zone") is None:  # the session's, as spark.sql reads TIMESTAMPs in
            planner_options = {**planner_options, "time_zone": self.spark.conf.get(SPARK_TIME_ZONE)}
        return compile_query(text, self.catalog, **planner_options)

    def _shaped(self, table: str, changes: DataFrame, change_data_feed: bool) -> DataFrame:
        try:
            schema = self.catalog.table(table)
        except CatalogError as err:
            raise IncrementalViewError(f"changes for an unknown table: {err}") from None
        return normalized_changes(from_change_data_feed(changes) if change_data_feed else changes, schema)

    def _exists(self, table: str) -> bool:
        return self.spark.catalog.tableExists(table)
