"""Declared functional dependencies, ``ivm.insert_only`` and ``ivm.static`` on the Spark runner
(operators/runtime/spark_dependencies.py, spark_validation.py, spark_runner.py): the Retailer-like
workload (declaring locn → zip) and the Σ-reduct view tree over a declared, checked locn → zip equal
DuckDB after every batch of inserts and deletes; scripted batches
that break a declaration are judged as the local engine judges them (the same error, state unchanged,
the next batch right; under quarantine the same rejects and result)."""

from __future__ import annotations

from pathlib import Path

import pytest

from catalog.ddl import catalog_from_ddl
from operators.runtime.stream import Update
from operators.runtime.validate import InvalidChangeError
from planner.ir.view_tree_plan import ViewTreeAggregate
from planner.view import MaintainedView
from planner.workloads.retailer import retailer_catalog, retailer_tables
from planner.workloads.view_tree_input import churn_stream
from tests.maintenance.checking import check_against_recomputation
from tests.maintenance.test_declared_constraints import FD_QUERY, FLAGS_DDL, _batch
from tests.maintenance.test_view_tree_queries import DDL, QUERIES, stream

pytestmark = pytest.mark.spark

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "fivm"


@pytest.fixture(scope="module")
def spark():
    from operators.runtime.spark_session import make_spark_session

    return make_spark_session(app="spark-ivm-tests")


def test_retailer_units_by_zip_on_spark_equals_recomputation(spark, tmp_path):
    """The tables the query reads are loaded (dimensions first), then churned by deletes and re-inserts."""
    catalog = retailer_catalog()
    tables = retailer_tables(scale=1, seed=2, dates=2, stocked=3)
    read = ("census", "location", "weather", "inventory")
    load = [Update(seq, name, 1, row) for seq, (name, row) in
            enumerate(((name, row) for name in read for row in tables[name]), start=1)]
    churn = churn_stream({name: tables[name] for name in read}, catalog, 40, seed=7, first_seq=len(load) + 1)
    assert sum(u.op == -1 for u in churn) > 10
    view = check_against_recomputation((EXAMPLES / "retailer_units_by_zip.sql").read_text(), catalog,
                                       [*load, *churn], batch_size=45, engine="spark", spark=spark,
                                       work_dir=str(tmp_path), informative_at_least=1.0)
    # location declares locn → zip (the Spark runner refused it before); its primary key implies it,
    # so it gets no dependency stage, and through SQL the join runs as a foreign-key tree
    assert catalog.table("location").functional_dependencies and view.result()


def test_fd_reduct_view_tree_on_spark_equals_recomputation(spark, tmp_path):
    """The Σ-reduct view tree that is right only while the declared (not key-implied) locn → zip holds:
    the dependency stage checks every batch of a random insert/delete stream that keeps it."""
    sql, tables = QUERIES["q-hierarchical only with the FD locn → zip"]
    view = check_against_recomputation(sql, catalog_from_ddl(DDL), stream(tables, seed=4, updates=160), batch_size=40,
                                       engine="spark", spark=spark, work_dir=str(tmp_path), informative_at_least=1.0)
    assert any(isinstance(n, ViewTreeAggregate) for n in view.compiled.plan.walk()), "the Σ-reduct view tree"
    assert view.result()


def _twins(sql: str, ddl: str, spark, work_dir: Path, on_invalid: str = "error"):
    catalog = catalog_from_ddl(ddl)
    return (MaintainedView(sql, catalog, on_invalid=on_invalid),
            MaintainedView(sql, catalog, on_invalid=on_invalid, engine="spark", spark=spark, work_dir=str(work_dir)))


def _same_verdict(local: MaintainedView, on_spark: MaintainedView, batch) -> str | None:
    """Apply ``batch`` to both; both must refuse it with the same error, or both give the same result
    and rejects. Returns the error, if any."""
    try:
        local.apply(batch)
    except InvalidChangeError as refused:
        with pytest.raises(Exception) as spark_refused:
            on_spark.apply(batch)
        assert str(refused) in str(spark_refused.value)
        return str(refused)
    on_spark.apply(batch)
    assert sorted(on_spark.result()) == sorted(local.result())
    assert [(r.update, r.reason) for r in on_spark.rejected] == [(r.update, r.reason) for r in local.rejected]
    return None


def test_fd_violations_on_spark_are_refused_and_leave_state_unchanged(spark, tmp_path):
    local, on_spark = _twins(FD_QUERY, DDL, spark, tmp_path)
    with local, on_spark:
        assert _same_verdict(local, on_spark, _batch(("location", 1, (1, 10)), ("location", 1, (2, 10)),
                                                     ("census", 1, (10, 150)), ("inventory", 1, (1, 7, 3)),
                                                     ("inventory", 1, (2, 7, 4)))) is None
        before = on_spark.result()
        assert before
        refused = _same_verdict(local, on_spark, _batch(("census", 1, (20, 1)), ("location", 1, (1, 20))))
        assert refused and "locn → zip" in refused and "(10) and (20)" in refused
        assert on_spark.result() == before
        # replacing locn 1's zip within one batch keeps the FD; then the old zip breaks it
        assert _same_verdict(local, on_spark, _batch(("location", -1, (1, 10)), ("location", 1, (1, 20)),
                                                     ("census", 1, (20, 500)))) is None
        assert on_spark.result() != before
        assert "(20) and (10)" in _same_verdict(local, on_spark, _batch(("location", 1, (1, 10))))


def test_fd_quarantine_on_spark_rejects_what_the_local_engine_rejects(spark, tmp_path):
    local, on_spark = _twins(FD_QUERY, DDL, spark, tmp_path, on_invalid="quarantine")
    with local, on_spark:
        batches = [
            _batch(("location", 1, (1, 10)), ("location", 1, (2, 10)), ("census", 1, (10, 150)),
                   ("census", 1, (20, 9)), ("inventory", 1, (1, 7, 3)), ("inventory", 1, (2, 7, 4))),
            _batch(("location", 1, (1, 20)), ("location", 1, (5, 10)), ("inventory", 1, (5, 1, 9))),
            # the quarantined row deleted: refused as absent, as locally; locn 2 moves to zip 20
            _batch(("location", -1, (1, 20)), ("location", -1, (2, 10)), ("location", 1, (2, 20))),
        ]
        for batch in batches:
            assert _same_verdict(local, on_spark, batch) is None
        assert [r.update.row for r in on_spark.rejected] == [(1, 20), (1, 20)]
        assert "locn → zip" in on_spark.rejected[0].reason and "absent" in on_spark.rejected[1].reason
        assert (2, 4, 9, 1) in on_spark.result(), "locn 2 moved to zip 20 (population 9)"


def test_insert_only_and_static_tables_on_spark(spark, tmp_path):
    local, on_spark = _twins("SELECT d.v, SUM(f.x) AS sx FROM dim d, facts f WHERE d.k = f.k GROUP BY d.v",
                             FLAGS_DDL, spark, tmp_path)
    with local, on_spark:
        assert _same_verdict(local, on_spark, _batch(("dim", 1, (1, 100)), ("facts", 1, (1, 5)))) is None
        assert on_spark.result() == [(100, 5)]
        assert "table dim is static" in _same_verdict(local, on_spark, _batch(("facts", 1, (1, 1)), ("dim", 1, (2, 200))))
        assert "insert-only" in _same_verdict(local, on_spark, _batch(("facts", -1, (1, 5))))
        assert _same_verdict(local, on_spark, _batch(("facts", 1, (1, 1)))) is None
        assert on_spark.result() == [(100, 6)]
