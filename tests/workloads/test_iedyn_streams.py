"""IEDyn streams keep set semantics, the paper's insert order and value domains, and their deletes."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from catalog.iedyn import iedyn_catalog
from operators.runtime.stream import DELETE, INSERT, read_stream, write_stream
from planner.workloads.iedyn_streams import INEQUALITY_COLUMNS, make_iedyn_stream, make_trans_stream

CATALOG = iedyn_catalog()


def column_values(update, column: str):
    return update.row[CATALOG.table(update.table).column_names.index(column)]


def assert_set_semantics(updates) -> None:
    """Every insert brings a fresh id of its table; every delete removes exactly a present row."""
    present: dict[tuple[str, int], tuple] = {}
    ever: set[tuple[str, int]] = set()
    for update in updates:
        key = (update.table, update.row[0])
        if update.op == INSERT:
            assert key not in ever, f"_seq {update.seq}: id {key} inserted twice"
            ever.add(key)
            present[key] = update.row
        else:
            assert present.pop(key, None) == update.row, f"_seq {update.seq}: deletes an absent row {update.row}"


@pytest.mark.parametrize("order", ["random", "temporal"])
def test_a_stream_with_deletes_keeps_set_semantics_and_deletes_at_the_asked_rate(order):
    updates = make_iedyn_stream(3_000, order=order, delete_fraction=0.3, seed=2)
    assert_set_semantics(updates)
    deletes = sum(u.op == DELETE for u in updates)
    assert 0.27 < deletes / len(updates) < 0.33
    assert [u.seq for u in updates] == list(range(1, len(updates) + 1))


def test_deletes_are_mixed_into_the_papers_insert_only_stream_without_changing_it():
    paper = make_iedyn_stream(900, seed=4)
    assert {u.op for u in paper} == {INSERT}
    with_deletes = make_iedyn_stream(900, delete_fraction=0.2, seed=4)
    assert [(u.table, u.row) for u in with_deletes if u.op == INSERT] == [(u.table, u.row) for u in paper]


def test_each_relation_gets_its_share_of_the_inserts_in_a_random_order():
    updates = make_iedyn_stream(2_701, seed=1)
    assert Counter(u.table for u in updates) == {"r": 901, "s": 900, "t": 900}
    first_third = Counter(u.table for u in updates[:900])
    assert all(250 < count < 350 for count in first_third.values()), "the three relations are interleaved"
    assert Counter(u.table for u in make_iedyn_stream(12_000, relations=("r", "s"))) == {"r": 6_000, "s": 6_000}


def test_random_order_values_are_uniform_in_their_domains():
    updates = make_iedyn_stream(3_000, seed=3, key_domain=200)
    keys = {column_values(u, "k") for u in updates}
    assert min(keys) >= 1 and max(keys) <= 200 and len(keys) > 190
    a_values = [column_values(u, "a") for u in updates if u.table == "r"]
    assert len(set(a_values)) > 0.99 * len(a_values), "a large domain: ties are rare"
    assert all(isinstance(column_values(u, "c"), str) for u in updates if u.table == "r")
    assert all(isinstance(column_values(u, "i"), str) for u in updates if u.table == "t")


def test_temporal_order_inserts_ever_larger_values_in_the_compared_columns():
    updates = make_iedyn_stream(1_200, order="temporal", delete_fraction=0.2, seed=5)
    largest = 0
    for update in (u for u in updates if u.op == INSERT):
        compared = [column_values(update, c) for c in CATALOG.table(update.table).column_names if c in INEQUALITY_COLUMNS]
        assert min(compared) > largest
        largest = max(compared)
    random_order = make_iedyn_stream(1_200, seed=5)
    assert [column_values(u, "a") for u in random_order if u.table == "r"] != sorted(
        column_values(u, "a") for u in random_order if u.table == "r")


def test_streams_are_seeded():
    assert make_iedyn_stream(300, delete_fraction=0.2, seed=1) == make_iedyn_stream(300, delete_fraction=0.2, seed=1)
    assert make_iedyn_stream(300, seed=1) != make_iedyn_stream(300, seed=2)


def test_trans_streams_keep_set_semantics_and_their_order():
    temporal = make_trans_stream(2_000, delete_fraction=0.2, seed=1)
    assert_set_semantics(temporal)
    times = [column_values(u, "ts") for u in temporal if u.op == INSERT]
    assert times == sorted(times)
    shuffled = [column_values(u, "ts") for u in make_trans_stream(2_000, order="random", seed=1)]
    assert shuffled != sorted(shuffled) and sorted(shuffled) == sorted(times)


def test_streams_round_trip_through_the_stream_format(tmp_path):
    updates = [*make_iedyn_stream(300, delete_fraction=0.2, seed=1),
               *make_trans_stream(100, delete_fraction=0.2, seed=1, first_seq=10_000)]
    assert list(read_stream(write_stream(tmp_path, CATALOG, updates), CATALOG)) == updates


@pytest.mark.parametrize(("arguments", "message"), [
    ({"order": "sorted"}, "unknown stream order"),
    ({"relations": ("r", "u")}, "relations must be"),
    ({"delete_fraction": 1.5}, "delete_fraction"),
    ({"key_domain": 0}, "key_domain"),
])
def test_bad_settings_are_refused_by_name(arguments, message):
    with pytest.raises(ValueError, match=message):
        make_iedyn_stream(30, **arguments)


def test_ivm_iedyn_stream_writes_the_stream_that_ivm_run_reads(tmp_path, capsys):
    from planner.cli import main

    out = tmp_path / "q01"
    assert main(["iedyn", "stream", "--size", "60", "--relations", "r,s", "--delete-fraction", "0.2",
                 "--seed", "3", "--out", str(out)]) == 0
    assert list(read_stream(out, CATALOG)) == list(make_iedyn_stream(60, ("r", "s"), delete_fraction=0.2, seed=3))
    query = Path(__file__).resolve().parents[2] / "examples" / "iedyn" / "q02.sql"
    schema = query.parent / "schema.sql"
    assert main(["run", "--query", str(query), "--catalog", str(schema), "--stream", str(out)]) == 0
    assert main(["iedyn", "stream", "--size", "30", "--relations", "trans", "--out", str(tmp_path / "fraud")]) == 0
    assert "30 inserts" in capsys.readouterr().out
