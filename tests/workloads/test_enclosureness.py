"""Enclosureness λ (AJU §1): the paper's example streams, and the fast count against plain definitions."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from catalog.schema import Catalog, Column, Table
from operators.runtime.stream import Update
from planner.workloads.enclosureness import (
    StreamLifespanError,
    enclosureness,
    interval_enclosureness,
    lifespans,
    stream_enclosureness,
)

INF = math.inf

CATALOG = Catalog.of(
    [
        Table("r", (Column("x", "int", False), Column("y", "int", False)), primary_key=("x",)),
        Table("s", (Column("y", "int", False),), primary_key=("y",)),
        Table("bag", (Column("v", "int"),)),
    ]
)


def stream(*changes: tuple[str, int, tuple]) -> list[Update]:
    """Updates numbered 1, 2, ... from ``(table, op, row)`` triples."""
    return [Update(seq, table, op, row) for seq, (table, op, row) in enumerate(changes, start=1)]


def greedy_reference(intervals: list[tuple[float, float]]) -> list[int]:
    """λ(i) by the O(n²) definition: filter what i contains, then earliest-end-first."""
    counts = []
    for start, end in intervals:
        inside = sorted((e, s) for s, e in intervals if start <= s and e <= end)
        taken, last_end = 0, -INF
        for e, s in inside:
            if s >= last_end:
                taken, last_end = taken + 1, e
        counts.append(taken)
    return counts


def brute_force_reference(intervals: list[tuple[float, float]]) -> list[int]:
    """λ(i) straight from the formula: the largest pairwise-disjoint subset of the intervals inside i."""

    def disjoint(a, b):
        return a[1] <= b[0] or b[1] <= a[0]

    counts = []
    for start, end in intervals:
        inside = [j for j in intervals if start <= j[0] and j[1] <= end]
        counts.append(
            max(
                size
                for size in range(1, len(inside) + 1)
                for subset in itertools.combinations(inside, size)
                if all(disjoint(a, b) for a, b in itertools.combinations(subset, 2))
            )
        )
    return counts


# Endpoints from a small range so that equal, touching and nested intervals are common.
endpoint = st.sampled_from([-INF, 0, 1, 2, 3, 4, 5, 6, INF])
interval = st.tuples(endpoint, endpoint).filter(lambda pair: pair[0] < pair[1])


@settings(max_examples=400, deadline=None)
@given(st.lists(interval, min_size=1, max_size=25))
def test_fast_count_equals_the_quadratic_greedy_on_every_interval(intervals):
    starts, ends = zip(*intervals, strict=True)
    assert interval_enclosureness(starts, ends).tolist() == greedy_reference(intervals)


@settings(max_examples=200, deadline=None)
@given(st.lists(interval, min_size=1, max_size=7))
def test_fast_count_equals_the_largest_disjoint_subset_by_brute_force(intervals):
    starts, ends = zip(*intervals, strict=True)
    assert interval_enclosureness(starts, ends).tolist() == brute_force_reference(intervals)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 200), st.integers(1, 40)), min_size=1, max_size=300))
def test_fast_count_equals_the_quadratic_greedy_on_larger_families(pairs):
    intervals = [(float(start), float(start + length)) for start, length in pairs]
    assert enclosureness(intervals) == pytest.approx(sum(greedy_reference(intervals)) / len(intervals))


def test_touching_intervals_are_disjoint_because_lifespans_are_open():
    assert interval_enclosureness([0, 0, 1], [2, 1, 2]).tolist() == [2, 1, 1]


def test_a_lifespan_open_at_the_end_contains_later_open_ones_but_they_all_overlap():
    assert interval_enclosureness([0, 1, 2], [INF, INF, INF]).tolist() == [1, 1, 1]


def test_a_lifespan_open_at_the_end_counts_the_disjoint_closed_ones_after_it():
    assert interval_enclosureness([0, 1, 3, 5], [INF, 2, 4, INF]).tolist() == [3, 1, 1, 1]


def test_identical_intervals_contain_each_other_but_count_once():
    assert interval_enclosureness([0, 0], [1, 1]).tolist() == [1, 1]


def test_empty_or_nan_intervals_are_refused():
    with pytest.raises(ValueError, match=r"interval 1 \(3.0, 3.0\) is empty"):
        interval_enclosureness([0, 3], [1, 3])
    with pytest.raises(ValueError, match="interval 0"):
        interval_enclosureness([math.nan], [1])
    with pytest.raises(ValueError, match="no intervals"):
        enclosureness([])
    with pytest.raises(ValueError, match=r"\(start, end\) pairs, got an array of shape \(1, 3\)"):
        enclosureness([(0, 1, 2)])
    with pytest.raises(ValueError, match="no intervals"):
        stream_enclosureness([], CATALOG)


def test_insert_only_stream_has_enclosureness_one():
    updates = stream(*(("s", 1, (y,)) for y in range(5)))
    assert lifespans(updates, CATALOG) == [(y + 1, INF) for y in range(5)]
    assert stream_enclosureness(updates, CATALOG) == 1.0


def test_fifo_stream_has_enclosureness_one():
    updates = stream(
        ("s", 1, (1,)), ("s", 1, (2,)), ("s", -1, (1,)), ("s", 1, (3,)), ("s", -1, (2,)), ("s", -1, (3,))
    )
    assert lifespans(updates, CATALOG) == [(1, 3), (2, 5), (4, 6)]
    assert stream_enclosureness(updates, CATALOG) == 1.0


def test_lifo_stack_is_nested_but_has_enclosureness_one_since_nothing_inside_is_disjoint():
    inserts = [("s", 1, (y,)) for y in range(4)]
    deletes = [("s", -1, (y,)) for y in reversed(range(4))]
    assert stream_enclosureness(stream(*inserts, *deletes), CATALOG) == 1.0


def test_a_tuple_deleted_and_inserted_again_inside_a_long_lifespan_raises_enclosureness():
    # Figure 1(d): r's tuple lives while s's tuple 7 comes and goes three times (four lifespans).
    flips = [("s", 1, (7,)), ("s", -1, (7,))] * 3
    updates = stream(("r", 1, (1, 7)), *flips, ("r", -1, (1, 7)))
    assert lifespans(updates, CATALOG) == [(1, 8), (2, 3), (4, 5), (6, 7)]
    assert stream_enclosureness(updates, CATALOG) == (3 + 1 + 1 + 1) / 4


def test_lower_bound_construction_of_section_4_has_enclosureness_n_plus_one_over_two():
    # AJU §4: n² matrix tuples live to the end while n vectors of n tuples each come and go.
    n = 3
    matrix = [("r", 1, (x * n + y, y)) for x in range(n) for y in range(n)]
    vectors = [change for _ in range(n) for op in (1, -1) for change in (("s", op, (y,)) for y in range(n))]
    assert stream_enclosureness(stream(*matrix, *vectors), CATALOG) == (n**3 + n**2) / (2 * n**2)


def test_a_table_without_primary_key_identifies_tuples_by_the_whole_row():
    updates = stream(("bag", 1, (1,)), ("bag", 1, (2,)), ("bag", -1, (1,)))
    assert lifespans(updates, CATALOG) == [(1, 3), (2, INF)]


def test_a_table_without_primary_key_has_one_lifespan_per_copy_of_a_row():
    """Bag semantics: a repeated row is a second tuple; a delete closes the latest copy."""
    updates = stream(("bag", 1, (1,)), ("bag", 1, (1,)), ("bag", -1, (1,)), ("bag", -1, (1,)))
    assert lifespans(updates, CATALOG) == [(1, 4), (2, 3)]
    with pytest.raises(StreamLifespanError, match="deletes key"):
        lifespans(updates + [Update(5, "bag", -1, (1,))], CATALOG)


def test_table_names_are_matched_case_insensitively_like_the_catalog():
    updates = stream(("S", 1, (1,)), ("s", -1, (1,)))
    assert lifespans(updates, CATALOG) == [(1, 2)]


@pytest.mark.parametrize(
    ("updates", "message"),
    [
        (stream(("s", 1, (1,)), ("s", 1, (1,))), r"_seq 2 .*inserts key 1 of table s, which is already present"),
        (stream(("s", -1, (1,))), r"_seq 1 .*deletes key 1 of table s, which is not present"),
        (stream(("r", 1, (1, 2)), ("r", -1, (1, 3))), r"_seq 2 .*differs from the present \(1, 2\)"),
        ([Update(2, "s", 1, (1,)), Update(1, "s", -1, (1,))], r"not in _seq order: _seq 1 \(s\) after 2"),
        (stream(("s", 2, (1,))), r"op is 2, must be \+1 or -1"),
    ],
)
def test_a_stream_breaking_set_semantics_has_no_lifespans(updates, message):
    with pytest.raises(StreamLifespanError, match=message):
        lifespans(updates, CATALOG)
