"""``planner/spark_delta.py``: which views the Spark runner's JVM delta strategy takes, why it refuses
the others, and the delta terms it builds (the delta rule's old/new sides, the join order)."""

from __future__ import annotations

from pathlib import Path

import pytest

from catalog.tpch import tpch_catalog
from planner.compiler import compile_query
from planner.explain import explain_text
from planner.spark_delta import NotDeltaSql, delta_sql_plan, spark_strategy

TPCH = Path(__file__).parents[2] / "examples" / "tpch"
CATALOG = tpch_catalog()


def _plan(sql: str):
    return delta_sql_plan(sql, CATALOG)


def test_q3_terms_follow_the_delta_rule():
    plan = _plan((TPCH / "q03.sql").read_text())
    assert plan.tables == ("customer", "orders", "lineitem")
    reads = [[(plan.occurrences[s.occurrence].table, s.kind) for s in term.steps] for term in plan.terms]
    # term i reads occurrence i as the batch's changes, those before it after the batch, those after it before
    assert reads == [[("customer", "delta"), ("orders", "old"), ("lineitem", "old")],
                     [("orders", "delta"), ("customer", "new"), ("lineitem", "old")],
                     [("lineitem", "delta"), ("orders", "new"), ("customer", "new")]]
    first = plan.terms[0].steps
    assert first[0].filter == "(customer__c_mktsegment = 'BUILDING')" and first[0].condition is None
    assert first[1].condition == "(customer__c_custkey = orders__o_custkey)"
    assert plan.limit == 10 and plan.order == "revenue DESC, o_orderdate" and plan.recomputes_top
    assert [a.kind for a in plan.aggregates] == ["sum"]


def test_join_order_prefers_a_key_lookup_to_a_fan_out():
    plan = _plan((TPCH / "q05.sql").read_text())
    supplier = next(t for t, o in zip(plan.terms, plan.occurrences, strict=True) if o.table == "supplier")
    order = [plan.occurrences[s.occurrence].table for s in supplier.steps]
    # by FROM order customer would come next, joined on c_nationkey = s_nationkey (no key: every customer
    # of the nation); nation is looked up by its key, lineitem fans out along its foreign key
    assert order == ["supplier", "nation", "region", "lineitem", "orders", "customer"]


@pytest.mark.parametrize("sql, refused", [
    ("select c_custkey, count(*) from customer left join orders on o_custkey = c_custkey group by c_custkey",
     "LEFT JOIN"),
    ("select o_custkey, min(o_totalprice) from orders group by o_custkey", "only SUM, COUNT and AVG"),
    ("select o_custkey, count(distinct o_orderstatus) from orders group by o_custkey", "DISTINCT"),
    ("select avg(o_totalprice) from orders", "AVG of a DECIMAL"),
    ("select c_custkey from customer where c_custkey in (select o_custkey from orders)", "a subquery"),
    ("select o_orderkey from orders limit 5", "LIMIT without ORDER BY"),
    ("select o_orderkey, o_totalprice from orders order by o_totalprice limit 5", "over a join without aggregation"),
    ("select count(*) from customer, nation", "cross product"),
    ("select c_custkey from customer union all select o_custkey from orders", "not one SELECT"),
    ("select o_custkey, rank() over (order by o_totalprice) from orders", "a window function"),
])
def test_refusals_name_the_construct(sql, refused):
    with pytest.raises(NotDeltaSql, match=refused):
        _plan(sql)


def test_auto_falls_back_to_python_stages_with_the_reason_and_jvm_refuses():
    sql = "select o_custkey, min(o_totalprice) as m from orders group by o_custkey"
    compiled = compile_query(sql, CATALOG)
    width = len(compiled.dataflow.output_columns)
    chosen = spark_strategy(sql, CATALOG, width, width)
    assert chosen.plan is None and "only SUM, COUNT and AVG" in chosen.reason
    with pytest.raises(NotDeltaSql):
        spark_strategy(sql, CATALOG, width, width, "jvm")
    assert spark_strategy(sql, CATALOG, width, width, "python").name == "Python stages"
    q3 = (TPCH / "q03.sql").read_text()
    # auto keeps the Python stages (the JVM queries measured slower), EXPLAIN still shows the JVM plan
    assert spark_strategy(q3, CATALOG, 4, 4).plan is None and spark_strategy(q3, CATALOG, 4, 4).delta is not None
    assert spark_strategy(q3, CATALOG, 4, 4, "jvm").plan is not None
    # ORDER BY a value outside the select list makes a hidden column the delta strategy does not keep
    assert spark_strategy((TPCH / "q03.sql").read_text(), CATALOG, 4, 5).plan is None


def test_explain_shows_the_strategy_and_its_terms():
    text = explain_text(compile_query((TPCH / "q03.sql").read_text(), CATALOG))
    assert "Spark strategy (auto): Python stages (the default); the JVM delta queries apply too" in text
    assert "Δlineitem ⋈ orders' ⋈ customer'" in text
