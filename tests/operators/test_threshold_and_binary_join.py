"""The threshold filter and the change-propagation join against a plain recomputation."""

from __future__ import annotations

import random
from collections import Counter

from operators.stages.base import Change, StageDescription, run_keyed
from operators.stages.binary_join import BinaryJoinStage
from operators.stages.join_select import JoinSelectStage
from operators.zset import apply_changes


def replay(stage, batches):
    states, result = {}, Counter()
    for batch in batches:
        apply_changes(result, run_keyed(stage, states, batch))
    return result


def test_threshold_filter_matches_recomputation_while_rows_and_the_threshold_move():
    rng = random.Random(4)
    for op in ("<", "<=", ">", ">=", "="):
        stage = JoinSelectStage("t", lambda row: row[1], op, ("k", "v"), StageDescription("t"))
        rows, q, batches, expected = Counter(), None, [], Counter()
        for _ in range(60):
            batch = []
            for _ in range(rng.randint(0, 4)):
                row = (rng.randint(0, 30), rng.randint(0, 9))
                if row in rows and rng.random() < 0.5:
                    rows[row] -= 1
                    rows += Counter()
                    batch.append(Change(0, row, -1))
                else:
                    rows[row] += 1
                    batch.append(Change(0, row, 1))
            if rng.random() < 0.4:
                new_q = rng.randint(0, 9)
                if q is not None:
                    batch.append(Change(1, (q,), -1))
                batch.append(Change(1, (new_q,), 1))
                q = new_q
            rng.shuffle(batch)
            batches.append(batch)
            compare = {"<": int.__lt__, "<=": int.__le__, ">": int.__gt__, ">=": int.__ge__, "=": int.__eq__}[op]
            expected = Counter({r: c for r, c in rows.items() if c > 0 and q is not None and compare(r[1], q)})
            assert replay(stage, batches) == expected, op


def test_binary_join_emits_each_new_pair_once_whatever_the_order():
    stage = BinaryJoinStage("j", (1,), (0,), ("a", "k", "k2", "b"), StageDescription("j"))
    left = [Change(0, (1, 7), 1), Change(0, (2, 7), 1)]
    right = [Change(1, (7, "x"), 1), Change(1, (7, "y"), 1)]
    together = replay(stage, [left + right])
    assert together == Counter({(1, 7, 7, "x"): 1, (1, 7, 7, "y"): 1, (2, 7, 7, "x"): 1, (2, 7, 7, "y"): 1})
    assert replay(stage, [right, left]) == together
    assert replay(stage, [left + right, [Change(0, (1, 7), -1)]]) == Counter({(2, 7, 7, "x"): 1, (2, 7, 7, "y"): 1})
