"""The plan notation prints and parses back exactly, for every node class and expression form."""

from __future__ import annotations

import datetime
import decimal
import re
import textwrap

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import planner.ir.logical
from catalog.types import literal_decimal_type
from planner.ir.expressions import AggregateCall, Call, Column, Expr, Literal, Subquery
from planner.ir.fk_graph import FkEdge
from planner.ir.logical import (
    Aggregate,
    Distinct,
    Filter,
    Join,
    Limit,
    LogicalPlan,
    NamedExpr,
    Scan,
    Sort,
    SortKey,
)
from planner.ir.maintenance import Atom, ForeignKeyJoin, JoinSelect
from planner.ir.notation import (
    AGGREGATE_FUNCTIONS,
    PARAMETERIZED_AGGREGATES,
    notation_value,
    parse_expr,
    parse_plan,
    print_expr,
    print_plan,
)
from planner.optimizer.testing import assert_plan_text, assert_rewrite, assert_unchanged


def col(qualified: str) -> Column:
    table, _, name = qualified.rpartition(".")
    return Column(table or None, name)


def lit(value: object) -> Literal:
    """A literal as SQL types it; a float is written as the decimal literal it reads as (``1.0``)."""
    if isinstance(value, float) and "e" in repr(value):
        return Literal(value, "double")
    if isinstance(value, float):
        return Literal(decimal.Decimal(repr(value)), literal_decimal_type(repr(value)))
    kinds = {
        bool: "bool",
        int: "int",
        str: "string",
        datetime.date: "date",
        type(None): "null",
    }
    return Literal(value, kinds[type(value)])


def call(op: str, *args: Expr) -> Call:
    return Call(op, args)


def text(block: str) -> str:
    return textwrap.dedent(block).strip()


Q3_TEXT = text(
    """
    Limit count=10
      Sort keys=[revenue DESC, o_orderdate ASC]
        Aggregate group_by=[l.l_orderkey AS l_orderkey, o.o_orderdate AS o_orderdate] aggregates=[sum(l.l_extendedprice * (1 - l.l_discount)) AS revenue]
          Join[inner] condition=l.l_orderkey = o.o_orderkey
            Join[inner] condition=c.c_custkey = o.o_custkey
              Filter condition=c.c_mktsegment = 'BUILDING'
                Scan table=customer alias=c columns=[c_custkey, c_mktsegment]
              Filter condition=o.o_orderdate < date '1995-03-15'
                Scan table=orders alias=o columns=[o_orderkey, o_custkey, o_orderdate]
            Filter condition=l.l_shipdate > date '1995-03-15'
              Scan table=lineitem alias=l columns=[l_orderkey, l_extendedprice, l_discount, l_shipdate]
    """
)

Q3_PLAN = Limit(
    10,
    Sort(
        (SortKey(col("revenue"), ascending=False), SortKey(col("o_orderdate"))),
        Aggregate(
            (NamedExpr("l_orderkey", col("l.l_orderkey")), NamedExpr("o_orderdate", col("o.o_orderdate"))),
            (
                NamedExpr(
                    "revenue",
                    AggregateCall(
                        "sum", call("*", col("l.l_extendedprice"), call("-", lit(1), col("l.l_discount")))
                    ),
                ),
            ),
            Join(
                "inner",
                call("=", col("l.l_orderkey"), col("o.o_orderkey")),
                Join(
                    "inner",
                    call("=", col("c.c_custkey"), col("o.o_custkey")),
                    Filter(
                        call("=", col("c.c_mktsegment"), lit("BUILDING")),
                        Scan("customer", "c", ("c_custkey", "c_mktsegment")),
                    ),
                    Filter(
                        call("<", col("o.o_orderdate"), lit(datetime.date(1995, 3, 15))),
                        Scan("orders", "o", ("o_orderkey", "o_custkey", "o_orderdate")),
                    ),
                ),
                Filter(
                    call(">", col("l.l_shipdate"), lit(datetime.date(1995, 3, 15))),
                    Scan("lineitem", "l", ("l_orderkey", "l_extendedprice", "l_discount", "l_shipdate")),
                ),
            ),
        ),
    ),
)

