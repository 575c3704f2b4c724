"""Generalized join trees on the IEDyn paper's own examples (§3) and its benchmark queries (Table 1).

The paper's figures are lost in the text copy: Figure 2's T2 is rebuilt from the text (Def. 3.4's
example names its nodes, §4 its edges and predicates); T1 is the tree Example 3.6 describes, with
t(u,v) hanging directly under a node without u alone.
"""

from __future__ import annotations

import random

import attrs
import pytest

from catalog.orderbook import orderbook_catalog
from planner.ir.expressions import Column, columns
from planner.ir.gcq import Atom, Gcq, Inequality, inequality
from planner.ir.gcq_build import from_join_block, from_join_graph
from planner.ir.gjt import (
    GjtEdge,
    connex_subset,
    frontier,
    gjt_errors,
    interior,
    is_binary,
    leaf,
    node_at,
    render,
)
from planner.ir.gjt_plan import plan_gjt
from planner.ir.gjt_reduction import Witness, build_compatible_gjt, build_gjt
from planner.ir.gjt_rewrites import binarize, remove_implied_inequalities
from planner.ir.notation_parser import parse_plan
from planner.sql.statements import parse_sql

r, s, t = Atom("r", ("x", "y")), Atom("s", ("y", "z", "w")), Atom("t", ("u", "v"))
X_LT_Z, W_LT_U, Z_LT_U, X_LT_U = (inequality(a, "<", b) for a, b in ("xz", "wu", "zu", "xu"))
Q1 = Gcq((r, s, t), (X_LT_Z, W_LT_U))
Q2 = attrs.evolve(Q1, output=frozenset("yzwu"))
Q3 = Gcq((r, s, t), (X_LT_Z, Z_LT_U, X_LT_U))
Q4 = Gcq((r, s, t), (X_LT_Z, Z_LT_U))
TRIANGLE = Gcq((Atom("r", ("x", "y")), Atom("s", ("y", "z")), Atom("t", ("x", "z"))))

T2 = interior(
    {"y", "w"},
    interior({"y", "z", "w"}, leaf(s), GjtEdge(leaf(r), (X_LT_Z,))),
    GjtEdge(interior({"u"}, leaf(t)), (W_LT_U,)),
)
T1 = interior(
    {"y", "z", "w"},
    leaf(s),
    GjtEdge(leaf(r), (X_LT_Z,)),
    GjtEdge(leaf(t), (W_LT_U,)),
)


def vars_of(tree, connex) -> frozenset[str]:
    return frozenset().union(*(node_at(tree, p).label for p in connex))


# --- Def. 3.1 and Figure 2 -------------------------------------------------------------------


def test_figure_2_trees_are_gjts_for_q1():
    assert gjt_errors(T1, Q1) == []
    assert gjt_errors(T2, Q1) == []


def test_gjt_check_rejects_a_misplaced_predicate_and_a_broken_variable_path():
    misplaced = interior(
        {"y", "w"},
        GjtEdge(interior({"y", "z", "w"}, leaf(s), leaf(r)), (W_LT_U,)),
        GjtEdge(interior({"u"}, leaf(t)), (X_LT_Z,)),
    )
    errors = gjt_errors(misplaced, Q1)
    assert any("x < z" in e for e in errors) and any("w < u" in e for e in errors)
    # y in r and s, but the node between them lacks y.
    broken = interior({"z", "w"}, GjtEdge(leaf(r), (X_LT_Z,)), leaf(s), GjtEdge(leaf(t), (W_LT_U,)))
    assert "variable y occurs in disconnected nodes" in gjt_errors(broken, Q1)


def test_q1_is_acyclic_and_the_constructed_tree_satisfies_def_3_1():
    tree = build_gjt(Q1)
    assert not isinstance(tree, Witness)
    assert gjt_errors(tree, Q1) == []
    assert render(tree) == "\n".join(
        [
            "{u}",
            "  t(u,v)",
            "  [w < u] {w}",
            "    {w,y,z}",
            "      s(y,z,w)",
            "      [x < z] r(x,y)",
        ]
    )


