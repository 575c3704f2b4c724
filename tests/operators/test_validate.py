"""Bad input is rejected with table, row and reason, and leaves every state as it was."""

from __future__ import annotations

import datetime

import pytest

from catalog.ddl import catalog_from_ddl
from operators.runtime.row_fingerprints import row_fingerprints
from operators.runtime.stream import UnreadableUpdate, Update, UpdateBatch
from operators.runtime.validate import InvalidChangeError, Rejected, Validator

CATALOG = catalog_from_ddl("""
CREATE TABLE customer (c_custkey INT, c_name VARCHAR(20), c_since DATE, PRIMARY KEY (c_custkey));
""")
ALICE = (1, "alice", datetime.date(2020, 1, 1))


def validator(policy: str = "error") -> Validator:
    v = Validator(CATALOG, ["customer"], policy)
    v.check([Update(1, "customer", 1, ALICE)])
    return v


@pytest.mark.parametrize(("update", "reason"), [
    (Update(5, "customer", 1, ALICE), "duplicate primary key (1)"),
    (Update(5, "customer", -1, (2, "bob", None)), "delete of an absent row"),
    (Update(5, "customer", -1, (1, "alicia", datetime.date(2020, 1, 1))), "delete does not match the stored row"),
    (Update(5, "customer", 1, (3, "carol")), "has 2 columns, table customer has 3"),
    (Update(5, "customer", 1, (3, 42, None)), "column c_name expects string, got int"),
    (Update(5, "customer", 1, ("3", "carol", None)), "column c_custkey expects int, got string"),
    (Update(5, "customer", 1, (None, "carol", None)), "NULL in key column c_custkey"),
    (Update(5, "customer", 1, (3, "carol", "2020-01-01")), "column c_since expects date"),
])
def test_invalid_change_names_table_row_and_reason_and_changes_nothing(update, reason):
    v = validator()
    before = dict(v.fingerprints["customer"])
    good = Update(4, "customer", 1, (9, "ok", None))
    with pytest.raises(InvalidChangeError) as err:
        v.check([good, update])
    message = str(err.value)
    assert "table customer" in message and "_seq 5" in message and reason in message
    assert v.fingerprints["customer"] == before, "a rejected batch must not commit its valid part either"


def test_quarantine_sets_invalid_changes_aside_and_applies_the_rest():
    v = validator("quarantine")
    accepted, rejected = v.check([Update(2, "customer", 1, ALICE), Update(3, "customer", 1, (2, "bob", None))])
    assert accepted == {"customer": [((2, "bob", None), 1)]}
    assert [r.update.seq for r in rejected] == [2] and "duplicate primary key" in rejected[0].reason
    assert set(v.fingerprints["customer"]) == {1, 2}


def test_changes_are_checked_in_seq_order_within_a_batch():
    v = validator()
    replace = [Update(11, "customer", 1, (1, "alicia", None)), Update(10, "customer", -1, ALICE)]
    accepted, _ = v.check(replace)
    assert accepted["customer"] == [(ALICE, -1), ((1, "alicia", None), 1)]


def test_insert_delete_insert_of_one_key_in_a_batch_is_valid():
    v = Validator(CATALOG, ["customer"])
    accepted, _ = v.check([Update(1, "customer", 1, ALICE), Update(2, "customer", -1, ALICE), Update(3, "customer", 1, ALICE)])
    assert len(accepted["customer"]) == 3 and v.fingerprints["customer"] == {1: row_fingerprints([ALICE], CATALOG.table("customer"))[0]}


def test_a_checked_batch_skips_the_type_check_but_not_the_column_count():
    """Only the readers that cast every column make checked batches; their rows are trusted for types."""
    row = (3, 42, None)  # a wrong type the reader would have refused
    accepted, _ = validator().check(UpdateBatch([Update(5, "customer", 1, row)], checked=True))
    assert accepted == {"customer": [(row, 1)]}
    with pytest.raises(InvalidChangeError, match="has 2 columns, table customer has 3"):
        validator().check(UpdateBatch([Update(5, "customer", 1, (3, "carol"))], checked=True))


def test_unknown_policy_is_refused():
    with pytest.raises(ValueError, match="quarantine"):
        Validator(CATALOG, ["customer"], "ignore")


def test_a_change_the_reader_could_not_read_is_rejected_with_its_reason_under_either_policy():
    """The reader's defects come in checked batches, whose type check is skipped: the defect must still stop them."""
    unreadable = UnreadableUpdate(6, "customer", 1, ("3", "carol", None), "column c_custkey expects int, got string '3'")
    batch = UpdateBatch([Update(5, "customer", 1, (2, "bob", None)), unreadable], checked=True)
    strict = validator()
    with pytest.raises(InvalidChangeError, match=r"table customer at _seq 6 .*column c_custkey expects int, got string '3'"):
        strict.check(batch)
    assert set(strict.fingerprints["customer"]) == {1}
    accepted, rejected = validator("quarantine").check(batch)
    assert accepted == {"customer": [((2, "bob", None), 1)]}
    assert rejected == [Rejected(unreadable, unreadable.defect)]