# Subqueries (Q4, Q17, Q20, Q21, Q22 shapes) and the node classes Q3 does not use.
SUBQUERY_TEXT = text(
    """
    SetOperation[union_all]
      Project items=[s.s_name AS s_name, 'it\\'s' AS quote]
        Filter condition=s.s_suppkey in {
            Project items=[ps.ps_suppkey AS ps_suppkey]
              Filter condition=ps.ps_partkey in {
                  Project items=[p.p_partkey AS p_partkey]
                    Filter condition=p.p_name like 'forest%'
                      Scan table=part alias=p columns=[p_partkey, p_name]
                } and ps.ps_availqty > scalar{
                  Aggregate group_by=[] aggregates=[0.5 * sum(l.l_quantity) AS half]
                    Filter condition=l.l_partkey = ps.ps_partkey and l.l_shipdate < date '1994-01-01' + interval '1' year
                      Scan table=lineitem alias=l columns=[l_partkey, l_quantity, l_shipdate]
                }
                Scan table=partsupp alias=ps columns=[ps_partkey, ps_suppkey, ps_availqty]
          } and exists{
            Scan table=lineitem alias=l2 columns=[l_orderkey]
          } and not exists{
            Filter condition=l3.l_receiptdate > l3.l_commitdate
              Scan table=lineitem alias=l3 columns=[l_receiptdate, l_commitdate]
          } and not (exists{
            Scan table=orders alias=o columns=[]
          })
          Scan table=supplier alias=s columns=[s_suppkey, s_name]
      Distinct
        SubqueryAlias alias=custsale
          Join[left] condition=c.c_custkey = o.o_custkey and c.c_acctbal not in {
              Scan table=customer alias=c2 columns=[c_acctbal]
            }
            Join[cross]
              Join[semi] condition=c.c_nationkey = n.n_nationkey
                Scan table=customer alias=c columns=[c_custkey, c_nationkey, c_acctbal, c_phone]
                Scan table=nation alias=n columns=[n_nationkey]
              Join[anti] condition=substring(r.r_name, 1, 2) in ('13', '31')
                Scan table=region alias=r columns=[r_name]
                Scan table=region alias=r2 columns=[r_name]
            Scan table=orders alias=o columns=[o_custkey]
    """
)


def test_a_plan_prints_as_one_node_a_line_with_fields_in_declaration_order() -> None:
    assert print_plan(Q3_PLAN) == Q3_TEXT


def test_the_printed_plan_parses_back_to_the_same_objects() -> None:
    assert parse_plan(Q3_TEXT) == Q3_PLAN


def test_subqueries_print_their_plans_inline_as_indented_blocks_and_round_trip() -> None:
    plan = parse_plan(SUBQUERY_TEXT)
    assert print_plan(plan) == SUBQUERY_TEXT
    assert parse_plan(print_plan(plan)) == plan
    condition = plan.left.child.condition
    subqueries = [e for e in _and_operands(condition)]
    assert [type(e).__name__ for e in subqueries] == ["Subquery", "Subquery", "Subquery", "Call"]
    assert (subqueries[0].kind, subqueries[0].operand) == ("in", col("s.s_suppkey"))
    assert (subqueries[1].kind, subqueries[1].negated) == ("exists", False)
    assert (subqueries[2].kind, subqueries[2].negated) == ("exists", True)
    assert subqueries[3] == call("not", Subquery("exists", Scan("orders", "o", ())))


def _and_operands(expr: Expr) -> list[Expr]:
    if isinstance(expr, Call) and expr.op == "and":
        return [*_and_operands(expr.args[0]), *_and_operands(expr.args[1])]
    return [expr]


