"""Drive a maintained view batch by batch and compare it with recomputation after every batch.

The reference (DuckDB, or Spark itself with ``check_against_spark``) reads the base tables from the
stream, never from the engine, and keeps its ORDER BY (``planner/workloads/oracle.py``). A check
that only ever compared empty results could not fail, so a test states the fraction of compared
batches whose reference result must hold a non-NULL value (``informative_at_least``).
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from collections.abc import Iterable, Sequence

from catalog.schema import Catalog
from operators.runtime.stream import Update, batches
from planner.view import MaintainedView
from planner.workloads.oracle import DuckDBOracle, StreamTables, assert_matches_reference
from planner.workloads.spark_reference import SparkReference

_STREAMS: OrderedDict[tuple[int, int], tuple[Sequence[Update], Catalog, StreamTables]] = OrderedDict()
_STREAMS_KEPT = 8


def stream_tables(catalog: Catalog, updates: Sequence[Update]) -> StreamTables:
    """``updates`` as the reference's stream tables, converted once per stream object: the session's
    TPC-H streams are compared many times, and converting one costs about a second."""
    key = (id(updates), id(catalog))
    if key not in _STREAMS:
        # the entry keeps ``updates`` and ``catalog`` alive, so their ids cannot be reused meanwhile
        _STREAMS[key] = (updates, catalog, StreamTables.from_updates(catalog, updates))
        while len(_STREAMS) > _STREAMS_KEPT:
            _STREAMS.popitem(last=False)
    _STREAMS.move_to_end(key)
    return _STREAMS[key][2]


def check_against_recomputation(sql: str, catalog: Catalog, updates: Sequence[Update], batch_size: int,
                                engine: str = "local", *, informative_at_least: float = 0.0,
                                oracle_sql: str | None = None, **view_options) -> MaintainedView:
    """Apply ``updates`` in batches; after each, the view must equal DuckDB over the stream so far.

    ``oracle_sql`` is what DuckDB runs instead of ``sql`` where the two dialects differ (e.g. the
    column order of ``SELECT *`` over ``JOIN ... USING``: Spark's, spelled out for DuckDB).
    """
    with DuckDBOracle(catalog, view_options.get("time_zone") or "UTC") as oracle, MaintainedView(sql, catalog, engine=engine, strict=True,
                                                         **view_options) as view:
        oracle.load_stream(stream_tables(catalog, updates))
        compare_every_batch(view, oracle, oracle_sql or sql, updates, batch_size, informative_at_least,
                            f"{engine} runner vs DuckDB")
    return view


def check_against_spark(sql: str, catalog: Catalog, updates: Sequence[Update], batch_size: int, spark,
                        work_dir: str, engine: str = "local", *, informative_at_least: float = 0.0,
                        **view_options) -> MaintainedView:
    """Apply ``updates`` in batches; after each, the view must equal ``spark.sql(sql)`` (a batch
    query) over the stream so far (``planner/workloads/spark_reference.py``). ``work_dir`` is the
    Spark runner's, when ``engine`` is ``"spark"``."""
    runner_options = {"spark": spark, "work_dir": work_dir} if engine == "spark" else {}
    with SparkReference(spark, catalog, stream_tables(catalog, updates)) as reference, \
            MaintainedView(sql, catalog, engine=engine, strict=True, **runner_options, **view_options) as view:
        compare_every_batch(view, reference, sql, updates, batch_size, informative_at_least,
                            f"{engine} runner vs spark.sql")
    return view


def compare_every_batch(view: MaintainedView, reference, sql: str, updates: Sequence[Update], batch_size: int,
                        informative_at_least: float, name: str) -> float:
    """Compare before the first batch (the query over empty tables: a global aggregate's one row), then
    apply the batches, compare after each, and return the fraction of batches whose reference
    result was informative (``Reference.is_informative``), asserted to be at least ``informative_at_least``."""
    if updates:
        reference.as_of(updates[0].seq - 1)
        assert_matches_reference(view.result(), reference.reference(sql), f"{name}, before any batch")
    compared = informative = 0
    for number, batch in enumerate(batches(updates, batch_size)):
        view.apply(batch)
        reference.as_of(batch[-1].seq)
        expected = reference.reference(sql)
        assert_matches_reference(view.result(), expected, f"{name}, after batch {number} (_seq <= {batch[-1].seq})")
        compared += 1
        informative += expected.is_informative()
    fraction = informative / compared if compared else 0.0
    assert fraction >= informative_at_least, (
        f"{name}: only {informative} of {compared} compared batches had a result with a non-NULL value "
        f"(the test asks for {informative_at_least:.0%}): comparing empty results cannot fail")
    return fraction


def count_equal_changes(reference: MaintainedView, candidate: MaintainedView, batch_pairs: Iterable[tuple]) -> int:
    """Apply each pair's first batch to ``reference`` and its second to ``candidate``, assert both
    views make the same result changes every time and end with the same result; return how many
    batches changed the result (a comparison proves nothing when none does)."""
    informative = 0
    for number, (for_reference, for_candidate) in enumerate(batch_pairs):
        expected = Counter(dict(reference.apply(for_reference)))
        assert Counter(dict(candidate.apply(for_candidate))) == expected, f"the result's changes differ at batch {number}"
        informative += bool(expected)
    assert candidate.result() == reference.result()
    return informative
