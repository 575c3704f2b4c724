"""Row fingerprints (``row_fingerprints.py``): equal exactly for equal rows, whichever path computed
them (Arrow columns or Python rows), wherever a row lies in its chunk, and keyed per process."""

from __future__ import annotations

import datetime
import random
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pytest

from catalog.ddl import catalog_from_ddl
from operators.runtime import row_fingerprints
from operators.runtime.column_types import arrow_type
from operators.runtime.row_fingerprints import arrow_fingerprints

CATALOG = catalog_from_ddl("""CREATE TABLE item (id BIGINT, n INT, price DECIMAL(15,2), big DECIMAL(38,4), x DOUBLE,
  day DATE, flag BOOLEAN, note VARCHAR(400), tag VARCHAR(3), PRIMARY KEY (id));""")
ITEM = CATALOG.table("item")
LONG = row_fingerprints._LONG


def random_value(rng: random.Random, column: str):
    """A value of ``column`` from a small pool (so rows repeat), NULL, edge values, long strings."""
    pools = {
        "n": [0, -1, 1, 2**31 - 1, -(2**31)],
        "price": [Decimal("0.00"), Decimal("-0.01"), Decimal("9999999999999.99"), Decimal("-9999999999999.99")],
        "big": [Decimal("0.0000"), Decimal("1" * 34 + ".0000"), Decimal("-" + "9" * 34 + ".9999"), Decimal("1.0000")],
        "x": [0.0, 1e300, -2.5, float("inf")],
        "day": [datetime.date(1970, 1, 1), datetime.date(2024, 2, 29), datetime.date(1, 1, 1)],
        "flag": [True, False],
        # NUL bytes, multi-byte characters, a string one past a word, and long ones around _LONG
        "note": ["", "a", "a\x00", "ab", "abcde", "é€😀", "x" * LONG, "x" * (LONG + 1), "x" * LONG + "y", "y" * 1000],
        "tag": ["", "a", "b", "ab"],
    }
    return None if rng.random() < 0.2 else rng.choice(pools[column])


def random_rows(seed: int, count: int) -> list[tuple]:
    rng = random.Random(seed)
    return [(rng.randrange(3), *(random_value(rng, c.name) for c in ITEM.columns[1:])) for _ in range(count)]


def arrow_columns(rows: list[tuple]) -> list[pa.Array]:
    return [pa.array([row[i] for row in rows], arrow_type(c.type)) for i, c in enumerate(ITEM.columns)]


@pytest.mark.parametrize("seed", range(4))
def test_fingerprints_are_equal_exactly_for_equal_rows_on_both_paths(seed):
    rows = random_rows(seed, 400)
    fingerprints = arrow_fingerprints(arrow_columns(rows))
    assert fingerprints == row_fingerprints.row_fingerprints(rows, ITEM)
    assert all(isinstance(f, bytes) and len(f) == 16 for f in fingerprints)
    by_row = dict(zip(rows, fingerprints, strict=True))
    assert len(set(by_row)) > 300, "the rows must mostly differ for the test to say something"
    assert len(set(by_row.values())) == len(by_row), "two different rows got one fingerprint"
    for row, fingerprint in zip(rows, fingerprints, strict=True):
        assert by_row[row] == fingerprint


@pytest.mark.parametrize("seed", range(3))
def test_a_rows_fingerprint_does_not_depend_on_the_other_rows_of_its_chunk(seed):
    """Alone, sliced, in chunks, beside long strings or none: one fingerprint per row value."""
    rows = random_rows(seed, 120)
    columns = arrow_columns(rows)
    whole = arrow_fingerprints(columns)
    assert [arrow_fingerprints(arrow_columns([row]))[0] for row in rows] == whole
    assert arrow_fingerprints([column.slice(7, 50) for column in columns]) == whole[7:57]
    assert arrow_fingerprints([pa.chunked_array([column[:33], column[33:]]) for column in columns]) == whole
    short = [i for i, row in enumerate(rows) if row[7] is None or len(row[7]) <= LONG]
    assert arrow_fingerprints(arrow_columns([rows[i] for i in short])) == [whole[i] for i in short]