def test_the_sample_plans_cover_every_node_class_of_plan_module() -> None:
    defined = {
        name
        for name, value in vars(planner.ir.logical).items()
        if isinstance(value, type) and issubclass(value, LogicalPlan) and value is not LogicalPlan
    }
    used = {type(node).__name__ for sample in (Q3_PLAN, parse_plan(SUBQUERY_TEXT)) for node in sample.walk()}
    assert used == defined


def test_indented_text_with_surrounding_blank_lines_parses() -> None:
    indented = "\n\n" + textwrap.indent(Q3_TEXT, "      ") + "\n   \n"
    assert parse_plan(indented) == Q3_PLAN


EXPRESSIONS = [
    (AggregateCall("sum", call("*", col("l.x"), call("-", lit(1), col("l.d")))), "sum(l.x * (1 - l.d))"),
    (call("<", col("o.d"), lit(datetime.date(1995, 3, 15))), "o.d < date '1995-03-15'"),
    (call("=", col("c.seg"), lit("BUILDING")), "c.seg = 'BUILDING'"),
    (AggregateCall("count", None), "count(*)"),
    (AggregateCall("count", col("x"), distinct=True), "count(distinct x)"),
    (AggregateCall("count", None, distinct=True), "count(distinct *)"),
    (AggregateCall("avg", lit(1.0)), "avg(1.0)"),
    (call("in", col("x"), lit(1), lit(2)), "x in (1, 2)"),
    (call("not in", col("x"), lit("a")), "x not in ('a')"),
    (call("in", col("x")), "x in ()"),
    (call("between", col("x"), col("a"), col("b")), "x between a and b"),
    (call("between", col("x"), call("and", col("a"), col("b")), col("c")), "x between (a and b) and c"),
    (call("case", col("a"), lit(1), col("b"), lit(2), lit(3)), "case when a then 1 when b then 2 else 3 end"),
    (call("case", col("a"), lit(1)), "case when a then 1 end"),
    (call("extract_year", col("d")), "extract_year(d)"),
    (call("substring", col("s"), lit(1), lit(2)), "substring(s, 1, 2)"),
    (call("now"), "now()"),
    (call("-", col("d"), Literal((3, "month"), "interval month")), "d - interval '3' month"),
    (Literal((-2, "day"), "interval day"), "interval '-2' day"),
    (lit(None), "null"),
    (lit(True), "true"),
    (lit(False), "false"),
    (lit(1), "1"),
    (lit(1.0), "1.0"),
    (lit(1e16), "1e+16"),
    (lit(-1), "-1"),
    (lit(-2.5), "-2.5"),
    (call("neg", lit(1)), "-(1)"),
    (call("neg", col("x")), "-x"),
    (call("neg", lit(-1)), "-(-1)"),
    (call("neg", call("neg", col("x"))), "-(-x)"),
    (call("-", lit(2), lit(-1)), "2 - -1"),
    (call("*", lit(-1), col("x")), "-1 * x"),
    (lit("it's \\ a\nline"), "'it\\'s \\\\ a\\nline'"),
    (call("-", call("-", col("a"), col("b")), col("c")), "a - b - c"),
    (call("-", col("a"), call("-", col("b"), col("c"))), "a - (b - c)"),
    (call("*", call("+", col("a"), col("b")), col("c")), "(a + b) * c"),
    (call("+", col("a"), call("*", col("b"), col("c"))), "a + b * c"),
    (call("/", col("a"), call("*", col("b"), col("c"))), "a / (b * c)"),
    (call("not", call("and", col("a"), col("b"))), "not (a and b)"),
    (call("not", call("=", col("a"), col("b"))), "not a = b"),
    (call("=", call("not", col("a")), col("b")), "(not a) = b"),
    (call("not", call("not", col("a"))), "not not a"),
    (call("or", col("a"), call("and", col("b"), col("c"))), "a or b and c"),
    (call("and", call("or", col("a"), col("b")), col("c")), "(a or b) and c"),
    (call("and", col("a"), call("and", col("b"), col("c"))), "a and (b and c)"),
    (call("=", call("=", col("a"), col("b")), col("c")), "(a = b) = c"),
    (call("like", col("s"), lit("a%")), "s like 'a%'"),
    (call("not like", col("s"), lit("a%")), "s not like 'a%'"),
    (call("is null", col("x")), "x is null"),
    (call("is not null", call("+", col("x"), lit(1))), "x + 1 is not null"),
    (call("not", call("is null", col("x"))), "not x is null"),
    (col("t.order"), "t.order"),
    (col("date"), '"date"'),
    (Column("my table", 'a"b'), '"my table"."a\\"b"'),
    (call("sum", col("x")), '"sum"(x)'),
    (call("Upper", col("x")), '"Upper"(x)'),
    (call("||", col("a"), col("b")), '"||"(a, b)'),
    (call("+", col("a")), '"+"(a)'),
    (call("and", col("a"), col("b"), col("c")), '"and"(a, b, c)'),
]


