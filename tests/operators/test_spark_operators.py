"""Which Spark operators run a dataflow: a table's validation folded into the stage it feeds when the
stage's key is made of primary-key columns (TPC-H Q3: 4 operators, not 6), and EXPLAIN's lines."""

from __future__ import annotations

import json
from pathlib import Path

import attrs
import pyarrow as pa

from catalog.schema import FunctionalDependency
from catalog.tpch import tpch_catalog
from operators.runtime.spark_edges import bucket_of, folded_input, key_text, unpack
from operators.runtime.spark_operators import folded_validations, spark_operators
from operators.runtime.spark_validation import ValidationInput
from planner.compiler import compile_query
from planner.explain import explain_json, explain_text

ROOT = Path(__file__).resolve().parents[2]


def q3():
    compiled = compile_query((ROOT / "examples" / "tpch" / "q03.sql").read_text(), tpch_catalog())
    tables = {name: compiled.context.catalog.table(name) for name in compiled.dataflow.tables()}
    return compiled, tables


def test_q3_folds_lineitem_and_customer_into_the_stages_they_feed():
    compiled, tables = q3()
    folded = folded_validations(compiled.dataflow, tables)
    lineitem_stage = next(r.stage for r in compiled.dataflow.sources if r.table == "lineitem")
    assert folded["lineitem"].stage == lineitem_stage and folded["lineitem"].key_columns == (0,)  # l_orderkey
    assert folded["customer"].key_columns == (0,)  # c_custkey
    assert "orders" not in folded  # stage 0 reads orders by o_custkey, not part of o_orderkey
    operators = spark_operators(compiled.dataflow, tables, folded)
    assert [o.name for o in operators] == ["validate orders", "[0] + validate customer", "[1] + validate lineitem", "[2]"]
    assert operators[2].reads == ("lineitem changes", "[0] + validate customer")


def test_a_table_whose_dependency_needs_a_check_stage_is_not_folded():
    compiled, tables = q3()
    lineitem = tables["lineitem"]
    fd = FunctionalDependency("lineitem", ("l_partkey",), ("l_suppkey",))
    tables = tables | {"lineitem": attrs.evolve(lineitem, functional_dependencies=(fd,))}
    assert "lineitem" not in folded_validations(compiled.dataflow, tables)


def test_explain_lists_the_spark_operators_in_text_and_json():
    compiled, _ = q3()
    assert "Spark operators: 4 " in explain_text(compiled)
    listed = json.loads(explain_json(compiled))["spark_operators"]
    assert [o["validates"] for o in listed] == [["orders"], ["customer"], ["lineitem"], []]
    assert listed[2]["shuffled_by"] == "lineitem.l_orderkey"


def test_a_folded_tables_changes_go_to_the_buckets_of_the_stage_key_keyed_by_their_primary_key():
    _, tables = q3()
    orders = tables["orders"]
    rows = [(o, 7, "F", None, None, "1-URGENT", "c", 0, "x") for o in (1, 2, 3)]
    batch = pa.RecordBatch.from_pylist(
        [dict(zip([*orders.column_names, "_op", "_seq"], (*row, 1, n), strict=True)) for n, row in enumerate(rows)])
    packed = list(ValidationInput(orders, 16, folded_input(0), (1,))([batch]))[0].to_pylist()
    assert [p["bucket"] for p in packed] == [bucket_of(key_text((7,)), 16)]  # all by o_custkey 7
    assert packed[0]["stage"] == folded_input(0)
    assert sorted(text for text, *_ in unpack(packed[0]["changes"])) == [key_text((o,)) for o in (1, 2, 3)]