def test_triangle_is_refused_with_its_three_edges_as_witness():
    plan = plan_gjt(TRIANGLE)
    assert plan.tree is None and not plan.acyclic
    assert set(plan.witness.hyperedges) == {frozenset("xy"), frozenset("yz"), frozenset("xz")}
    assert "cyclic" in str(plan) and "{x,y}" in str(plan)


# --- Def. 3.4, 3.5 and Example 3.6 --------------------------------------------------------------


def test_def_3_4_frontier_example():
    paper_connex = frozenset({(), (0,), (1,)})  # {y,w}, {y,z,w}, {u} of T2
    assert frontier(paper_connex) == {(0,), (1,)}


def test_example_3_6_q2_compatible_with_t2_not_t1():
    assert connex_subset(T2, Q2.out) == {(), (0,), (0, 0), (1,)}  # the largest: s(y,z,w) fits too
    assert connex_subset(T2, Q2.out, sibling_closed=True) == {(), (0,), (1,)}
    assert connex_subset(T1, Q2.out) is None


def test_example_3_6_projection_on_x_u_is_not_free_connex():
    q = attrs.evolve(Q1, output=frozenset("xu"))
    assert connex_subset(T1, q.out) is None and connex_subset(T2, q.out) is None
    plan = plan_gjt(q)
    assert plan.acyclic and not plan.free_connex
    assert gjt_errors(plan.tree, q) == []
    # the reduction guarded by {x, u} sticks with variables outside the output: the witness EXPLAIN shows
    leftover = plan.free_connex_witness
    assert leftover is not None and any(not h <= q.out for h in leftover.hyperedges)
    assert plan_gjt(Q2).free_connex_witness is None


def test_q2_gets_a_binary_strongly_compatible_tree():
    plan = plan_gjt(Q2)
    assert plan.free_connex and is_binary(plan.tree) and gjt_errors(plan.tree, Q2) == []
    assert vars_of(plan.tree, plan.connex) == Q2.out
    assert str(plan).splitlines()[1:] == [
        "free-connex acyclic; connex set (marked *) covers {u,w,y,z}",
        "enumeration delay: constant (at most one inequality per pair of atoms, Thm 5.5)",
        "{u} *",
        "  [w < u] {w} *",
        "    {w,y,z} *",
        "      {w,y,z} *",
        "        [x < z] r(x,y)",
        "        s(y,z,w)",
        "  {u} *",
        "    t(u,v)",
    ]


# --- Semantic acyclicity, Prop. 3.8 ---------------------------------------------------------------


def test_q3_is_cyclic_as_written():
    witness = build_gjt(Q3)
    assert isinstance(witness, Witness)
    assert set(witness.hyperedges) == {frozenset("xy"), frozenset("yz"), frozenset("u")}
    assert set(witness.predicates) == {X_LT_Z, Z_LT_U, X_LT_U}


def test_q3_made_acyclic_by_dropping_the_implied_inequality():
    reduced, removed = remove_implied_inequalities(Q3)
    assert removed == (X_LT_U,) and set(reduced.predicates) == set(Q4.predicates)
    plan = plan_gjt(Q3)
    assert plan.acyclic and plan.removed == (X_LT_U,)
    assert gjt_errors(plan.tree, Q4) == [] and gjt_errors(plan.tree, Q3) != []
    assert "removed as implied (Prop. 3.8): x < u" in str(plan)


def test_implication_needs_a_strict_link_for_a_strict_inequality():
    weak_chain = Gcq((r, s, t), (inequality("x", "<=", "z"), inequality("z", "<=", "u"), X_LT_U))
    assert remove_implied_inequalities(weak_chain)[1] == ()
    assert not plan_gjt(weak_chain).acyclic
    strict_chain = Gcq(
        (r, s, t), (inequality("x", "<", "z"), inequality("z", "<=", "u"), inequality("x", "<=", "u"))
    )
    assert remove_implied_inequalities(strict_chain)[1] == (Inequality("x", "<=", "u"),)


