"""Unconstrained pairs, assertion keys and the fewest auxiliary attributes (AJU §3.2, Condition 5),
on the paper's Figure 4 and Figure 7 graphs and on TPC-H Q5 and Q9; the ForeignKeyJoin node derives
them once and EXPLAIN reads them from it."""

from __future__ import annotations

from pathlib import Path

from catalog.tpch import tpch_catalog
from planner import explain
from planner.compiler import compile_query
from planner.explain import explain_json, explain_text
from planner.ir import fk_graph
from planner.ir.fk_graph import FkEdge, assertion_keys, auxiliary_attributes, unconstrained_pairs
from planner.ir.maintenance import ForeignKeyJoin
from planner.ir.notation import parse_plan, print_plan

EXAMPLES = Path(__file__).parents[2] / "examples" / "tpch"


def graph(*pairs: str) -> tuple[FkEdge, ...]:
    """Edges written ``"r2>r1"``: r2 holds a foreign key to r1's primary key."""
    return tuple(FkEdge(a, ("k",), b, ("k",)) for a, b in (p.split(">") for p in pairs))


# Figure 4: R4 reaches R1 through R2 and through R3.
FIGURE_4 = graph("r2>r1", "r3>r1", "r4>r2", "r4>r3")
# Figure 7 (the figure did not survive the text conversion; this DAG has exactly the properties the text
# states: unconstrained pairs (R1,R3), (R1,R6), (R1,R7), (R2,R6); (R2,R7) constrained through R6;
# x1 an assertion key of R3, R6, R7 and x2 of R6; x1 already in R3; x1 auxiliary at R4 suffices).
FIGURE_7 = graph("r2>r1", "r3>r1", "r3>r2", "r4>r2", "r5>r1", "r6>r3", "r6>r4", "r7>r6", "r7>r5")


def test_figure_4_has_one_unconstrained_pair_and_needs_no_auxiliary_attribute():
    assert unconstrained_pairs(FIGURE_4) == (("r1", "r4"),)
    assert assertion_keys(FIGURE_4) == {"r4": ("r1",)}
    assert auxiliary_attributes(FIGURE_4) == {}  # "x1 already exists in its two child relations"


def test_figure_7_matches_the_papers_assertion_keys_and_auxiliary_attribute():
    assert set(unconstrained_pairs(FIGURE_7)) == {("r1", "r3"), ("r1", "r6"), ("r1", "r7"), ("r2", "r6")}
    assert assertion_keys(FIGURE_7) == {"r3": ("r1",), "r6": ("r1", "r2"), "r7": ("r1",)}
    assert auxiliary_attributes(FIGURE_7) == {"r4": ("r1",)}


def test_a_tree_has_no_assertion_keys():
    tree = graph("r2>r1", "r3>r1", "r4>r2")
    assert unconstrained_pairs(tree) == () and assertion_keys(tree) == {} and auxiliary_attributes(tree) == {}


def test_the_search_returns_the_fewest_attributes_when_one_relation_serves_two_paths():
    """R5 reaches R1 via R4→R3→R2→R1 and via R1 directly: one auxiliary attribute deep in the chain is
    not enough, every relation between must carry the key; the search finds exactly that set."""
    chain = graph("r2>r1", "r3>r2", "r4>r3", "r5>r4", "r5>r1")
    assert auxiliary_attributes(chain) == {"r3": ("r1",), "r4": ("r1",)}


def joins(name: str) -> ForeignKeyJoin:
    plan = compile_query((EXAMPLES / f"{name}.sql").read_text(), tpch_catalog(), strict=True).plan
    return next(n for n in plan.walk() if isinstance(n, ForeignKeyJoin))


def test_q5_needs_the_nation_key_on_orders():
    """lineitem reaches nation via supplier and via orders → customer; orders lacks the nation key."""
    edges = joins("q05").edges
    assert assertion_keys(edges) == {"lineitem": ("nation",)}
    assert auxiliary_attributes(edges) == {"orders": ("nation",)}


def test_q9_needs_no_auxiliary_attribute():
    """partsupp holds both keys that lineitem asserts, so Condition 5 holds as is."""
    edges = joins("q09").edges
    assert set(assertion_keys(edges)["lineitem"]) == {"part", "supplier"}
    assert auxiliary_attributes(edges) == {}


def test_a_join_computes_its_facts_once_and_keeps_them():
    """The ForeignKeyJoin node owns its facts: asked twice, it returns the same objects."""
    join = joins("q05")
    assert join.assertion_keys is join.assertion_keys and join.assertion_keys == assertion_keys(join.edges)
    assert join.auxiliary_attributes is join.auxiliary_attributes
    assert join.auxiliary_attributes == auxiliary_attributes(join.edges)
    assert join.theorem11_tree is join.theorem11_tree


def test_explain_reads_the_facts_from_the_node_and_derives_none(monkeypatch):
    compiled = compile_query((EXAMPLES / "q05.sql").read_text(), tpch_catalog(), strict=True)
    join = next(n for n in compiled.plan.walk() if isinstance(n, ForeignKeyJoin))
    facts = (join.assertion_keys, join.auxiliary_attributes, join.theorem11_tree)

    def derived_again(*args):
        raise AssertionError("a foreign-key fact was derived again")

    for name in ("paths", "unconstrained_pairs", "assertion_keys", "auxiliary_attributes", "natural_pairs"):
        monkeypatch.setattr(fk_graph, name, derived_again)
    assert "Assertion keys (AJU §3.2): lineitem: PK(nation)" in explain_text(compiled, verbose=True)
    assert '"theorem11_tree": "BinaryJoin' in explain_json(compiled)
    assert facts == (join.assertion_keys, join.auxiliary_attributes, join.theorem11_tree)
    assert not {"fk_graph", "assertion_keys", "auxiliary_attributes", "theorem11_tree"} & set(vars(explain))


def test_a_join_parsed_from_the_plan_notation_derives_its_facts():
    join = parse_plan(
        "ForeignKeyJoin root=l edges=[FkEdge(referencing=l, columns=[l_suppkey], referenced=s, key=[s_suppkey]), "
        "FkEdge(referencing=l, columns=[l_orderkey], referenced=o, key=[o_orderkey]), "
        "FkEdge(referencing=o, columns=[o_custkey], referenced=c, key=[c_custkey]), "
        "FkEdge(referencing=c, columns=[c_nationkey], referenced=n, key=[n_nationkey]), "
        "FkEdge(referencing=s, columns=[s_nationkey], referenced=n, key=[n_nationkey])] residual=None\n"
        "  Atom table=lineitem alias=l columns=[l_orderkey, l_suppkey] predicate=None\n"
        "  Atom table=supplier alias=s columns=[s_suppkey, s_nationkey] predicate=None\n"
        "  Atom table=orders alias=o columns=[o_orderkey, o_custkey] predicate=None\n"
        "  Atom table=customer alias=c columns=[c_custkey, c_nationkey] predicate=None\n"
        "  Atom table=nation alias=n columns=[n_nationkey] predicate=None")
    assert join.assertion_keys == {"l": ("n",)} and join.auxiliary_attributes == {"o": ("n",)}
    assert print_plan(join.theorem11_tree).startswith("BinaryJoin on=")