@pytest.mark.parametrize(("expr", "expected"), EXPRESSIONS, ids=[t for _, t in EXPRESSIONS])
def test_expressions_print_as_sql_with_minimal_parentheses_and_parse_back(expr: Expr, expected: str) -> None:
    assert print_expr(expr) == expected
    assert parse_expr(expected) == expr


def test_number_literals_read_as_spark_types_them() -> None:
    assert parse_expr("1.0") == Literal(decimal.Decimal("1.0"), "decimal(2,1)")
    assert parse_expr("2.5e0") == Literal(2.5, "double")
    assert parse_expr("1") == Literal(1, "int")
    assert parse_expr("3000000000") == Literal(3000000000, "bigint")
    assert print_expr(Literal(2.5, "double")) == "2.5e0"


@attrs.frozen
class ValueProbe(LogicalPlan):
    """A node whose one field holds anything, to probe how values print."""

    value: object


VALUES = [
    ("x", "x"),
    (col("x"), "(x)"),
    (col("t.x"), "t.x"),
    ("a b", "'a b'"),
    ("and", "'and'"),
    (col("and"), '"and"'),
    (lit("a b"), "('a b')"),
    (1, "1"),
    (lit(1), "(1)"),
    (-1, "-1"),
    (lit(-1), "(-1)"),
    (call("neg", lit(1)), "-(1)"),
    (1.0, "1.0"),
    (lit(1.0), "(1.0)"),
    (None, "None"),
    (lit(None), "null"),
    (True, "True"),
    (lit(True), "true"),
    ((), "[]"),
    (("a", col("a"), col("t.a"), 2), "[a, (a), t.a, 2]"),
    ((("nested",),), "[[nested]]"),
    (NamedExpr("total", call("+", col("a"), lit(1))), "a + 1 AS total"),
    (NamedExpr("date", col("date")), '"date" AS "date"'),
    (SortKey(col("a"), ascending=False), "a DESC"),
    (call("=", col("a"), lit(1)), "a = 1"),
    (Scan("t", "t", ("a",)), "{\n    Scan table=t alias=t columns=[a]\n  }"),
]


@pytest.mark.parametrize(("value", "expected"), VALUES, ids=[t for _, t in VALUES])
def test_plain_values_and_expressions_that_look_alike_print_differently(value: object, expected: str) -> None:
    plan = ValueProbe(value)
    assert print_plan(plan) == f"ValueProbe value={expected}"
    assert parse_plan(print_plan(plan)) == plan