def test_a_cycle_of_inequalities_is_left_alone_and_refused():
    q = Gcq(
        (Atom("a", ("x",)), Atom("b", ("y",)), Atom("c", ("z",))),
        (inequality("x", "<", "y"), inequality("y", "<", "z"), inequality("z", "<", "x")),
    )
    plan = plan_gjt(q)
    assert plan.removed == () and plan.tree is None
    assert len(plan.witness.predicates) == 3


# --- Prop. 3.9 ------------------------------------------------------------------------------------


def test_binarize_splits_t1_into_a_chain_that_is_still_a_gjt():
    assert not is_binary(T1)
    tree = binarize(T1)
    assert is_binary(tree) and gjt_errors(tree, Q1) == []
    assert render(tree) == "\n".join(
        [
            "{w,y,z}",
            "  [x < z] r(x,y)",
            "  {w,y,z}",
            "    [w < u] t(u,v)",
            "    s(y,z,w)",
        ]
    )


def test_binarize_groups_children_outside_the_connex_set():
    tree = interior(
        {"y", "z", "w"}, leaf(s), GjtEdge(leaf(r), (X_LT_Z,)), GjtEdge(interior({"u"}, leaf(t)), (W_LT_U,))
    )
    assert connex_subset(tree, Q2.out) is not None
    assert connex_subset(tree, Q2.out, sibling_closed=True) is None
    binary = binarize(tree, Q2.out)
    assert is_binary(binary) and gjt_errors(binary, Q2) == []
    strong = connex_subset(binary, Q2.out, sibling_closed=True)
    assert strong is not None and vars_of(binary, strong) == Q2.out


def test_binarize_leaves_a_binary_tree_as_it_is():
    assert binarize(T2, Q2.out) is T2


# --- IEDyn Table 1 ----------------------------------------------------------------------------------

R3, S3, T3 = Atom("R", tuple("abc")), Atom("S", tuple("def")), Atom("T", tuple("ghi"))
RK, SK, TK = Atom("R", tuple("abck")), Atom("S", tuple("defk")), Atom("T", tuple("ghik"))
A_D, E_G, D_G = inequality("a", "<", "d"), inequality("e", "<", "g"), inequality("d", "<", "g")
TABLE_1 = {
    1: Gcq((R3, S3), (A_D,)),
    2: Gcq((RK, SK), (A_D,)),
    3: Gcq((R3, S3, T3), (A_D, E_G)),
    4: Gcq((R3, S3, T3), (A_D, D_G)),
    5: Gcq((RK, SK, T3), (A_D, D_G)),
    6: Gcq((R3, SK, TK), (A_D, D_G)),
}
for n, (base, out) in {
    7: (4, "abdefgh"),
    8: (5, "adefghk"),
    9: (6, "defghk"),
    10: (4, "bcefhi"),
    11: (5, "bcefhi"),
    12: (6, "bcefhi"),
}.items():
    TABLE_1[n] = attrs.evolve(TABLE_1[base], output=frozenset(out))


@pytest.mark.parametrize("n", sorted(TABLE_1))
def test_table_1_classification(n):
    """§6: all twelve are acyclic; Q1–Q9 free-connex (Q1–Q6 are full), Q10–Q12 not."""
    q = TABLE_1[n]
    plan = plan_gjt(q)
    assert plan.acyclic and gjt_errors(plan.tree, q) == [] and is_binary(plan.tree)
    assert plan.free_connex == (n <= 9)
    if plan.free_connex:
        assert vars_of(plan.tree, plan.connex) == q.out


