"""Unconstrained pairs, assertion keys and the fewest auxiliary attributes (AJU §3.2, Condition 5),
on the paper's Figure 4 and Figure 7 graphs and on TPC-H Q5 and Q9."""

from __future__ import annotations

from pathlib import Path

from catalog.tpch import tpch_catalog
from planner.compiler import compile_query
from planner.ir.fk_graph import assertion_keys, auxiliary_attributes, unconstrained_pairs
from planner.ir.maintenance import FkEdge, ForeignKeyJoin

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