def test_a_new_plan_class_and_a_registered_value_class_round_trip_without_changes_to_the_notation() -> None:
    @notation_value
    @attrs.frozen
    class ProbeKeyRange:
        low: int
        high: Expr | None
        label: str = "all"

    @attrs.frozen
    class ShuffleProbe(LogicalPlan):
        child_fields = ("first", "rest")
        variant_field = "mode"
        mode: str
        keys: tuple[Column, ...]
        ranges: tuple[ProbeKeyRange, ...]
        weight: float
        spill: bool
        note: str | None
        first: LogicalPlan
        rest: tuple[LogicalPlan, ...]

    scan = Scan("t", "t", ("a", "b"))
    plan = ShuffleProbe(
        "hash",
        (col("t.a"), col("b")),
        (ProbeKeyRange(1, call("+", col("t.a"), lit(1)), "it's"), ProbeKeyRange(-5, None)),
        0.25,
        False,
        None,
        Filter(call(">", col("t.b"), lit(0)), scan),
        (scan, Distinct(scan)),
    )
    expected = """
        ShuffleProbe[hash] keys=[t.a, (b)] ranges=[ProbeKeyRange(low=1, high=t.a + 1, label='it\\'s'), ProbeKeyRange(low=-5)] weight=0.25 spill=False
          Filter condition=t.b > 0
            Scan table=t alias=t columns=[a, b]
          Scan table=t alias=t columns=[a, b]
          Distinct
            Scan table=t alias=t columns=[a, b]
    """
    assert_plan_text(plan, expected)
    assert parse_plan(expected) == plan
    # Defaults and Nones the printer leaves out may still be written out.
    written_out = expected.replace("ProbeKeyRange(low=-5)", "ProbeKeyRange(low=-5, high=None, label=all)")
    assert parse_plan(written_out.replace("spill=False", "spill=False note=None")) == plan


def test_foreign_key_edges_print_as_arrows_and_round_trip() -> None:
    edges = (
        FkEdge("l", ("l_orderkey",), "o", ("o_orderkey",)),
        FkEdge("l", ("l_partkey", "l_suppkey"), "ps", ("ps_partkey", "ps_suppkey")),
        FkEdge("date", ("order",), "t", ("end",)),
    )
    plan = ForeignKeyJoin("l", edges, None, (Atom("lineitem", "l", ("l_orderkey",)),))
    expected = """
        ForeignKeyJoin root=l edges=[l(l_orderkey)→o(o_orderkey), l(l_partkey,l_suppkey)→ps(ps_partkey,ps_suppkey), "date"(order)→t("end")]
          Atom table=lineitem alias=l columns=[l_orderkey]
    """
    assert_plan_text(plan, expected)
    assert parse_plan(expected) == plan
    long_form = "ForeignKeyJoin root=l edges=[FkEdge(referencing=l, columns=[l_orderkey], referenced=o, key=[o_orderkey])]"
    assert parse_plan(
        long_form + " residual=None\n  Atom table=lineitem alias=l columns=[l_orderkey] predicate=None"
    ) == (ForeignKeyJoin("l", edges[:1], None, (Atom("lineitem", "l", ("l_orderkey",)),)))


def test_a_long_line_wraps_its_fields_lists_and_value_objects_and_parses_back() -> None:
    edges = tuple(FkEdge(f"r{i}", (f"x{i}",), f"r{i + 1}", (f"k{i}",)) for i in range(12))
    selects = tuple(
        JoinSelect(
            Column(f"r{i}", "a_rather_long_column_name"),
            "<=",
            Column(f"r{i + 1}", "another_long_column_name"),
        )
        for i in range(3)
    )
    columns = tuple(f"column_number_{i}" for i in range(12))
    atom = Atom("lineitem", "r0", columns, call(">", col("r0.column_number_1"), lit(3)))
    plan = ForeignKeyJoin("r0", edges, None, (atom,), join_selects=selects)
    expected = """
        ForeignKeyJoin root=r0
            edges=[r0(x0)→r1(k0), r1(x1)→r2(k1), r2(x2)→r3(k2), r3(x3)→r4(k3), r4(x4)→r5(k4), r5(x5)→r6(k5), r6(x6)→r7(k6), r7(x7)→r8(k7), r8(x8)→r9(k8),
              r9(x9)→r10(k9), r10(x10)→r11(k10), r11(x11)→r12(k11)]
            join_selects=[JoinSelect(row=r0.a_rather_long_column_name, op='<=', value=r1.another_long_column_name),
              JoinSelect(row=r1.a_rather_long_column_name, op='<=', value=r2.another_long_column_name),
              JoinSelect(row=r2.a_rather_long_column_name, op='<=', value=r3.another_long_column_name)]
          Atom table=lineitem alias=r0
              columns=[column_number_0, column_number_1, column_number_2, column_number_3, column_number_4, column_number_5, column_number_6, column_number_7,
                column_number_8, column_number_9, column_number_10, column_number_11] predicate=r0.column_number_1 > 3
    """
    assert_plan_text(plan, expected)
    assert parse_plan(expected) == plan


