"""RPAITree against a plain dict reference, plus the paper's usage patterns (RPAI §2.2, §3)."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from operators.structures.rpai_tree import RPAITree


class DictReference:
    """The obvious O(n) semantics of every RPAI tree operation, zero values dropped."""

    def __init__(self) -> None:
        self.entries: dict[int, int] = {}

    def put(self, key, value):
        self.entries[key] = value
        self.entries = {k: v for k, v in self.entries.items() if v != 0}

    def add(self, key, delta):
        self.put(key, self.entries.get(key, 0) + delta)

    def remove(self, key):
        return self.entries.pop(key)

    def get_sum(self, key):
        return sum(v for k, v in self.entries.items() if k <= key)

    def shift_keys(self, key, offset, inclusive):
        shifted: dict[int, int] = {}
        for k, v in self.entries.items():
            moves = k >= key if inclusive else k > key
            new_key = k + offset if moves else k
            shifted[new_key] = shifted.get(new_key, 0) + v
        self.entries = {k: v for k, v in shifted.items() if v != 0}

    def items(self):
        return sorted(self.entries.items())


keys = st.integers(-30, 30)
operations = st.lists(
    st.one_of(
        st.tuples(st.just("put"), keys, st.integers(-5, 5)),
        st.tuples(st.just("add"), keys, st.integers(-5, 5)),
        st.tuples(st.just("remove"), keys),
        st.tuples(st.just("shift"), keys, st.integers(-25, 25)),
        st.tuples(st.just("shift_inclusive"), keys, st.integers(-25, 25)),
    ),
    max_size=60,
)


def assert_same(tree: RPAITree, reference: DictReference, probe: int) -> None:
    tree.check_invariants()
    assert tree.height() <= 2 * math.log2(len(tree) + 1) + 1
    assert tree.items() == reference.items()
    assert len(tree) == len(reference.entries)
    assert tree.total() == sum(reference.entries.values())
    assert tree.get(probe) == reference.entries.get(probe, 0)
    assert (probe in tree) == (probe in reference.entries)
    assert tree.get_sum(probe) == reference.get_sum(probe)


@settings(max_examples=200, deadline=None)
@given(operations)
def test_every_operation_matches_the_dict_reference(steps):
    tree, reference = RPAITree(), DictReference()
    for step in steps:
        match step:
            case ("put", key, value):
                tree.put(key, value)
                reference.put(key, value)
            case ("add", key, delta):
                tree.add(key, delta)
                reference.add(key, delta)
            case ("remove", key):
                if key in reference.entries:
                    assert tree.remove(key) == reference.remove(key)
                else:
                    with pytest.raises(KeyError):
                        tree.remove(key)
            case ("shift", key, offset):
                tree.shift_keys(key, offset)
                reference.shift_keys(key, offset, inclusive=False)
            case ("shift_inclusive", key, offset):
                tree.shift_keys_inclusive(key, offset)
                reference.shift_keys(key, offset, inclusive=True)
        assert_same(tree, reference, probe=step[1])


@settings(max_examples=200, deadline=None)
@given(st.lists(keys, unique=True, max_size=40), keys, st.integers(-25, 25))
def test_get_sum_is_the_prefix_sum_at_every_key(inserted, shift_at, offset):
    tree, reference = RPAITree(), DictReference()
    for value, key in enumerate(inserted, start=1):
        tree.put(key, value)
        reference.put(key, value)
    tree.shift_keys(shift_at, offset)
    reference.shift_keys(shift_at, offset, inclusive=False)
    for probe in range(-60, 61):
        assert tree.get_sum(probe) == reference.get_sum(probe)


def tree_of(entries) -> RPAITree:
    tree = RPAITree()
    for key, value in entries:
        tree.put(key, value)
    return tree


def test_shift_keys_moves_only_keys_strictly_greater_than_the_given_key():
    tree = tree_of([(5, 1), (9, 2), (13, 3), (20, 4)])
    assert tree.shift_keys(9, 10) == 0
    assert tree.items() == [(5, 1), (9, 2), (23, 3), (30, 4)]


def test_shift_keys_inclusive_also_moves_the_given_key():
    tree = tree_of([(5, 1), (9, 2), (13, 3)])
    tree.shift_keys_inclusive(9, 10)
    assert tree.items() == [(5, 1), (19, 2), (23, 3)]


def test_positive_shift_on_a_large_tree_keeps_every_invariant():
    tree = tree_of((key, 1) for key in range(0, 2000, 2))
    tree.shift_keys(999, 7)
    tree.check_invariants()
    assert tree.items() == [(key, 1) for key in range(0, 1000, 2)] + [(key + 7, 1) for key in range(1000, 2000, 2)]


def test_monotone_negative_shift_merges_only_the_one_colliding_key():
    # §3.2.4: shifted keys stay above the unshifted ones except the lowest, which may meet its neighbour.
    tree = tree_of([(key, key) for key in range(10, 1000, 10)])
    assert tree.shift_keys(500, -10) == 1
    tree.check_invariants()
    assert tree.get(500) == 500 + 510
    assert 990 not in tree and tree.get(980) == 990
    assert len(tree) == 98


def test_negative_shift_that_keeps_order_reinserts_nothing():
    tree = tree_of([(key, 1) for key in range(0, 100, 10)])
    assert tree.shift_keys(45, -4) == 0
    assert tree.items()[4:6] == [(40, 1), (46, 1)]


def test_general_negative_shift_reorders_and_merges_crossing_keys():
    # Figure 5's worst case: the largest key is shifted below most of the tree.
    tree = tree_of([(key, 1) for key in range(1, 20, 2)] + [(20, 100)])
    assert tree.shift_keys(19, -15) == 1
    tree.check_invariants()
    assert tree.get(5) == 101
    assert tree.items()[-1] == (19, 1)

    many = tree_of([(key, 1) for key in range(10)])
    assert many.shift_keys(4, -7) == 5
    many.check_invariants()
    assert many.items() == [(-2, 1), (-1, 1), (0, 2), (1, 2), (2, 2), (3, 1), (4, 1)]


def test_values_that_cancel_out_remove_the_key():
    tree = tree_of([(1, 5), (2, 6)])
    tree.add(1, -5)
    tree.put(2, 0)
    tree.put(3, 0)
    assert tree.items() == [] and len(tree) == 0 and tree.total() == 0
    tree.check_invariants()


def test_removing_an_absent_key_names_the_key():
    with pytest.raises(KeyError, match="no key 7"):
        tree_of([(1, 1)]).remove(7)


def test_fraction_keys_stay_exact_through_shifts():
    tree = tree_of([(Fraction(1, 3), 1), (Fraction(2, 3), 2)])
    tree.shift_keys(Fraction(1, 2), Fraction(-1, 6))
    assert tree.items() == [(Fraction(1, 3), 1), (Fraction(1, 2), 2)]


def test_height_stays_logarithmic_for_sorted_insertion_and_deletion():
    tree = tree_of((key, 1) for key in range(4096))
    assert tree.height() <= 2 * math.log2(4097)
    for key in range(0, 4096, 3):
        tree.remove(key)
    tree.check_invariants()
    assert tree.height() <= 2 * math.log2(len(tree) + 1)


def test_check_invariants_reports_a_wrong_subtree_sum():
    tree = tree_of((key, 1) for key in range(10))
    tree._root.subtree_sum += 1
    with pytest.raises(AssertionError, match="subtree sum"):
        tree.check_invariants()


def test_check_invariants_reports_keys_out_of_order():
    tree = tree_of((key, 1) for key in range(10))
    tree._root.left.key += 100
    with pytest.raises(AssertionError, match="outside its BST range"):
        tree.check_invariants()


bids = st.lists(
    st.tuples(st.integers(1, 8), st.integers(1, 5), st.booleans()),  # price, volume, delete an earlier bid?
    max_size=60,
)


@settings(max_examples=200, deadline=None)
@given(bids)
def test_vwap_maintained_with_rpai_trees_matches_recomputation(stream):
    """Figure 2c with both maps as RPAI trees, against Figure 2a's naive re-evaluation."""
    live: list[tuple[int, int]] = []
    volume_by_price = RPAITree()  # map3: price -> SUM(volume)
    price_volume_by_rhs_sum = RPAITree()  # aggrIndex: rhs_sum -> SUM(price * volume)
    total_volume = 0
    for price, volume, delete in stream:
        if delete and live:
            (price, volume), weight = live.pop(len(live) // 2), -1
        else:
            live.append((price, volume))
            weight = 1
        rhs_sum = volume_by_price.get_sum(price)
        displaced = price_volume_by_rhs_sum.shift_keys(rhs_sum - volume_by_price.get(price), weight * volume)
        assert displaced <= 1  # §3.2.4: SUM(volume) is monotone in price
        volume_by_price.add(price, weight * volume)
        total_volume += weight * volume
        price_volume_by_rhs_sum.add(rhs_sum + weight * volume, weight * price * volume)
        price_volume_by_rhs_sum.check_invariants()

        maintained = price_volume_by_rhs_sum.total() - price_volume_by_rhs_sum.get_sum(0.75 * total_volume)
        recomputed = sum(
            p * v for p, v in live if 0.75 * total_volume < sum(v2 for p2, v2 in live if p2 <= p)
        )
        assert maintained == recomputed
