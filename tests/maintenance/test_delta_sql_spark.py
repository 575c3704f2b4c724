"""The Spark runner's JVM delta strategy (``operators/runtime/delta_sql``) equals ``spark.sql`` after
every micro-batch: TPC-H Q3, and a schema of its own (TIMESTAMPs, NULL group keys and arguments, dangling
foreign keys, updates, a self-join, a global aggregate, a join without aggregation, HAVING, a top-k);
invalid input refused or quarantined with every state as it was."""

from __future__ import annotations

from pathlib import Path

import pytest

from catalog.tpch import tpch_catalog
from operators.doubles import NAN
from operators.runtime.run_errors import SparkBatchError
from operators.runtime.stream import Update
from planner.view import MaintainedView
from tests.maintenance.checking import check_against_spark
from tests.maintenance.delta_sql_streams import CATALOG, payment_stream

pytestmark = pytest.mark.spark

TPCH = Path(__file__).parents[2] / "examples" / "tpch"

QUERIES = {
    "grouped, HAVING, NULL keys and arguments": """
        select a.region, count(*) as n, sum(p.amount) as total, count(p.amount) as priced, avg(p.qty) as q
        from account a join payment p on p.account_id = a.id
        where p.fee is null or p.fee < 5 group by a.region having count(*) > 1""",
    "top-k over TIMESTAMP hours": """
        select region, date_trunc('HOUR', p.at) as hour, sum(amount) as s from account join payment p
        on account_id = id group by region, date_trunc('HOUR', p.at) order by s desc nulls last, hour limit 3""",
    "global aggregate": "select count(*) as n, sum(amount) as s, avg(fee) as f from payment where qty > 1",
    "join without aggregation": """
        select a.id, p.pid, p.amount from account a join payment p on p.account_id = a.id where a.region = 'north'""",
    "self-join": """
        select p1.account_id, count(*) as pairs from payment p1 join payment p2
        on p1.account_id = p2.account_id and p1.pid < p2.pid group by p1.account_id""",
}


@pytest.fixture(scope="module")
def spark():
    from operators.runtime.spark_session import make_spark_session

    return make_spark_session(app="spark-ivm-tests")


def _jvm(view: MaintainedView) -> MaintainedView:
    assert view.runner.delta_plan is not None, "the view did not run on the JVM delta strategy"
    return view


@pytest.mark.parametrize("name", [
    "grouped, HAVING, NULL keys and arguments",
    *(pytest.param(name, marks=pytest.mark.slow) for name in QUERIES if name != "grouped, HAVING, NULL keys and arguments"),
])
def test_own_schema_equals_spark_sql_after_every_batch(spark, name, tmp_path):
    _jvm(check_against_spark(QUERIES[name], CATALOG, payment_stream(seed=len(name)), 150, spark, str(tmp_path),
                             engine="spark", spark_strategy="jvm", informative_at_least=0.5))


# slow: the own-schema view above covers the same paths in the default set (CI time)
@pytest.mark.slow
@pytest.mark.parametrize("kind", ["random", "window"])
def test_q3_equals_spark_sql_after_every_batch(spark, tpch_streams, kind, tmp_path):
    _jvm(check_against_spark((TPCH / "q03.sql").read_text(), tpch_catalog(), tpch_streams[kind], 40_000, spark,
                             str(tmp_path), engine="spark", spark_strategy="jvm", informative_at_least=0.5))


def test_invalid_input_is_refused_or_quarantined_leaving_state_as_it_was(spark, tmp_path):
    sql = QUERIES["grouped, HAVING, NULL keys and arguments"].replace("having count(*) > 1", "")
    good = [Update(1, "account", 1, (1, "north", None)), Update(2, "payment", 1, (10, 1, None, None, 1, None)),
            Update(3, "payment", 1, (11, 1, None, None, 2, None))]
    bad = [Update(4, "payment", 1, (10, 1, None, None, 9, None)),  # duplicate key
           Update(5, "payment", -1, (99, 1, None, None, 1, None)),  # delete of an absent row
           Update(6, "payment", -1, (11, 1, None, None, 7, None))]  # delete not matching the stored row
    with MaintainedView(sql, CATALOG, engine="spark", spark=spark, work_dir=str(tmp_path / "error"),
                        spark_strategy="jvm") as view:
        _jvm(view).apply(good)
        before = view.result()
        with pytest.raises(SparkBatchError, match="duplicate primary key"):
            view.apply(bad[:1])
        assert view.result() == before
        view.apply([Update(7, "payment", -1, good[2].row)])  # the state is as it was: 11 is still there
        assert view.result() == [("north", 1, None, 0, 1.0)]
    with MaintainedView(sql, CATALOG, engine="spark", spark=spark, work_dir=str(tmp_path / "quarantine"),
                        on_invalid="quarantine", spark_strategy="jvm") as view:
        view.apply(good)
        output = view.apply([*bad, Update(8, "payment", -1, good[1].row), Update(9, "payment", 1, good[1].row)])
        reasons = sorted(r.reason.split(" ")[0] for r in view.rejected)
        assert reasons == ["delete", "delete", "duplicate"], view.rejected
        assert output == [] and view.result() == [("north", 2, None, 0, 1.5)]
        # a delete matches the row it equals: -0.0 is 0.0, and NaN is NaN (the fingerprint's normal form)
        view.apply([Update(10, "payment", 1, (20, 1, None, -0.0, 1, None)), Update(11, "payment", 1, (21, 1, None, NAN, 1, None))])
        view.apply([Update(12, "payment", -1, (20, 1, None, 0.0, 1, None)), Update(13, "payment", -1, (21, 1, None, NAN, 1, None))])
        assert len(view.rejected) == 3 and view.result() == [("north", 2, None, 0, 1.5)]