def test_a_tuple_child_field_may_be_empty() -> None:
    @attrs.frozen
    class UnionAllProbe(LogicalPlan):
        child_fields = ("inputs",)
        inputs: tuple[LogicalPlan, ...]

    assert parse_plan("UnionAllProbe") == UnionAllProbe(())


# Random expression trees: the round trip must hold for every one.

names = st.one_of(
    st.sampled_from(["x", "l_orderkey", "and", "date", "Order", "sum", "None", "a b", "it's", 'q"t', ""]),
    st.text(max_size=4),
)
columns = st.builds(Column, st.none() | names, names)
literals = st.one_of(
    st.builds(Literal, st.integers(-(2**31), 2**31 - 1), st.just("int")),
    st.builds(Literal, st.integers(2**31, 2**63 - 1), st.just("bigint")),
    st.builds(Literal, st.floats(allow_nan=False, allow_infinity=False), st.just("double")),
    st.decimals(allow_nan=False, allow_infinity=False, places=2, min_value=0, max_value=10**6).map(
        lambda d: Literal(d, literal_decimal_type(format(d, "f")))
    ),
    st.builds(Literal, st.text(max_size=6), st.just("string")),
    st.builds(Literal, st.dates(), st.just("date")),
    st.builds(Literal, st.booleans(), st.just("bool")),
    st.just(Literal(None, "null")),
    st.builds(
        lambda n, unit: Literal((n, unit), f"interval {unit}"),
        st.integers(-99, 99),
        st.sampled_from(["day", "month", "year"]),
    ),
)
scans = st.builds(Scan, names, names, st.lists(names, max_size=3).map(tuple))
operators = ["+", "-", "*", "/", "=", "<>", "<", "<=", ">", ">=", "and", "or", "like", "not like", "between"]
functions = [
    "extract_year",
    "substring",
    "f",
    "Upper",
    "||",
    "sum",
    "count",
    "and",
    "neg",
    "not",
    "case",
    "in",
]



def _plain_parameters(call: AggregateCall) -> AggregateCall:
    """Parameters only where the aggregate has them (a percentile's fraction and order; a percentile
    has an argument, no ``*``)."""
    if call.func not in PARAMETERIZED_AGGREGATES or call.arg is None:
        return attrs.evolve(call, parameters=(), func=call.func if call.func not in PARAMETERIZED_AGGREGATES else "count")
    return attrs.evolve(call, parameters=(0.5, False)) if call.func == "median" else call

def extend(children: st.SearchStrategy[Expr]) -> st.SearchStrategy[Expr]:
    args = st.lists(children, max_size=4).map(tuple)
    plans = st.one_of(scans, st.builds(Filter, children, scans))
    return st.one_of(
        st.builds(Call, st.sampled_from(operators), st.tuples(children, children)),
        st.builds(Call, st.sampled_from(["between"]), st.tuples(children, children, children)),
        st.builds(Call, st.sampled_from(["not", "neg", "is null", "is not null"]), st.tuples(children)),
        st.builds(Call, st.sampled_from(["in", "not in", "case", *functions, *operators]), args),
        st.builds(AggregateCall, st.sampled_from([f for f in AGGREGATE_FUNCTIONS if not f.endswith("_by")]),
                  st.none() | children, st.booleans(),
                  parameters=st.tuples(st.sampled_from([0.0, 0.25, 1.0]), st.booleans())).map(_plain_parameters),
        st.builds(AggregateCall, st.sampled_from(["max_by", "min_by"]), children, st.booleans(),
                  further_args=st.tuples(children)),
        st.builds(AggregateCall, st.just("count"), children, st.just(True),
                  further_args=st.lists(children, min_size=1, max_size=2).map(tuple)),
        st.builds(Subquery, st.just("exists"), plans, st.none(), st.booleans()),
        st.builds(Subquery, st.just("scalar"), plans),
        st.builds(Subquery, st.just("in"), plans, children, st.booleans()),
    )


