"""Incremental views in Spark Declarative Pipelines: what a pipeline definition file calls.

    from pathlib import Path
    from planner.pipelines import incremental_view

    incremental_view(spark, "q3", Path("q03.sql").read_text(), catalog="tpch", changes_dir="/data/changes")

SDP (``pyspark.pipelines``, ``spark-pipelines run``) recomputes a materialized view in full on every
run. This declares instead, from SQL text over change sources, one stateful streaming flow that
applies only the changes that arrived since the last run (its checkpoint, with every stage's
state, lives under the pipeline's ``storage``), and three names in the pipeline:

- ``<name>_changes``: a streaming table, the view's **change feed** (its columns and ``_weight``);
- ``<name>_result``: a sink (``spark_pipeline_outputs.ResultTableSink``) fed by the flow
  ``<name>_apply`` from that change feed, which applies each micro-batch's ± to the result once;
- ``<name>``: the **result table**, a Parquet table over the sink's published result, registered in
  the session's catalog (a persistent one: ``ivm pipelines run`` uses Hive's, under ``storage``).

Why it is built the way it is (the caveats of SDP in pyspark 4.3, absorbed here):

- The stateful DataFrame is built when the definition file runs (module level), not inside a query
  function: ``groupBy().transformWithState()`` asks the server for the columns, which SDP refuses
  inside a query function (``ATTEMPT_ANALYSIS_IN_PIPELINE_QUERY_FUNCTION``). The query function
  returns the DataFrame already built.
- For the same reason its changes cannot come from another table of the pipeline (the first run
  does not find it; later runs would read it stale): they come from outside, a directory of change
  files in the stream format (``changes_dir``: ``<table>/`` directories receiving new Parquet
  files) or any streaming DataFrame given in ``sources``.
- Spark settings cannot be set in a definition file (``SESSION_MUTATION_IN_DECLARATIVE_PIPELINE``):
  the RocksDB state store and the state partitions are the flow's own ``spark_conf``.

EXPLAIN: ``incremental_view(...)`` returns the view, whose ``explain()`` is the maintenance plan.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

import attrs
from pyspark import pipelines as dp
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructType

from catalog.load import load_catalog
from catalog.schema import Catalog, Table
from catalog.types import NULL
from operators.runtime.spark_changes import change_schema, normalized_changes
from operators.runtime.spark_edges import DEFAULT_BUCKETS, DEFAULT_CHUNKS
from operators.runtime.spark_pipeline_outputs import (
    FORMAT,
    ChangeFeedRows,
    ResultTableSink,
    feed_schema,
    publish,
    result_options,
    result_sink,
)
from operators.runtime.spark_runner import result_stream, spark_tables
from operators.runtime.spark_session import ROCKSDB_PROVIDER, SHUFFLE_PARTITIONS, default_parallelism
from operators.runtime.spark_start import result_start, start_changes, start_stream
from planner.compiler import CompiledQuery, compile_query
from planner.explain import explain_text
from planner.sql.scope import output_types

#: Set by ``ivm pipelines run`` for the definition files it loads: the run's storage (absolute).
STORAGE_ENV = "IVM_PIPELINE_STORAGE"
#: Under the pipeline's storage: one directory per incremental view (start rows, result versions, table).
VIEWS_DIR = "ivm"
#: The views the definition files of this process declared, in order (``ivm pipelines run`` registers their tables).
DECLARED: list[PipelineView] = []


class PipelineViewError(ValueError):
    """An incremental view a pipeline cannot hold as declared; the message names what to change."""


@attrs.frozen
class PipelineView:
    """An incremental view declared in a pipeline: its plan and where its outputs live."""

    name: str
    compiled: CompiledQuery
    directory: Path
    #: the result's columns in Spark DDL (``a int, b decimal(15,2)``)
    columns: str

    def table_statement(self) -> str:
        """The statement registering the result table in a catalog (``CREATE TABLE ... LOCATION``): SDP
        refuses it in a definition file, so ``ivm pipelines run`` runs it once the graph is registered."""
        return f"CREATE TABLE IF NOT EXISTS `{self.name}` ({self.columns}) USING parquet LOCATION '{self.table_dir}'"

    @property
    def changes_table(self) -> str:
        return f"{self.name}_changes"

    @property
    def sink(self) -> str:
        return f"{self.name}_result"

    @property
    def table_dir(self) -> Path:
        """The result table's location: one Parquet file, the newest result."""
        return self.directory / "table"

    def explain(self) -> str:
        """The maintenance plan: strategy, stages, and why stronger strategies did not apply."""
        return explain_text(self.compiled)


