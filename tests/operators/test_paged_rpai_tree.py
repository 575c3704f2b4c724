"""The RPAI tree in pages (operators/structures/paged_rpai_tree.py) against the dict reference and the
in-memory RPAITree, and the pages a change touches."""

from __future__ import annotations

import math
import random
from fractions import Fraction

import pytest
from hypothesis import given, settings

from operators.structures.page_store import DictBackend, PageStore
from operators.structures.paged_rpai_tree import PagedRPAITree
from operators.structures.rpai_tree import RPAITree
from tests.operators.test_rpai_tree import DictReference, operations


class SmallPages(PagedRPAITree):
    """Five keys a leaf and five children a page: every few operations split a page, or merge one left
    with one entry into its neighbour (or share their entries when they do not fit one page)."""

    LEAF_CAPACITY = 5
    FANOUT = 5


def paged(kind: type[PagedRPAITree] = SmallPages) -> PagedRPAITree:
    numbers = iter(range(10**9))
    return kind(PageStore(DictBackend()), "root", lambda: f"p{next(numbers)}")


def assert_same(tree: PagedRPAITree, reference: DictReference, probe) -> None:
    tree.check_invariants()
    assert tree.items() == reference.items()
    assert len(tree) == len(reference.entries)
    assert tree.total() == sum(reference.entries.values())
    for key in (probe - 1, probe, probe + 1):
        assert tree.get(key) == reference.entries.get(key, 0)
        assert tree.get_sum(key) == reference.get_sum(key)


@settings(max_examples=300, deadline=None)
@given(operations)
def test_every_operation_matches_the_dict_reference(steps):
    tree, reference = paged(), DictReference()
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
                    with pytest.raises(KeyError, match=f"no key {key}"):
                        tree.remove(key)
            case ("shift", key, offset):
                assert tree.shift_keys(key, offset) == RPAITree.shift_keys(_memory(reference), key, offset)
                reference.shift_keys(key, offset, inclusive=False)
            case ("shift_inclusive", key, offset):
                tree.shift_keys_inclusive(key, offset)
                reference.shift_keys(key, offset, inclusive=True)
        assert_same(tree, reference, probe=step[1])


def _memory(reference: DictReference) -> RPAITree:
    tree = RPAITree()
    for key, value in reference.items():
        tree.put(key, value)
    return tree


def test_a_prefix_sum_index_under_random_inserts_and_deletes_equals_the_in_memory_tree():
    """The VWAP pattern (aggregate_index.PrefixAggregateIndex): each insert or delete shifts the keys
    above its own by its amount, exact Fractions, ~300 keys in pages of five, four levels deep; both trees
    stay equal, and end empty."""
    rng = random.Random(3)
    trees = paged(), RPAITree()
    for step in range(1200):
        if len(trees[1]) and (step % 3 == 0 or step > 900):
            q = rng.choice(trees[1].items())[0]
            amount, delta = -Fraction(1, 7), -trees[1].get(q)
        else:
            q, amount = Fraction(rng.randrange(1000), rng.choice((1, 3))), Fraction(1, 7)
            delta = rng.randrange(1, 9)
        for tree in trees:
            tree.shift_keys(q, amount)
            tree.add(q, delta)
        if step % 200 == 0:
            trees[0].check_invariants()
            assert trees[0].items() == trees[1].items()
    while len(trees[1]):
        key = trees[1].items()[0][0]
        assert trees[0].remove(key) == trees[1].remove(key)
    assert trees[0].items() == [] and not trees[0].pages.get("root")


def test_a_change_touches_log_b_pages_not_the_tree():
    """After 20 000 keys in pages of 64, a batch of 50 adds and shifts reads and writes a few pages per
    change (the root path), and the count does not grow with the tree."""
    counts = []
    for size in (2_000, 20_000):
        tree = paged(PagedRPAITree)
        for key in range(size):
            tree.add(key * 10, 1)
        tree.pages.flush()
        store = tree.pages = PageStore(tree.pages.backend)  # a new batch: nothing cached
        rng = random.Random(size)
        for _ in range(50):
            key = rng.randrange(size) * 10 + 5
            tree.shift_keys(key, 1)
            tree.add(key + 1, 1)
        store.flush()
        pages = len(store.backend.pages)
        assert store.pages_read <= 50 * (2 + math.ceil(math.log(size, 16)))
        assert store.pages_written <= store.pages_read < pages
        counts.append(store.pages_read + store.pages_written)
    assert counts[1] < 2 * counts[0], counts