def test_the_iedyn_three_way_query_with_a_less_than_d_e_less_than_g_d_less_than_g():
    q = Gcq((R3, S3, T3), (A_D, E_G, D_G))
    plan = plan_gjt(q)
    assert plan.removed == () and plan.free_connex
    # S and T share two inequalities, so they must sit on one edge (the case where IEDyn only
    # promises logarithmic delay).
    assert "[d < g ∧ e < g] {d,e} *" in str(plan)
    assert q.crowded_pairs() == (("S", "T"),)
    assert "enumeration delay: logarithmic; more than one inequality between S-T" in str(plan)
    assert TABLE_1[3].crowded_pairs() == () and "delay: constant" in str(plan_gjt(TABLE_1[3]))


def test_guarded_construction_is_compatible_where_the_plain_one_is_not():
    q = TABLE_1[8]
    assert connex_subset(build_compatible_gjt(q), q.out) is not None
    assert connex_subset(build_gjt(q), q.out) is None


# --- Reading plans ------------------------------------------------------------------------------


def test_join_block_equalities_become_shared_variables():
    plan = parse_plan("""
Filter condition=r.x < s.z and r.y = s.y and s.w between t.u and t.v and r.x > 3
  Join[cross]
    Join[cross]
      Scan table=r alias=r columns=[x, y]
      Scan table=s alias=s columns=[y, z, w]
    Scan table=t alias=t columns=[u, v]
""")
    q = from_join_block(plan)
    assert [a.variables for a in q.atoms] == [("r.x", "r.y"), ("r.y", "s.z", "s.w"), ("t.u", "t.v")]
    assert set(q.predicates) == {
        inequality("r.x", "<", "s.z"),
        inequality("t.u", "<=", "s.w"),
        inequality("s.w", "<=", "t.v"),
    }
    assert [alias for alias, _ in q.atom_filters] == ["r"]
    assert plan_gjt(q).acyclic


def test_join_block_refuses_arithmetic_across_relations_other_than_an_offset():
    plan = parse_plan("""
Filter condition=r.x * 2 < s.z + 1
  Join[cross]
    Scan table=r alias=r columns=[x]
    Scan table=s alias=s columns=[z]
""")
    with pytest.raises(ValueError, match="neither an equality nor an inequality"):
        from_join_block(plan)


@pytest.mark.parametrize("condition, expected", [
    ("r.x < s.z + 1", Inequality("r.x", "<", "s.z", 1)),
    ("r.x - s.z <= 5", Inequality("r.x", "<=", "s.z", 5)),
    ("r.x + 1 > s.z - 2", Inequality("s.z", "<", "r.x", 3)),
])
def test_join_block_reads_band_offsets(condition, expected):
    plan = parse_plan(f"""
Filter condition={condition}
  Join[cross]
    Scan table=r alias=r columns=[x]
    Scan table=s alias=s columns=[z]
""")
    assert from_join_block(plan).predicates == (expected,)


def test_prop_3_8_neither_drops_nor_uses_an_offset_inequality():
    q = Gcq((r, s, t), (X_LT_Z, Z_LT_U, Inequality("x", "<", "u", 1)))
    assert remove_implied_inequalities(q) == (q, ())
    q = Gcq((r, s, t), (X_LT_Z, Inequality("z", "<", "u", 1), X_LT_U))
    assert remove_implied_inequalities(q) == (q, ())


def test_join_graph_reads_classes_and_pushed_selections():
    graph = parse_plan("""
JoinGraph conditions=[r.x > s.z] join_classes=[[r.y, s.y]]
  Atom table=r alias=r columns=[x, y] predicate=r.x > 3
  Atom table=s alias=s columns=[y, z]
""")
    q = from_join_graph(graph, output=[Column("r", "x")])
    assert q.atoms[1].variables == ("r.y", "s.z") and q.predicates == (inequality("s.z", "<", "r.x"),)
    assert q.out == {"r.x"} and q.atom_filters[0][0] == "r"


# --- Without predicates: the classical GYO criteria, on random queries --------------------------