def incremental_view(spark: SparkSession, name: str, query: str, *, catalog: Catalog | str = "tpch",
                     changes_dir: str | Path | None = None, sources: Mapping[str, DataFrame] | None = None,
                     storage: str | Path | None = None, **planner_options) -> PipelineView:
    """Declare the incremental view ``name`` of ``query`` (SQL text) in the pipeline being defined.

    ``catalog``: a ``Catalog``, ``"tpch"`` (the built-in TPC-H catalog) or a DDL file with keys.
    Each table's changes come from ``sources[table]`` (a streaming DataFrame: the table's columns,
    ``_op``, optional ``_seq``) or else from ``changes_dir/<table>/``, a directory receiving Parquet
    files of the stream format in the catalog's column types; a run reads the files that arrived
    since the last one. ``storage`` defaults to the pipeline's (see ``pipeline_storage``).
    """
    if not name.isidentifier():
        raise PipelineViewError(f"an incremental view's name is a table name (letters, digits, _): {name!r}")
    catalog = load_catalog(catalog) if isinstance(catalog, str) else catalog
    compiled = compile_query(query, catalog, **planner_options)
    dataflow = compiled.dataflow
    tables = spark_tables(dataflow, catalog)
    width = dataflow.visible_width
    names = dataflow.output_columns[:width]
    dtypes = output_types(compiled.logical, catalog)[:width]
    untyped = [column for column, dtype in zip(names, dtypes, strict=True) if dtype in (None, NULL)]
    if untyped:
        raise PipelineViewError(f"view {name}: give column(s) {', '.join(untyped)} a type (CAST(NULL AS ...)): "
                                "a pipeline table needs one")
    schema = feed_schema(names, dtypes)
    root = (Path(storage) if storage else pipeline_storage()).resolve()
    view = PipelineView(name, compiled, root / VIEWS_DIR / name, schema.rsplit(", ", 1)[0])  # (without _weight)
    changes = _changes(spark, tables, sources or {}, changes_dir)
    start = start_changes(dataflow, DEFAULT_BUCKETS)
    start_rows = start_stream(spark, view.directory / "start", start) if start else None
    packed = result_stream(dataflow, tables, changes, "error", DEFAULT_BUCKETS, DEFAULT_CHUNKS,
                           start_rows, {row["stage"] for row in start})
    feed = packed.mapInArrow(ChangeFeedRows(names, dtypes), schema)
    _same_view(view.directory / "output" / "view.json", {"query": query, "planner_options": planner_options,
                                                          "tables": {n: str(t) for n, t in tables.items()}})
    options = result_options(view.directory / "output", view.table_dir, names, dtypes)
    # the result over empty tables, before any batch: the sink's first version and the table's file
    sink = result_sink(options, [row[:width] for row in result_start(dataflow)])
    if not (view.table_dir / "part-00000.parquet").exists():
        publish(sink, view.table_dir)
    _declare(spark, view, feed, schema, options)
    return view


def _declare(spark: SparkSession, view: PipelineView, feed: DataFrame, schema: str, options: dict[str, str]) -> None:
    """The pipeline's elements of ``view`` and its result table in the catalog."""
    settings = {"spark.sql.streaming.stateStore.providerClass": ROCKSDB_PROVIDER,
                # one state partition per core, not Spark's 200 (recorded in the checkpoint at its first batch)
                SHUFFLE_PARTITIONS: str(default_parallelism(spark))}

    def maintain() -> DataFrame:
        return feed  # built above, at definition time (see the module docstring)

    dp.table(name=view.changes_table, comment=f"change feed of the incremental view {view.name}",
             spark_conf=settings, schema=schema)(maintain)
    spark.dataSource.register(ResultTableSink)
    dp.create_sink(view.sink, format=FORMAT, options=options)

    def apply() -> DataFrame:
        return spark.readStream.table(view.changes_table)

    dp.append_flow(target=view.sink, name=f"{view.name}_apply")(apply)
    DECLARED.append(view)


def _same_view(record: Path, declared: dict) -> None:
    """Refuse a view whose SQL, options or tables changed since its state was built: its checkpoint
    holds the old plan's state, which the new plan would misread. A full refresh starts afresh."""
    text = json.dumps(declared, sort_keys=True, default=str)
    if record.exists() and record.read_text() != text:
        name = record.parent.parent.name
        raise PipelineViewError(f"incremental view {name} was declared otherwise (its SQL, options or tables) when its "
                                f"state was built; rebuild it with `ivm pipelines run --full-refresh {name}`")
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_text(text)


def _changes(spark: SparkSession, tables: Mapping[str, Table], sources: Mapping[str, DataFrame],
             changes_dir: str | Path | None) -> dict[str, DataFrame]:
    unknown = sorted(set(sources) - set(tables))
    if unknown:
        raise PipelineViewError(f"sources for table(s) the view does not read: {', '.join(unknown)}")
    changes = {}
    for name, table in tables.items():
        if name in sources:
            changes[name] = normalized_changes(sources[name], table)
        elif changes_dir is not None:
            changes[name] = landed_changes(spark, Path(changes_dir), table)
        else:
            raise PipelineViewError(f"no changes for table {name}: give changes_dir= or sources={{'{name}': ...}}")
    return changes


def landed_changes(spark: SparkSession, changes_dir: Path, table: Table) -> DataFrame:
    """The change files arriving in ``changes_dir/<table>/`` as a streaming DataFrame (Spark's file
    source: each run reads the files its checkpoint has not seen). Names starting with ``_`` or ``.``
    are not read. The directory is made if missing, so a table without changes yet is read as empty."""
    directory = changes_dir.resolve() / table.name
    directory.mkdir(parents=True, exist_ok=True)
    return spark.readStream.schema(StructType.fromDDL(change_schema(table))).parquet(str(directory))


def pipeline_storage() -> Path:
    """The storage of the pipeline being defined: what ``ivm pipelines run`` runs it with, else the
    ``storage`` of the pipeline spec found from the working directory (SDP loads definition files
    from the spec's directory), relative to that directory."""
    if os.environ.get(STORAGE_ENV):
        return Path(os.environ[STORAGE_ENV])
    from pyspark.pipelines.cli import find_pipeline_spec, load_pipeline_spec

    spec = find_pipeline_spec(Path.cwd())
    return storage_path(load_pipeline_spec(spec).storage, spec.parent)


def storage_path(storage: str, base: Path) -> Path:
    """A spec's ``storage`` (a path or a ``file:`` URI) as an absolute local path, relative to ``base``."""
    if storage.startswith("file:"):
        storage = storage.removeprefix("file:").lstrip("/")
        return Path("/" + storage)
    return (base / storage).resolve()
