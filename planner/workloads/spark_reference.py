"""Spark itself as the reference: recompute a query with ``spark.sql`` (a batch query) over the
tables as the stream defines them, the answer a maintained view must equal row for row.

After every batch each base table is the stream's rows with ``_seq <= s`` counted by ``sum(_op)``
(``oracle.state_sql``); that multiset sum is done by DuckDB from the stream (never from the
engine's state) and handed to Spark as Arrow, DECIMAL columns as DECIMAL, one temporary view per
table, because deriving the eight TPC-H tables in Spark cost about 15 s per batch on 2 busy cores
against well under a second here. The query itself, the part whose semantics is checked, is
``spark.sql(query)`` with Spark 4's defaults (ANSI mode), which is what the engine follows. The
session is the caller's and is never stopped; the temporary views are dropped on ``close`` so later
users of the session see its own tables again.
"""

from __future__ import annotations

import datetime

from catalog.schema import Catalog, Table
from catalog.types import TIMESTAMPS
from planner.sql.calls import DIALECT
from planner.workloads.oracle import DuckDBOracle, OrderedQuery, Reference, StreamTables


def _schema(table: Table) -> str | None:
    """The table's Spark schema where Arrow's would be read otherwise: pyspark reads a naive Arrow
    timestamp as a TIMESTAMP in the session time zone, not as the TIMESTAMP_NTZ it is."""
    if not any(c.type in TIMESTAMPS for c in table.columns):
        return None
    return ", ".join(f"`{c.name}` {c.type}" for c in table.columns)


def _aware(row: tuple, instants: list[int]) -> tuple:
    if not instants:
        return row
    values = list(row)
    for i in instants:
        if values[i] is not None:
            values[i] = values[i].astimezone(datetime.UTC)
    return tuple(values)


class SparkReference:
    def __init__(self, spark, catalog: Catalog, stream: StreamTables):
        self.spark = spark
        self.catalog = catalog
        self.state = DuckDBOracle(catalog)
        self.state.load_stream(stream)
        self.seq: int | None = None
        self.shown: dict[str, int | None] = {}  # table → the seq its temporary view holds

    def as_of(self, seq: int) -> None:
        """From now on the tables are as the stream defines them after the update numbered ``seq``."""
        self.state.as_of(seq)
        self.seq = seq

    def reference(self, sql: str) -> Reference:
        """``spark.sql`` of the query (LIMIT lifted, hidden ORDER BY keys added) in Spark's order.

        Only the tables the query reads are handed to Spark (each costs a DataFrame and a job)."""
        query = OrderedQuery.parse(sql)
        for name in sorted(query.tables() & set(self.catalog.tables)):
            if self.shown.get(name) != self.seq:
                self.spark.createDataFrame(self.state.table(name), _schema(self.catalog.table(name))).createOrReplaceTempView(name)
                self.shown[name] = self.seq
        frame = self.spark.sql(query.sql(DIALECT))  # DIALECT writes WITHIN GROUP back as such
        # pyspark hands a TIMESTAMP back as a naive datetime in this process's local time: the instant,
        # made aware (UTC), is what the engine holds
        instants = [i for i, f in enumerate(frame.schema.fields) if f.dataType.typeName() == "timestamp"]
        return query.reference(_aware(tuple(row), instants) for row in frame.collect())

    def close(self) -> None:
        for view in sorted(self.shown):
            self.spark.catalog.dropTempView(view)
        self.shown.clear()
        self.state.close()

    def __enter__(self) -> SparkReference:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