def classical_acyclic(hyperedges: list[frozenset[str]]) -> bool:
    """GYO: drop vertices in one edge only, and edges inside another; acyclic iff nothing is left."""
    edges = [set(e) for e in hyperedges]
    changed = True
    while changed:
        changed = False
        for e in edges:
            lonely = {v for v in e if sum(v in f for f in edges) == 1}
            if lonely:
                e -= lonely
                changed = True
        for i, e in enumerate(edges):
            if not e or any(j != i and e <= f for j, f in enumerate(edges)):
                del edges[i]
                changed = True
                break
    return not edges


def test_verdicts_match_gyo_and_the_free_connex_criterion_without_predicates():
    rng = random.Random(7)
    seen = {(True, True): 0, (True, False): 0, (False, False): 0}
    for _ in range(400):
        atoms = tuple(
            Atom(f"a{i}", tuple(sorted(rng.sample("pqrstu", rng.randint(1, 3)))))
            for i in range(rng.randint(2, 4))
        )
        variables = sorted(set().union(*(a.variables for a in atoms)))
        q = Gcq(atoms, (), frozenset(rng.sample(variables, rng.randint(0, min(3, len(variables))))))
        acyclic = classical_acyclic([a.var_set for a in atoms])
        free_connex = acyclic and classical_acyclic([a.var_set for a in atoms] + [q.out])
        plan = plan_gjt(q)
        assert (plan.acyclic, plan.free_connex) == (acyclic, free_connex), str(q)
        if plan.acyclic:
            assert gjt_errors(plan.tree, q) == [] and is_binary(plan.tree)
        seen[acyclic, free_connex] += 1
    assert all(seen.values()), seen  # every verdict occurred


@pytest.mark.parametrize(
    ("select", "free_connex"),
    [("x.broker_id, x.t, x.price, y.t, y.price", True), ("x.broker_id, x.price, y.price", False)],
)
def test_broker_self_join_from_sql(select, free_connex):
    """The issue's broker query: equal brokers, later orders. Keeping the compared times in the
    output makes it free-connex; dropping them leaves two non-output times joined by ``<`` that no
    connex set can reach without adding them (the π_{x,u}(Q1) situation)."""
    sql = f"select {select} from bids x, bids y where x.broker_id = y.broker_id and x.t > y.t"
    project = parse_sql(sql, orderbook_catalog())
    q = from_join_block(project.child, [c for item in project.items for c in columns(item.expr)])
    assert q.atoms[0].variables[2] == q.atoms[1].variables[2] == "x.broker_id"
    assert q.predicates == (inequality("y.t", "<", "x.t"),)
    plan = plan_gjt(q)
    assert plan.acyclic and plan.free_connex == free_connex
    assert gjt_errors(plan.tree, q) == []


def test_random_queries_with_inequalities_get_valid_binary_trees_and_exact_connex_sets():
    """Soundness on random GCQs: every tree returned is a binary GJT for the reduced query, and a
    free-connex verdict comes with a sibling-closed connex set covering exactly out(Q)."""
    rng = random.Random(11)
    verdicts = set()
    for _ in range(400):
        atoms = tuple(
            Atom(f"a{i}", tuple(sorted(rng.sample("pqrstuvw", rng.randint(1, 4)))))
            for i in range(rng.randint(2, 5))
        )
        variables = sorted(set().union(*(a.variables for a in atoms)))
        pairs = [rng.sample(variables, 2) for _ in range(rng.randint(0, 3))] if len(variables) > 1 else []
        predicates = {inequality(a, rng.choice(["<", "<="]), b) for a, b in pairs}
        q = Gcq(atoms, tuple(predicates), frozenset(rng.sample(variables, rng.randint(0, len(variables)))))
        plan = plan_gjt(q)
        if plan.acyclic:
            assert gjt_errors(plan.tree, plan.reduced) == [] and is_binary(plan.tree), str(q)
        if plan.free_connex:
            assert vars_of(plan.tree, plan.connex) == q.out
            assert connex_subset(plan.tree, q.out, sibling_closed=True) == plan.connex
        verdicts.add((plan.acyclic, plan.free_connex))
    assert verdicts == {(True, True), (True, False), (False, False)}