def test_an_error_names_a_change_without_seq_or_op():
    update = UnreadableUpdate(None, "customer", None, (3, "carol", None), "_seq is NULL (row 4 of c.parquet)")
    assert str(InvalidChangeError(update, update.defect)).startswith(
        "invalid change to table customer without a _seq (op NULL, row (3, 'carol', NULL)): _seq is NULL")


def test_the_validator_keeps_a_16_byte_fingerprint_per_key_not_the_row():
    v = validator()
    [fingerprint] = v.fingerprints["customer"].values()
    assert fingerprint == row_fingerprints([ALICE], CATALOG.table("customer"))[0] and isinstance(fingerprint, bytes) and len(fingerprint) == 16
    assert row_fingerprints([(1, "alice", None)], CATALOG.table("customer"))[0] != fingerprint


def test_a_wrong_delete_or_duplicate_insert_is_refused_by_fingerprint_and_changes_nothing():
    v = validator("quarantine")
    before = dict(v.fingerprints["customer"])
    accepted, rejected = v.check([Update(2, "customer", -1, (1, "alice", datetime.date(2020, 1, 2))),
                                  Update(3, "customer", 1, (1, "bob", None))])
    assert accepted == {} and [r.reason.split(":")[0] for r in rejected] == [
        "delete does not match the stored row with this key", "duplicate primary key (1)"]
    assert v.fingerprints["customer"] == before
    accepted, _ = v.check([Update(4, "customer", -1, ALICE)])
    assert accepted == {"customer": [(ALICE, -1)]} and v.fingerprints["customer"] == {}


def test_equal_rows_have_one_fingerprint_an_int_in_a_double_column_included():
    catalog = catalog_from_ddl("CREATE TABLE price (id INT, value DOUBLE, PRIMARY KEY (id));")
    v = Validator(catalog, ["price"])
    v.check([Update(1, "price", 1, (1, 5)), Update(2, "price", 1, (2, -0.0))])
    accepted, _ = v.check([Update(3, "price", -1, (1, 5.0)), Update(4, "price", -1, (2, 0.0))])
    assert len(accepted["price"]) == 2 and v.fingerprints["price"] == {}


def test_a_keyless_table_counts_copies_per_fingerprint():
    catalog = catalog_from_ddl("CREATE TABLE note (text VARCHAR(10));")
    v = Validator(catalog, ["note"], "quarantine")
    v.check([Update(1, "note", 1, ("a",)), Update(2, "note", 1, ("a",))])
    assert list(v.fingerprints["note"].values()) == [2]
    accepted, rejected = v.check([Update(3, "note", -1, ("a",)), Update(4, "note", -1, ("a",)), Update(5, "note", -1, ("a",))])
    assert len(accepted["note"]) == 2 and [r.update.seq for r in rejected] == [5] and v.fingerprints["note"] == {}


def test_an_aborted_batch_leaves_the_state_as_before_and_can_be_sent_again():
    """``validate`` writes an all-valid table's changes straight into the state; ``abort`` (a stage
    failed on the batch) must put back every key, also one the batch touched twice."""
    v = validator()
    before = dict(v.fingerprints["customer"])
    batch = [Update(2, "customer", -1, ALICE), Update(3, "customer", 1, (1, "alicia", None)),
             Update(4, "customer", 1, (2, "bob", None))]
    validated = v.validate(batch)
    assert validated.accepted["customer"] and v.fingerprints["customer"] != before
    v.abort(validated)
    assert v.fingerprints["customer"] == before
    accepted, _ = v.check(batch)
    assert len(accepted["customer"]) == 3 and set(v.fingerprints["customer"]) == {1, 2}
    with pytest.raises(InvalidChangeError, match="duplicate primary key"):
        v.check(batch[1:])  # the same changes again: their keys are present now


def test_a_table_checked_fine_is_put_back_when_a_later_table_of_the_batch_is_rejected():
    catalog = catalog_from_ddl("""
    CREATE TABLE customer (c_custkey INT, c_name VARCHAR(20), c_since DATE, PRIMARY KEY (c_custkey));
    CREATE TABLE orders (o_orderkey INT, o_custkey INT, PRIMARY KEY (o_orderkey));
    """)
    v = Validator(catalog, ["customer", "orders"])
    v.check([Update(1, "customer", 1, ALICE), Update(2, "orders", 1, (10, 1))])
    before = {table: dict(state) for table, state in v.fingerprints.items()}
    with pytest.raises(InvalidChangeError, match=r"table orders at _seq 4 .*duplicate primary key \(10\)"):
        v.check([Update(3, "customer", 1, (2, "bob", None)), Update(4, "orders", 1, (10, 2))])
    assert v.fingerprints == before