def test_rows_that_differ_only_where_an_encoding_could_blur_get_different_fingerprints():
    base = (1, 2, Decimal("1.00"), Decimal("1.0000"), 1.0, datetime.date(2024, 1, 1), True, "ab", "c")
    variants = [
        base[:7] + ("a", "bc"),  # the same bytes, split differently between two strings
        base[:7] + ("ab\x00", "c"),  # a trailing NUL: the same padded words, another length
        base[:7] + ("", "c"), base[:7] + (None, "c"),  # empty string vs NULL
        base[:1] + (0,) + base[2:], base[:1] + (None,) + base[2:],  # 0 vs NULL
        base[:2] + (Decimal("-1.00"),) + base[3:], base[:3] + (Decimal("-1.0000"),) + base[4:],
        base[:4] + (-0.0,) + base[5:], base[:6] + (False,) + base[7:],
        base[:7] + ("ab" + "x" * LONG, "c"), base[:7] + ("ab" + "x" * LONG + "\x00", "c"),
    ]
    fingerprints = row_fingerprints.row_fingerprints([base, *variants], ITEM)
    assert len(set(fingerprints)) == 1 + len(variants)
    # and what must be one value is: -0.0 is 0.0, a DECIMAL is its value at the column's scale
    assert row_fingerprints.row_fingerprints([base[:4] + (0.0,) + base[5:], base[:4] + (-0.0,) + base[5:]], ITEM) \
        == row_fingerprints.row_fingerprints([base[:4] + (0.0,) + base[5:]], ITEM) * 2


def test_validity_bits_past_the_first_word_count():
    """A table of 40 columns: the validity of column 35 is in the second word."""
    names = [f"c{i}" for i in range(40)]
    wide = catalog_from_ddl(f"CREATE TABLE wide ({', '.join(f'{n} INT' for n in names)}, PRIMARY KEY (c0));").table("wide")
    row = tuple(range(40))
    rows = [row, row[:35] + (None,) + row[36:], row[:35] + (0,) + row[36:]]
    assert len(set(row_fingerprints.row_fingerprints(rows, wide))) == 3


def test_the_fingerprint_is_keyed_per_process(monkeypatch):
    """Another key (as another process draws) gives other fingerprints, so no stream can be made to
    collide in every process; one key gives the same fingerprints every time."""
    rows = random_rows(9, 50)
    first = row_fingerprints.row_fingerprints(rows, ITEM)
    assert row_fingerprints.row_fingerprints(rows, ITEM) == first
    monkeypatch.setattr(row_fingerprints, "_MULTIPLIERS", row_fingerprints._Multipliers())
    again = row_fingerprints.row_fingerprints(rows, ITEM)
    assert not set(again) & set(first)


def test_a_string_is_one_value_whatever_its_arrow_string_layout():
    values = ["", "a", None, "x" * (LONG + 3), "é€"]
    layouts = [pa.array(values, kind) for kind in (pa.string(), pa.large_string(), pa.binary(), pa.large_binary())]
    fingerprints = [arrow_fingerprints([layout]) for layout in layouts]
    assert all(f == fingerprints[0] for f in fingerprints) and len(set(fingerprints[0])) == len(values)


@pytest.mark.parametrize("kind", [pa.string(), pa.large_string(), pa.binary(), pa.large_binary()])
def test_a_strings_bytes_are_summed_as_its_zero_padded_words_times_their_multipliers(kind):
    """``_add_bytes`` (Arrow pads the strings into one matrix) against the definition, string by string:
    the bytes as little-endian 32-bit words, zero-padded, each times its position's multipliers, mod 2**64."""
    binary = kind in (pa.binary(), pa.large_binary())
    texts = [b"skipped", b"", b"a", b"abcd", b"abcde", "é€😀".encode(), b"x" * (LONG + 5), b"y" * LONG, b"zz"]
    texts += [b"\xff\xfe\x00"] if binary else []  # bytes that are no UTF-8
    column = pa.array(texts if binary else [t.decode() for t in texts], kind).slice(1)  # not at its buffers' start
    sums = np.zeros((len(column), row_fingerprints._LANES), np.uint64)
    row_fingerprints._add_bytes(sums, column, 3)
    for row, data in enumerate(texts[1:]):
        words = [int.from_bytes(data[i : i + 4].ljust(4, b"\0"), "little") for i in range(0, len(data), 4)]
        multipliers = row_fingerprints._MULTIPLIERS.of(3, len(words)).tolist()
        expected = [sum(w * m[lane] for w, m in zip(words, multipliers, strict=True)) % 2**64
                    for lane in range(row_fingerprints._LANES)]
        assert sums[row].tolist() == expected, data
