"""The Spark Connect DataFrame reader (``planner/sql/connect_plan.py``) on plan messages built by hand,
as the Connect client builds them for ``o.join(c, o["o_custkey"] == c["c_custkey"])...``: no server
needed, so this is the fast case; the slow ``test_connect_session.py`` compares real Connect
DataFrames with ``spark.sql``. Each rendered query must also plan (``compile_query``)."""

from __future__ import annotations

import pytest
from pyspark.sql.connect import proto

from catalog.tpch import tpch_catalog
from planner.compiler import compile_query
from planner.sql.connect_plan import relation_sql
from planner.sql.errors import UnsupportedDataFrameError

CATALOG = tpch_catalog()


def read(table: str, plan_id: int) -> proto.Relation:
    relation = proto.Relation()
    relation.common.plan_id = plan_id
    relation.read.named_table.unparsed_identifier = table
    return relation


def column(name: str, plan_id: int | None = None) -> proto.Expression:
    expression = proto.Expression()
    expression.unresolved_attribute.unparsed_identifier = name
    if plan_id is not None:
        expression.unresolved_attribute.plan_id = plan_id
    return expression


def call(name: str, *arguments: proto.Expression, distinct: bool = False) -> proto.Expression:
    expression = proto.Expression()
    expression.unresolved_function.function_name = name
    expression.unresolved_function.arguments.extend(arguments)
    expression.unresolved_function.is_distinct = distinct
    return expression


def alias(expression: proto.Expression, name: str) -> proto.Expression:
    aliased = proto.Expression()
    aliased.alias.expr.CopyFrom(expression)
    aliased.alias.name.append(name)
    return aliased


def literal(value: str) -> proto.Expression:
    expression = proto.Expression()
    expression.literal.string = value
    return expression


def orders_join_customer(condition: proto.Expression) -> proto.Relation:
    relation = proto.Relation()
    relation.join.left.CopyFrom(read("orders", 1))
    relation.join.right.CopyFrom(read("customer", 2))
    relation.join.join_condition.CopyFrom(condition)
    relation.join.join_type = proto.Join.JoinType.JOIN_TYPE_INNER
    return relation


def test_a_join_filter_and_aggregate_read_by_name_and_plan_id_render_as_one_block_that_plans():
    joined = orders_join_customer(call("==", column("o_custkey", 1), column("c_custkey", 2)))
    filtered = proto.Relation()
    filtered.filter.input.CopyFrom(joined)
    filtered.filter.condition.CopyFrom(call("and", call("==", column("c_mktsegment"), literal("AUTOMOBILE")),
                                            call("isNotNull", column("o_orderdate"))))
    grouped = proto.Relation()
    grouped.aggregate.input.CopyFrom(filtered)
    grouped.aggregate.group_type = proto.Aggregate.GroupType.GROUP_TYPE_GROUPBY
    grouped.aggregate.grouping_expressions.append(column("c_mktsegment"))
    grouped.aggregate.aggregate_expressions.extend([alias(call("sum", column("o_totalprice")), "total"),
                                                    alias(call("count", column("o_custkey"), distinct=True), "buyers")])
    sql = relation_sql(grouped, CATALOG)
    assert sql == (
        "SELECT customer.c_mktsegment, sum(orders.o_totalprice) AS total, count(DISTINCT orders.o_custkey) AS buyers "
        "FROM orders JOIN customer ON (orders.o_custkey = customer.c_custkey) "
        "WHERE (customer.c_mktsegment = 'AUTOMOBILE') AND (orders.o_orderdate IS NOT NULL) GROUP BY customer.c_mktsegment"
    )
    assert compile_query(sql, CATALOG).dataflow.visible_width == 3


def test_a_name_in_both_join_inputs_is_refused_as_ambiguous_unless_its_plan_id_says_which():
    both = orders_join_customer(call("==", column("o_custkey", 1), column("c_custkey", 2)))
    selected = proto.Relation()
    selected.project.input.CopyFrom(both)
    selected.project.expressions.append(column("o_comment"))
    assert relation_sql(selected, CATALOG) == "SELECT orders.o_comment FROM orders JOIN customer ON (orders.o_custkey = customer.c_custkey)"
    selected.project.expressions[0].CopyFrom(column("unknown_column"))
    with pytest.raises(UnsupportedDataFrameError, match="column 'unknown_column' .no such column"):
        relation_sql(selected, CATALOG)
    self_join = proto.Relation()
    self_join.join.left.CopyFrom(read("orders", 1))
    self_join.join.right.CopyFrom(read("orders", 2))
    self_join.join.join_type = proto.Join.JoinType.JOIN_TYPE_INNER
    self_join.join.join_condition.CopyFrom(call("==", column("o_orderkey"), column("o_orderkey", 2)))
    with pytest.raises(UnsupportedDataFrameError, match="column 'o_orderkey' .an ambiguous name"):
        relation_sql(self_join, CATALOG)
    self_join.join.join_condition.CopyFrom(call("==", column("o_orderkey", 1), column("o_orderkey", 2)))
    assert relation_sql(self_join, CATALOG).endswith("FROM orders JOIN orders AS orders_2 ON (orders.o_orderkey = orders_2.o_orderkey)")


def test_a_node_or_expression_not_translated_is_refused_by_name():
    sampled = proto.Relation()
    sampled.sample.input.CopyFrom(read("orders", 1))
    with pytest.raises(UnsupportedDataFrameError, match="with a sample node"):
        relation_sql(sampled, CATALOG)
    udf = proto.Expression()
    udf.common_inline_user_defined_function.function_name = "f"
    selected = proto.Relation()
    selected.project.input.CopyFrom(read("orders", 1))
    selected.project.expressions.append(udf)
    with pytest.raises(UnsupportedDataFrameError, match="common_inline_user_defined_function expression .a user-defined"):
        relation_sql(selected, CATALOG)
