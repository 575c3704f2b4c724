"""The user-view suite (``examples/user_views/``): dashboard views a data engineer writes for an
online shop and a SaaS clickstream, maintained over seeded change streams and compared after every
batch with recomputation. No view may be wrong or crash; a refusal is allowed, but must be one line.

The fast tests compare with DuckDB (the views whose results DuckDB cannot reproduce as Spark does
are left out: ``DUCKDB_DIFFERS``); the slow ones with ``spark.sql`` itself, and check that table.
A view the engine gets wrong or crashes on today is listed in ``KNOWN_BUGS`` with the bug: its
test is an expected failure (strict: once the bug is fixed, remove the line).
"""

from __future__ import annotations

import pyarrow.compute as pc
import pytest

from planner.workloads.user_view_streams import write_streams
from planner.workloads.user_view_suite import (
    ReferenceTables,
    batch_ends,
    duckdb_disagreements,
    open_reference,
    run_schema,
)
from planner.workloads.user_views import SCHEMAS, load_views, schema_ddl, table_shapes

KNOWN_BUGS: dict[str, str] = {}

#: views DuckDB computes differently from spark.sql (or cannot run), checked by the slow test
DUCKDB_DIFFERS = {
    "shop/revenue_rollup_country_category": "ROLLUP over no rows: DuckDB gives the grand total's row, Spark no row",
    "saas/accounts_rollup_industry_country": "ROLLUP over no rows: DuckDB gives the grand total's row, Spark no row",
    "shop/median_order_value_by_channel": "median of DECIMAL: Spark interpolates as DOUBLE, DuckDB keeps a DECIMAL",
    "saas/session_median_by_device": "percentile: Spark interpolates, sqlglot writes DuckDB's quantile_disc",
    "shop/orders_by_weekday": "dayofweek: Spark counts Sunday as 1, DuckDB as 0",
    "shop/signup_cohort_retention": "date_trunc of a DATE: Spark gives a TIMESTAMP (an instant), DuckDB a naive one",
    "saas/billed_by_month": "date_trunc of a DATE: Spark gives a TIMESTAMP (an instant), DuckDB a naive one",
    "saas/ticket_resolution_hours": "DuckDB has no unix_timestamp of a TIMESTAMP WITH TIME ZONE",
}

VIEWS = [f"{view.schema}/{view.name}" for schema in SCHEMAS for view in load_views(schema)]


@pytest.fixture(scope="module")
def streams(tmp_path_factory):
    directory = tmp_path_factory.mktemp("user-view-streams")
    write_streams(directory)
    return directory


def _outcomes(streams, reference: str, spark=None) -> dict:
    return {f"{o.view.schema}/{o.view.name}": o
            for schema in SCHEMAS for o in run_schema(schema, streams / schema, reference, spark)}


@pytest.fixture(scope="module")
def duckdb_outcomes(streams):
    return _outcomes(streams, "duckdb")


def _params(skipped: dict[str, str]) -> list:
    params = []
    for name in VIEWS:
        marks = [pytest.mark.xfail(strict=True, reason=KNOWN_BUGS[name])] if name in KNOWN_BUGS else []
        if name in skipped:
            marks.append(pytest.mark.skip(reason=skipped[name]))
        params.append(pytest.param(name, marks=marks, id=name))
    return params


def _check(outcome) -> None:
    """No view wrong or crashing; a refusal one line; a result that was compared was not always empty,
    and the stream leaves every view's final result non-empty (else a fix could not be checked)."""
    assert outcome.kind not in ("wrong", "crash", "no reference"), f"{outcome.kind}: {outcome.detail}"
    if outcome.kind == "refused":
        assert outcome.detail and "\n" not in outcome.detail, f"a refusal must be one line: {outcome.detail!r}"
    else:
        assert outcome.informative > 0, "the result was empty after every batch: the comparison proves nothing"
    assert not outcome.reference_error and outcome.final_rows, (
        f"the reference's final result: {outcome.reference_error or 'empty'}")


@pytest.mark.parametrize("name", _params(DUCKDB_DIFFERS))
def test_user_view_against_duckdb(duckdb_outcomes, name):
    _check(duckdb_outcomes[name])


def test_the_streams_carry_what_breaks_maintenance(streams):
    """Dangling foreign keys, NULLs, duplicate rows in the keyless log, and groups that empty and
    refill between batches: what the suite's streams are for (a stream without them proves less)."""
    tables = ReferenceTables(streams / "shop", table_shapes(schema_ddl("shop")))
    ends = batch_ends(tables.seqs(), 8)
    with open_reference("duckdb", tables) as shop:
        vouchers, dangling = [], []
        for end in ends:
            shop.as_of(end)
            vouchers.append(shop.connection.execute(
                "SELECT count(*) FROM payments WHERE method = 'voucher'").fetchone()[0])
            dangling.append(shop.connection.execute(
                "SELECT count(*) FROM order_items i ANTI JOIN orders o ON o.order_id = i.order_id").fetchone()[0])
        nulls = shop.connection.execute("SELECT count(*) - count(coupon_code) FROM orders").fetchone()[0]
    emptied = next(i for i, n in enumerate(vouchers) if i > 0 and n == 0 and vouchers[i - 1] > 0)
    assert any(n > 0 for n in vouchers[emptied:]), f"the voucher payments never refill: {vouchers}"
    assert any(dangling) and nulls > 0
    events = ReferenceTables(streams / "saas", table_shapes(schema_ddl("saas"))).stream.tables["events"]
    inserted = events.filter(pc.equal(events["_op"], 1)).drop_columns(["_seq", "_op"])
    assert inserted.num_rows > inserted.group_by(inserted.column_names).aggregate([]).num_rows  # duplicates
    assert pc.sum(pc.equal(events["_op"], -1)).as_py() > 0


# ---------------------------------------------------------------------------------------------
# Against spark.sql (about ten minutes each on two busy cores)


@pytest.fixture(scope="module")
def spark():
    from operators.runtime.spark_session import make_spark_session

    return make_spark_session(app="spark-ivm-tests")


@pytest.fixture(scope="module")
def spark_outcomes(streams, spark):
    return _outcomes(streams, "spark", spark)


@pytest.mark.slow
@pytest.mark.spark
@pytest.mark.parametrize("name", _params({}))
def test_user_view_against_spark(spark_outcomes, name):
    _check(spark_outcomes[name])


@pytest.mark.slow
@pytest.mark.spark
def test_duckdb_differs_from_spark_on_the_listed_views_only(streams, spark):
    found = {f"{schema}/{name}": difference for schema in SCHEMAS
             for name, difference in duckdb_disagreements(schema, streams / schema, spark).items()}
    assert set(found) == set(DUCKDB_DIFFERS), found
