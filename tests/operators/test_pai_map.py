"""PAIMap against recomputation of Example 2.1 and its range-predicate variant (RPAI §2.1.3)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from operators.structures.pai_map import PAIMap
from operators.structures.rpai_tree import RPAITree

rows = st.lists(
    st.tuples(st.integers(1, 4), st.integers(-3, 3), st.booleans()),  # A, B, delete an earlier row?
    max_size=60,
)


def replay(stream, on_change):
    """Feed a stream of inserts and deletes of live rows ``(A, B)`` to ``on_change(a, b, weight, live)``."""
    live: list[tuple[int, int]] = []
    for a, b, delete in stream:
        if delete and live:
            (a, b), weight = live.pop(len(live) // 2), -1
        else:
            live.append((a, b))
            weight = 1
        on_change(a, b, weight, live)


def group_sums(live):
    inner: dict[int, int] = {}
    outer: dict[int, int] = {}
    for a, b in live:
        inner[a] = inner.get(a, 0) + b
        outer[a] = outer.get(a, 0) + a * b
    return inner, outer


@settings(max_examples=200, deadline=None)
@given(rows)
def test_example_2_1_matches_recomputation_after_every_change(stream):
    pai = PAIMap()

    def on_change(a, b, weight, live):
        pai.update(a, inner_delta=weight * b, outer_delta=weight * a * b)
        inner, outer = group_sums(live)
        for group in range(1, 5):
            assert pai.inner(group) == inner.get(group, 0)
            assert pai.outer(group) == outer.get(group, 0)
        lhs = 0.5 * sum(b for _, b in live)
        recomputed = sum(a * b for a, b in live if lhs == inner[a])
        assert pai.outer_total_at(lhs) == recomputed
        expected_index: dict[int, int] = {}
        for group, value in inner.items():
            expected_index[value] = expected_index.get(value, 0) + outer[group]
        assert pai.index.items() == sorted((k, v) for k, v in expected_index.items() if v != 0)

    replay(stream, on_change)


@settings(max_examples=200, deadline=None)
@given(rows)
def test_an_rpai_tree_index_answers_a_range_predicate(stream):
    """``0.5 * SUM(r1.B) < SUM(r2.B WHERE r2.A = r.A)``: point updates, result by prefix sum."""
    index = RPAITree()
    pai = PAIMap(index)

    def on_change(a, b, weight, live):
        pai.update(a, inner_delta=weight * b, outer_delta=weight * a * b)
        index.check_invariants()
        lhs = 0.5 * sum(b for _, b in live)
        inner, _ = group_sums(live)
        recomputed = sum(a * b for a, b in live if lhs < inner[a])
        assert index.total() - index.get_sum(lhs) == recomputed

    replay(stream, on_change)


def test_groups_whose_aggregates_cancel_are_dropped():
    pai = PAIMap()
    pai.update("x", inner_delta=3, outer_delta=6)
    pai.update("x", inner_delta=-3, outer_delta=-6)
    assert len(pai) == 0 and len(pai.index) == 0
    assert pai.inner("x") == 0 and pai.outer_total_at(0) == 0


def test_groups_sharing_an_inner_value_share_one_index_entry():
    pai = PAIMap()
    pai.update("x", inner_delta=4, outer_delta=10)
    pai.update("y", inner_delta=4, outer_delta=1)
    assert pai.outer_total_at(4) == 11
    pai.update("y", inner_delta=1, outer_delta=0)  # an inner-only tuple moves y's share alone
    assert pai.index.items() == [(4, 10), (5, 1)]