expressions = st.recursive(st.one_of(columns, literals), extend, max_leaves=10)


@settings(max_examples=300, deadline=None)
@given(expressions)
def test_random_expressions_round_trip(expr: Expr) -> None:
    assert parse_expr(print_expr(expr)) == expr


@settings(max_examples=200, deadline=None)
@given(expressions, scans)
def test_random_expressions_round_trip_inside_plans_and_as_plain_field_values(expr: Expr, scan: Scan) -> None:
    plan = Join("inner", expr, Filter(expr, scan), ValueProbe(expr))
    text = print_plan(plan)
    assert parse_plan(text) == plan
    assert print_plan(parse_plan(text)) == text


plain_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3).map(tuple),
    max_leaves=8,
)


@settings(max_examples=200, deadline=None)
@given(plain_values)
def test_random_plain_values_round_trip_with_their_types(value: object) -> None:
    parsed = parse_plan(print_plan(ValueProbe(value)))
    assert repr(parsed) == repr(ValueProbe(value))  # repr tells 1 from 1.0 and True, and 0.0 from -0.0


# Malformed text: the error names line and column.

MALFORMED = [
    ("Filter condition=a =\n  Scan table=t alias=t columns=[]", "line 1, column 21: unexpected line break"),
    ("Filter condition=a = 1\n  Scan table=t alias=t columns=[a,]", "line 2, column 35: unexpected ']'"),
    (
        "Filter condition=a = 1\n  Scann table=t alias=t columns=[]",
        "line 2, column 3: unknown plan node Scann",
    ),
    (
        "Scan table=t alias=t colums=[]",
        "line 1, column 22: Scan has no field colums; fields: table, alias, columns",
    ),
    ("Scan table=t alias=t", "line 1, column 1: Scan is missing columns"),
    ("Scan table=t table=u alias=t columns=[]", "line 1, column 14: field table of Scan is given twice"),
    (
        "Filter condition=true\n   Scan table=t alias=t columns=[]",
        "line 2, column 4: Scan is indented 3 spaces",
    ),
    (
        "Filter condition=true\n    Scan table=t alias=t columns=[]",
        "line 2, column 5: Scan is indented 4 spaces",
    ),
    ("Filter condition=true", "line 1, column 1: Filter needs 1 child line(s) (child), found 0"),
    ("Scan[x] table=t alias=t columns=[]", "line 1, column 1: Scan has no [variant]"),
    (
        "Filter condition=d < date '1995-13-01'\n  Distinct",
        "line 1, column 27: date '1995-13-01' is not a date",
    ),
    ("Filter condition=sum(a, b) > 1\n  Distinct", "line 1, column 18: aggregate sum takes one argument"),
    ("Filter condition=f(distinct a) > 1\n  Distinct", "line 1, column 18: only the aggregates"),
    ("ValueProbe value=Nope(a=1)", "line 1, column 18: unknown value class Nope"),
    ("ValueProbe value=a\tb", "line 1, column 19: unexpected character '\\t'"),
    ("ValueProbe value=l(l_key + 1)→o(o_key)", "line 1, column 18: an edge end is relation(column, ...)"),
    ("ValueProbe value=l(l_key)→o.o_key", "line 1, column 27: an edge end is relation(column, ...)"),
    (
        "Filter condition=exists{\n    Scan table=t alias=t columns=[]\n  ",
        "line 2, column 35: unexpected end of text",
    ),
]


