"""The treap of sorted groups (IEDyn's S_n and P_n) against a plain list: sums and walks of intervals."""

from __future__ import annotations

import pickle
import random

from operators.structures.sorted_groups import UNBOUNDED, SortedGroup, SortedGroups


def inside(value, low, low_inclusive, high, high_inclusive) -> bool:
    above = low is UNBOUNDED or low < value or (low_inclusive and low == value)
    below = high is UNBOUNDED or value < high or (high_inclusive and high == value)
    return above and below


def test_interval_sums_and_walks_match_a_plain_list():
    rng = random.Random(1)
    group, rows = SortedGroup(), {}
    for step in range(3000):
        key = rng.randint(0, 40)
        row = (key, rng.randint(0, 3))
        present = [r for r, w in rows.items() if w]
        if present and rng.random() < 0.45:
            row = rng.choice(present)
            weight = -rows[row] if rng.random() < 0.5 else -1
        else:
            weight = rng.randint(1, 3)
        group.add(row[0], row, weight)
        rows[row] = rows.get(row, 0) + weight
        rows = {r: w for r, w in rows.items() if w}
        if step % 10:
            continue
        bounds = [UNBOUNDED, *range(-1, 42)]
        low, high = rng.choice(bounds), rng.choice(bounds)
        low_inclusive, high_inclusive = rng.random() < 0.5, rng.random() < 0.5
        expected = sorted((r, w) for r, w in rows.items() if inside(r[0], low, low_inclusive, high, high_inclusive))
        walked = list(group.rows(low, low_inclusive, high, high_inclusive))
        assert [r[0] for r, _ in walked] == sorted(r[0] for r, _ in walked)  # in order of the sort value
        assert sorted(walked) == expected
        assert group.between(low, low_inclusive, high, high_inclusive) == sum(w for _, w in expected)
        assert group.total() == sum(rows.values())
    assert rows and group


def test_groups_drop_when_empty_and_pickle():
    groups = SortedGroups()
    groups.add((1,), 5, (5, "a"), 2)
    groups.add((2,), 3, (3, "b"), 1)
    copy = pickle.loads(pickle.dumps(groups))
    assert copy.get((1,)).between(UNBOUNDED, False, 6, False) == 2
    groups.add((1,), 5, (5, "a"), -2)
    assert groups.get((1,)) is None and list(groups.groups) == [(2,)]
