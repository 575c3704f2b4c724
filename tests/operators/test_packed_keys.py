"""The validator's packed keys (two integer key columns in one int) are exact: one key per pair, the
same key on every path, and a validator keyed so behaves as a plain model of set semantics."""

from __future__ import annotations

import random

import pytest

from catalog.ddl import catalog_from_ddl
from operators.runtime.packed_keys import MAX_WIDTH, PackedRowKey, key_for
from operators.runtime.row_fingerprints import row_fingerprints
from operators.runtime.stream import Update, open_stream, write_stream
from operators.runtime.validate import InvalidChangeError, Validator

CATALOG = catalog_from_ddl("""
CREATE TABLE item (i_order BIGINT NOT NULL, i_line INT NOT NULL, i_note VARCHAR(10), PRIMARY KEY (i_order, i_line));
CREATE TABLE pair (p_name VARCHAR(10), p_line INT, PRIMARY KEY (p_name, p_line));
""")
ITEM = CATALOG.table("item")


def test_only_a_key_of_two_integer_columns_is_packed():
    assert isinstance(key_for(ITEM), PackedRowKey)
    assert not isinstance(key_for(CATALOG.table("pair")), PackedRowKey)


def test_packing_is_one_to_one_and_reversible_at_every_width():
    rng = random.Random(3)
    key, state = key_for(ITEM), {}
    pairs = {(rng.randint(-300, 300), rng.choice([0, 1, 2, 5, 7, 40, 300, -1, 2**MAX_WIDTH, 2**20]))
             for _ in range(3000)}
    rows = [(a, b, None) for a, b in pairs]
    for width_rows in ([(1, 1, None)], [(1, 7, None)], [(1, 300, None)], [(1, 2**20, None)]):
        key.fit(width_rows, state)
        keys = list(map(key.of, rows))
        assert len(set(keys)) == len(pairs), "two pairs share a key"
        assert [key.unpacked(k) for k in keys] == [row[:2] for row in rows]
        assert sum(type(k) is int for k in keys) > 0 and sum(type(k) is tuple for k in keys) > 0
    assert key.width == 9  # 300's bits; 2**20 is past MAX_WIDTH and stays a tuple
    # a value that is not an int is never packed
    odd = [(1, None, None), (None, 1, None), (2, 1, None)]
    assert list(map(key.of, odd)) == [(1, None), (None, 1), (2 << 9) | 1]


def random_stream(rng: random.Random, n: int) -> list[Update]:
    """Inserts and deletes of item rows whose line numbers grow over the stream (so the packing widens
    while keys are stored; the last quarter's reach past ``MAX_WIDTH`` bits), with invalid changes
    mixed in: duplicate inserts, deletes of absent rows and of rows that differ from the stored one."""
    live: dict[tuple[int, int], tuple] = {}
    updates = []
    for seq in range(1, n + 1):
        top = 2 + seq * 40 // n if seq < n * 3 // 4 else 2**17
        choice = rng.random()
        if live and choice < 0.4:
            row = live.pop(rng.choice(list(live)))
            updates.append(Update(seq, "item", -1, row))
        elif live and choice < 0.45:
            row = live[rng.choice(list(live))]
            updates.append(Update(seq, "item", 1, row) if choice < 0.425 else Update(seq, "item", -1, row[:2] + ("other",)))
        elif choice < 0.5:
            updates.append(Update(seq, "item", -1, (rng.randint(-50, 400), rng.randint(0, top), "x")))
        else:
            row = (rng.randint(-50, 400), rng.randint(0, top), rng.choice(["a", "b", None]))
            live.setdefault(row[:2], row)
            updates.append(Update(seq, "item", 1, row))
    return updates


def model(updates: list[Update]) -> tuple[dict, list[int]]:
    """Set semantics by hand: the live rows' fingerprints by key pair, and the invalid changes' _seq."""
    live, invalid = {}, []
    for update in updates:
        key = update.row[:2]
        if update.op == 1 and key not in live:
            live[key] = update.row
        elif update.op == -1 and live.get(key) == update.row:
            del live[key]
        else:
            invalid.append(update.seq)
    return {key: row_fingerprints([row], ITEM)[0] for key, row in live.items()}, invalid


@pytest.mark.parametrize("size", [1, 7, 400])
def test_a_validator_with_packed_keys_keeps_set_semantics_on_a_random_stream(tmp_path, size):
    updates = random_stream(random.Random(size), 3000)
    expected, invalid = model(updates)
    write_stream(tmp_path, CATALOG, updates)
    validator = Validator(CATALOG, ["item"], "quarantine")
    rejected = []
    for batch in open_stream(tmp_path, CATALOG).batches(size, tables=["item"]):
        rejected += validator.check(batch)[1]
    assert expected and invalid
    assert [r.update.seq for r in rejected] == invalid
    assert validator.state()["item"] == expected
    stored = validator.fingerprints["item"]
    assert any(type(k) is int for k in stored) and any(type(k) is tuple for k in stored)
    assert validator._key_of["item"].width >= 5  # widened while keys were stored


def test_a_reason_shows_the_key_values_and_an_aborted_widening_batch_leaves_the_same_state():
    validator = Validator(CATALOG, ["item"])
    validator.check([Update(1, "item", 1, (5, 3, "a")), Update(2, "item", 1, (6, 1, "b"))])
    with pytest.raises(InvalidChangeError, match=r"duplicate primary key \(5, 3\)"):
        validator.check([Update(3, "item", 1, (5, 3, "c"))])
    before = validator.state()
    validated = validator.validate([Update(4, "item", 1, (7, 1000, "d")), Update(5, "item", -1, (6, 1, "b"))])
    assert validator._key_of["item"].width == 10  # widened by the batch, then the batch is aborted
    validator.abort(validated)
    assert validator.state() == before == {"item": {(5, 3): row_fingerprints([(5, 3, "a")], ITEM)[0],
                                                    (6, 1): row_fingerprints([(6, 1, "b")], ITEM)[0]}}
    with pytest.raises(InvalidChangeError, match=r"delete of an absent row \(no row with key \(7, 1000\)\)"):
        validator.check([Update(6, "item", -1, (7, 1000, "d"))])
