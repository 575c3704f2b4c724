"""UNION [ALL], EXCEPT and INTERSECT of two maintained queries equal recomputation after every batch."""

from __future__ import annotations

from decimal import Decimal

import pytest

from catalog.tpch import tpch_catalog
from planner.view import MaintainedView
from tests.maintenance.checking import check_against_recomputation

LEFT = "select c_nationkey as k, c_mktsegment as s from customer where c_acctbal > 3000"
RIGHT = "select s_nationkey as k, 'BUILDING' as s from supplier where s_acctbal > 3000"


@pytest.mark.parametrize("kind", ["union", "union all", "except", "intersect"])
@pytest.mark.parametrize("stream", ["window", "random"])
def test_set_operation_equals_recomputation(tpch_streams, kind, stream):
    check_against_recomputation(f"{LEFT} {kind} {RIGHT}", tpch_catalog(), tpch_streams[stream], batch_size=30_000)


def test_a_union_of_an_int_and_a_decimal_column_is_a_decimal_column_as_in_spark(tmp_path):
    """Spark types each column of a set operation as both sides' common type: int ∪ decimal(5,2) is
    decimal(12,2); the result written by ``ivm run --out`` holds both sides' values in that type."""
    import pyarrow.parquet as pq

    from catalog.ddl import catalog_from_ddl
    from operators.runtime.stream import Update, write_stream
    from planner.cli import main

    ddl = tmp_path / "ddl.sql"
    ddl.write_text("CREATE TABLE t (k INT, a INT, PRIMARY KEY (k)); CREATE TABLE u (k INT, b DECIMAL(5,2), PRIMARY KEY (k));")
    catalog = catalog_from_ddl(ddl.read_text())
    sql = "select a as x from t union select b as x from u"
    view = MaintainedView(sql, catalog)
    assert [str(t) for t in view.column_types] == ["decimal(12,2)"]
    write_stream(tmp_path / "stream", catalog, [Update(1, "t", 1, (1, 3)), Update(2, "u", 1, (1, Decimal("1.25"))),
                                                Update(3, "u", 1, (2, Decimal("3.00")))])
    assert main(["run", "--query", sql, "--catalog", str(ddl), "--stream", str(tmp_path / "stream"),
                 "--out", str(tmp_path / "out.parquet")]) == 0
    written = pq.read_table(tmp_path / "out.parquet")
    assert str(written.schema.field("x").type) == "decimal128(12, 2)"
    assert sorted(written.column("x").to_pylist()) == [Decimal("1.25"), Decimal("3.00")]
