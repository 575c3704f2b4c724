"""MIN/MAX, DISTINCT aggregates and SELECT DISTINCT over foreign-key join trees equal DuckDB's
recomputation after every batch, on streams that delete (the window slides, the random stream
deletes orders and customers under their lineitems), so current minima and maxima get deleted."""

from __future__ import annotations

import pytest

from catalog.tpch import tpch_catalog
from planner.compiler import compile_query
from planner.ir.maintenance import CountedDistinct, GroupAggregate
from tests.maintenance.checking import check_against_recomputation

MIN_MAX_AND_COUNT_DISTINCT = """
select o_orderpriority, min(o_totalprice), max(l_extendedprice), count(distinct l_suppkey)
from orders, lineitem
where l_orderkey = o_orderkey
group by o_orderpriority
"""

GLOBAL_MIN_MAX = """
select min(l_shipdate), max(l_shipdate), min(c_acctbal), max(o_totalprice), count(*)
from lineitem, orders, customer
where l_orderkey = o_orderkey and o_custkey = c_custkey and l_discount > 0.05
"""

DISTINCT_AGGREGATES_BY_NATION = """
select n_name, avg(distinct o_totalprice), sum(distinct l_quantity), count(distinct o_orderkey), avg(l_quantity)
from lineitem, orders, customer, nation
where l_orderkey = o_orderkey and o_custkey = c_custkey and c_nationkey = n_nationkey
group by n_name
"""

# grouped by the lineitem stage's key: the aggregate is fused into that stage
MIN_MAX_PER_ORDER_WITH_HAVING = """
select o_orderkey, min(l_shipdate) as first_ship, max(l_receiptdate) as last_receipt
from orders, lineitem
where l_orderkey = o_orderkey
group by o_orderkey
having count(distinct l_shipmode) > 4
"""

SELECT_DISTINCT = """
select distinct o_orderpriority, l_shipmode, l_returnflag
from orders, lineitem
where l_orderkey = o_orderkey and l_quantity > 45
"""

SELECT_DISTINCT_TOP_K = """
select distinct c_mktsegment, o_orderpriority
from customer, orders
where o_custkey = c_custkey and o_totalprice > 300000
order by c_mktsegment, o_orderpriority desc
limit 7
"""


@pytest.mark.parametrize(("sql", "kind"), [
    (MIN_MAX_AND_COUNT_DISTINCT, "window"), (MIN_MAX_AND_COUNT_DISTINCT, "random"),
    (GLOBAL_MIN_MAX, "window"), (GLOBAL_MIN_MAX, "random"),
    (DISTINCT_AGGREGATES_BY_NATION, "window"), (DISTINCT_AGGREGATES_BY_NATION, "random"),
    (MIN_MAX_PER_ORDER_WITH_HAVING, "random"),
], ids=["min_max_count_distinct-window", "min_max_count_distinct-random", "global_min_max-window",
        "global_min_max-random", "distinct_by_nation-window", "distinct_by_nation-random", "per_order_having-random"])
def test_min_max_and_distinct_aggregates_equal_recomputation_after_every_batch(tpch_streams, sql, kind):
    check_against_recomputation(sql, tpch_catalog(), tpch_streams[kind], batch_size=30_000)


@pytest.mark.parametrize(("sql", "kind"), [(SELECT_DISTINCT, "window"), (SELECT_DISTINCT, "random"),
                                           (SELECT_DISTINCT_TOP_K, "random")],
                         ids=["distinct-window", "distinct-random", "distinct_top_k-random"])
def test_select_distinct_equals_recomputation_after_every_batch(tpch_streams, sql, kind):
    check_against_recomputation(sql, tpch_catalog(), tpch_streams[kind], batch_size=30_000)


def test_min_max_plans_a_group_aggregate_and_explains_its_logarithmic_cost():
    compiled = compile_query(MIN_MAX_AND_COUNT_DISTINCT, tpch_catalog(), strict=True)
    assert any(isinstance(node, GroupAggregate) for node in compiled.plan.walk())
    aggregate = compiled.dataflow.stages[-1].stage.describe()
    assert aggregate.operator == "GroupAggregate (MIN, MAX, COUNT DISTINCT)"
    assert aggregate.update_cost.startswith("O(log n) per join change")
    assert "MIN(...)" in compiled.context.refusals["MaintainRingAggregate"]


def test_select_distinct_plans_a_counted_distinct():
    compiled = compile_query(SELECT_DISTINCT, tpch_catalog(), strict=True)
    assert isinstance(compiled.plan, CountedDistinct)
    assert compiled.dataflow.stages[-1].stage.describe().update_cost == "O(1) per result change"
