"""The live-tuple stages give the same output for any order of a key's changes within a batch."""

from __future__ import annotations

import itertools
import random
from collections import Counter

from operators.stages.base import Change, StageDescription
from operators.stages.foreign_key import ForeignKeyLookupStage, LiveTupleStage
from operators.zset import apply_changes

# orders(o_orderkey, o_custkey) looking up customer(c_custkey, c_name) by o_custkey
LOOKUP = ForeignKeyLookupStage("live o", (1,), (0,), ("o_orderkey", "o_custkey", "c_custkey", "c_name"), StageDescription("live o"))


def run(stage, batches):
    """Feed batches through one stage, keeping per-key state; return the accumulated output multiset."""
    states, result = {}, Counter()
    for batch in batches:
        by_key = {}
        for change in batch:
            by_key.setdefault(stage.key_of(change.port, change.row), []).append(change)
        for key, changes in by_key.items():
            new_state, out = stage.process(key, states.get(key), changes)
            states[key] = new_state
            apply_changes(result, out)
    return result


def test_a_child_turning_alive_emits_its_whole_group_and_dying_retracts_it():
    orders = [Change(0, (10, 1), 1), Change(0, (11, 1), 1)]
    alive = run(LOOKUP, [orders, [Change(1, (1, "ann"), 1)]])
    assert alive == Counter({(10, 1, 1, "ann"): 1, (11, 1, 1, "ann"): 1})
    dead = run(LOOKUP, [orders, [Change(1, (1, "ann"), 1)], [Change(1, (1, "ann"), -1)]])
    assert dead == Counter()


def test_dangling_foreign_key_waits_for_its_parent():
    out = run(LOOKUP, [[Change(0, (10, 7), 1)], [Change(0, (12, 7), 1)], [Change(1, (7, "zed"), 1)]])
    assert out == Counter({(10, 7, 7, "zed"): 1, (12, 7, 7, "zed"): 1})


def test_lookup_output_does_not_depend_on_the_order_within_a_batch():
    history = [[Change(0, (10, 1), 1), Change(1, (1, "ann"), 1)]]
    batch = [Change(0, (10, 1), -1), Change(0, (11, 1), 1), Change(1, (1, "ann"), -1), Change(1, (1, "anne"), 1)]
    expected = run(LOOKUP, history + [batch])
    for permutation in itertools.permutations(batch):
        assert run(LOOKUP, history + [list(permutation)]) == expected
    assert expected == Counter({(11, 1, 1, "anne"): 1})


def test_live_tuple_counter_needs_every_child():
    # lineitem(l_key, l_order, l_supp) with children orders (port 1) and supplier (port 2);
    # messages carry l_key + the foreign key column + the child's subtree row
    stage = LiveTupleStage("live l", (0,), 1, (2, 2), ("l_key", "l_order", "l_supp", "o_key", "s_key"), StageDescription("live l"))
    row = Change(0, (1, 100, 200), 1)
    on_order = Change(1, (1, 100, 100), 1)
    on_supplier = Change(2, (1, 200, 200), 1)
    assert run(stage, [[row, on_order]]) == Counter()
    assert run(stage, [[row, on_order], [on_supplier]]) == Counter({(1, 100, 200, 100, 200): 1})
    gone = Change(2, (1, 200, 200), -1)
    assert run(stage, [[row, on_order], [on_supplier], [gone]]) == Counter()
    shuffled = [row, on_supplier, on_order]
    random.Random(3).shuffle(shuffled)
    assert run(stage, [shuffled]) == Counter({(1, 100, 200, 100, 200): 1})


def test_assertion_key_reached_along_two_paths_must_be_one_tuple():
    """AJU Figure 6: a tuple alive on both children is live only if both paths reach the same R1 tuple."""
    # R4(k, fk2, fk3) with children R2 (port 1) and R3 (port 2); subtree rows R2 = (k2, x1), R3 = (k3, x1)
    # laid out as R4 + R2 + R3 = (k, fk2, fk3, k2, x1, k3, x1'): x1 sits at positions 4 and 6.
    stage = LiveTupleStage("live R4", (0,), 1, (2, 2), ("k", "fk2", "fk3", "k2", "x1", "k3", "x1"), StageDescription("live R4"),
                           assertions=((4, 6),))
    row = Change(0, (1, 20, 30), 1)
    same = [Change(1, (1, 20, 20, 5), 1), Change(2, (1, 30, 30, 5), 1)]
    different = [Change(1, (1, 20, 20, 5), 1), Change(2, (1, 30, 30, 6), 1)]
    assert run(stage, [[row, *same]]) == Counter({(1, 20, 30, 20, 5, 30, 5): 1})
    assert run(stage, [[row, *different]]) == Counter()
    fixed = [Change(2, (1, 30, 30, 6), -1), Change(2, (1, 30, 30, 5), 1)]
    assert run(stage, [[row, *different], fixed]) == Counter({(1, 20, 30, 20, 5, 30, 5): 1})