@pytest.mark.parametrize(("bad", "message"), MALFORMED, ids=[m for _, m in MALFORMED])
def test_malformed_text_raises_a_value_error_naming_line_and_column(bad: str, message: str) -> None:
    with pytest.raises(ValueError, match="^" + re.escape(message)):
        parse_plan(bad)


def test_values_without_a_notation_are_refused_when_printing() -> None:
    @attrs.frozen
    class Unregistered:
        x: int

    with pytest.raises(ValueError, match="register its class with @notation_value"):
        print_plan(ValueProbe(Unregistered(1)))
    with pytest.raises(ValueError, match="no notation for a int literal holding '1'"):
        print_expr(Literal("1", "int"))
    with pytest.raises(ValueError, match="no text for the float inf"):
        print_plan(ValueProbe(float("inf")))
    with pytest.raises(ValueError, match="no notation for a scalar subquery"):
        print_expr(Subquery("scalar", Scan("t", "t", ()), col("x")))


def test_a_field_named_like_a_keyword_is_refused_with_its_name() -> None:
    @attrs.frozen
    class KeywordFieldProbe(LogicalPlan):
        end: int

    with pytest.raises(ValueError, match="field 'end' of KeywordFieldProbe is a keyword"):
        print_plan(KeywordFieldProbe(3))


# The test helpers.


class PushFilterBelowDistinct:
    """A toy rule: Filter over Distinct becomes Distinct over Filter."""

    def apply(self, plan: LogicalPlan, ctx: object) -> LogicalPlan:
        def push(node: LogicalPlan) -> LogicalPlan:
            match node:
                case Filter(condition, Distinct(child)):
                    return Distinct(Filter(condition, child))
            return node

        return plan.transform_up(push)


class CopyEverything:
    """A broken rule: returns an equal plan that is a new object."""

    def apply(self, plan: LogicalPlan, ctx: object) -> LogicalPlan:
        return attrs.evolve(plan)


BEFORE = """
    Filter condition=a > 1
      Distinct
        Scan table=t alias=t columns=[a]
"""
AFTER = """
    Distinct
      Filter condition=a > 1
        Scan table=t alias=t columns=[a]
"""


def test_assert_rewrite_passes_when_the_rule_produces_the_expected_plan() -> None:
    assert_rewrite(PushFilterBelowDistinct(), BEFORE, AFTER, ctx=None)


def test_assert_rewrite_fails_with_a_unified_diff() -> None:
    with pytest.raises(AssertionError) as failure:
        assert_rewrite(PushFilterBelowDistinct(), BEFORE, BEFORE, ctx=None)
    assert "--- expected\n+++ actual" in str(failure.value)
    assert "-Filter condition=a > 1\n" in str(failure.value)


def test_assert_unchanged_passes_when_the_rule_returns_the_same_object() -> None:
    assert_unchanged(PushFilterBelowDistinct(), AFTER, ctx=None)


def test_assert_unchanged_fails_when_the_rule_fires() -> None:
    with pytest.raises(AssertionError, match="plan differs"):
        assert_unchanged(PushFilterBelowDistinct(), BEFORE, ctx=None)


def test_assert_unchanged_fails_when_the_rule_returns_an_equal_copy() -> None:
    with pytest.raises(AssertionError, match="CopyEverything returned an equal but new plan"):
        assert_unchanged(CopyEverything(), AFTER, ctx=None)


def test_the_keywords_are_the_word_terminals_of_the_built_parser() -> None:
    """``keywords`` reads them from the grammar without building the LALR tables; the parser's own."""
    from planner.ir.notation_syntax import IDENTIFIER, keywords, plan_parser

    built = {t.pattern.value for t in plan_parser().terminals if t.pattern.type == "str" and IDENTIFIER.fullmatch(t.pattern.value)}
    assert keywords() == built and {"end"} <= built
