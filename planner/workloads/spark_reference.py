"""Spark itself as the reference: recompute a query with ``spark.sql`` (a batch query) over the
tables as the stream defines them, the answer a maintained view must equal row for row.

The stream is written once as Parquet (``StreamTables.write``, DECIMAL columns as decimal128) and
read back as one temporary view ``<table>__stream`` per table; ``as_of(seq)`` redefines each table
as a temporary view of the stream's state after ``_seq`` (the same GROUP BY / ``sum(_op)`` as the
DuckDB reference), so ``spark.sql(query)`` reads the plain table names. Spark 4's defaults apply
(ANSI mode), which is what the engine follows. The session is the caller's and is never stopped
here; the temporary views are dropped on ``close`` so later users of the session see its own tables.
"""

from __future__ import annotations

from pathlib import Path

from catalog.schema import Catalog
from planner.workloads.oracle import OrderedQuery, Reference, StreamTables, state_sql


class SparkReference:
    def __init__(self, spark, catalog: Catalog, stream: StreamTables, work_dir: Path | str):
        self.spark = spark
        self.catalog = catalog
        self.views: list[str] = []
        for name, path in stream.write(work_dir).items():
            spark.read.parquet(str(path)).createOrReplaceTempView(f"{name}__stream")
            self.views.append(f"{name}__stream")

    def as_of(self, seq: int) -> None:
        """Every table as the stream defines it after the update numbered ``seq``."""
        for name, table in self.catalog.tables.items():
            self.spark.sql(state_sql(table, seq, "spark")).createOrReplaceTempView(name)
            if name not in self.views:
                self.views.append(name)

    def reference(self, sql: str) -> Reference:
        """``spark.sql`` of the query (LIMIT lifted, hidden ORDER BY keys added) in Spark's order."""
        query = OrderedQuery.parse(sql)
        return query.reference(tuple(row) for row in self.spark.sql(query.sql("spark")).collect())

    def close(self) -> None:
        for view in self.views:
            self.spark.catalog.dropTempView(view)
        self.views.clear()

    def __enter__(self) -> SparkReference:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
