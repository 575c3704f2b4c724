"""The Spark runner's validation stages for declared dependencies (operators/runtime/spark_dependencies.py)
against the local ``Validator``, without a JVM: the key-validation processor and the dependency
processor driven by ``TwsTester`` bucket by bucket, as the query chains them, over random batches that
break the dependency, delete quarantined rows (ghosts), delete absent rows and carry NULL determinants.
After every batch the routed changes and the rejects with their reasons must be the local validator's."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from pyspark.sql.streaming.tws_tester import TwsTester
from pyspark.sql.types import Row as SparkRow

from catalog.ddl import catalog_from_ddl
from operators.runtime.dataflow import SourceRoute, StageNode
from operators.runtime.spark_dependencies import DependencyProcessor, checked_dependencies
from operators.runtime.spark_edges import REJECTED, VALIDATION, dependency_stage, key_text, pack, unpack
from operators.runtime.spark_forwarding import Forwarding
from operators.runtime.spark_validation import ValidationProcessor
from operators.runtime.stream import Update
from operators.runtime.validate import InvalidChangeError, Validator
from operators.stages.base import key_getter

DDL = """
CREATE TABLE loc (id INT NOT NULL, locn INT NOT NULL, zip INT NOT NULL, PRIMARY KEY (id))
  TBLPROPERTIES ('ivm.fd.locn' = 'zip', 'ivm.fd.id' = 'zip');
CREATE TABLE p (a INT, b INT, tag INT NOT NULL) TBLPROPERTIES ('ivm.fd.a' = 'b');
CREATE TABLE logs (k INT NOT NULL, v INT NOT NULL, PRIMARY KEY (k)) TBLPROPERTIES ('ivm.insert_only' = 'true');
"""
CATALOG = catalog_from_ddl(DDL)
BUCKETS, CHUNKS = 4, 2  # several determinants per bucket and chunk


class _Sink:
    """The stage the routes end at: only its key function is read."""

    name = "sink"

    def key_function(self, port: int):
        return key_getter(())


class ValidationChain:
    """One table's validation stages as the Spark query chains them (each stage's whole output is the
    next one's input, each stage forwarding what is not addressed to it), each a ``TwsTester``."""

    def __init__(self, table: str, policy: str):
        self.table = CATALOG.table(table)
        width = len(self.table.columns)
        routes = [(SourceRoute(table, 0, 0, tuple(range(width))), StageNode(0, _Sink(), None))]
        self.key_of = key_getter(tuple(self.table.column_names.index(c) for c in self.table.primary_key or self.table.column_names))
        validation = ValidationProcessor(self.table, routes, policy, (), BUCKETS, CHUNKS)
        self.testers = [TwsTester(Forwarding(validation, {VALIDATION}))]
        self.testers += [TwsTester(Forwarding(DependencyProcessor(self.table, index, routes, policy, BUCKETS, CHUNKS),
                                              {dependency_stage(index)}))
                         for index in range(len(checked_dependencies(self.table)))]

    def apply(self, updates: list[Update]) -> tuple[Counter, set]:
        """The routed net change (row → weight) and the rejects (seq, op, row, reason)."""
        rows = pack(((VALIDATION, key_text(self.key_of(u.row)), u.op, u.row, u.seq) for u in updates), BUCKETS)
        for tester in self.testers:
            by_bucket: dict[int, list[SparkRow]] = {}
            for row in rows:
                by_bucket.setdefault(row["bucket"], []).append(SparkRow(**row))
            rows = [out.asDict() for bucket, packed in sorted(by_bucket.items()) for out in tester.test(bucket, packed)]
        routed: Counter = Counter()
        rejected = set()
        for out in rows:
            for key, _, row, weight in unpack(out["changes"]):
                if out["stage"] == REJECTED:  # key: the reason; row: (table, _seq, _op, row)
                    _, seq, op, changed = row
                    rejected.add((seq, op, changed, key))
                else:
                    routed[row] += weight
        return +routed, rejected


def _local(validator: Validator, updates: list[Update]) -> tuple[Counter, set]:
    accepted, rejected = validator.check(updates)
    routed: Counter = Counter()
    for row, op in accepted.get(updates[0].table, []):
        routed[row] += op
    return +routed, {(r.update.seq, r.update.op, r.update.row, r.reason) for r in rejected}


def _batches(table: str, seed: int, count: int):
    """Batches of one table: fresh rows (a tenth of them with a NULL determinant in ``p``), a quarter
    of them with a dependent value that may break the dependency; deletes of any row sent before (live,
    quarantined or already deleted) and of rows never sent."""
    rng = random.Random(seed)
    sent: list[tuple] = []
    seq = 0
    for _ in range(count):
        batch = []
        for _ in range(rng.randrange(4, 14)):
            seq += 1
            if sent and rng.random() < 0.35:
                row = rng.choice(sent) if rng.random() < 0.9 else (10_000 + seq, 0, 0)
                batch.append(Update(seq, table, -1, row))
                continue
            determinant = rng.randrange(4)
            dependent = determinant % 2 if rng.random() < 0.75 else rng.randrange(3)
            if table == "loc":
                row = (seq, determinant, dependent)
            else:
                row = (None if rng.random() < 0.1 else determinant, dependent, seq)
            sent.append(row)
            batch.append(Update(seq, table, 1, row))
        yield batch


@pytest.mark.parametrize("table", ["loc", "p"])
def test_dependency_stages_quarantine_exactly_what_the_local_validator_does(table):
    chain = ValidationChain(table, "quarantine")
    validator = Validator(CATALOG, [table], "quarantine")
    broken = ghosts = routed_rows = 0
    for number, batch in enumerate(_batches(table, seed=5, count=40)):
        expected = _local(validator, batch)
        assert chain.apply(batch) == expected, f"batch {number}"
        broken += sum("breaks functional dependency" in reason for *_, reason in expected[1])
        ghosts += sum(op == -1 and "absent" in reason for _, op, _, reason in expected[1])
        routed_rows += len(expected[0])
    assert broken > 5 and ghosts > 3 and routed_rows > 50, "the stream tested too little"


def test_a_violation_raises_the_local_error_under_the_error_policy():
    batch = [Update(1, "loc", 1, (1, 7, 0)), Update(2, "loc", 1, (2, 7, 1))]
    with pytest.raises(InvalidChangeError) as local:
        Validator(CATALOG, ["loc"]).check(batch)
    with pytest.raises(InvalidChangeError) as spark:
        ValidationChain("loc", "error").apply(batch)
    assert str(spark.value) == str(local.value)
    assert "breaks functional dependency loc: locn → zip: determinant (7) would have dependent values (0) and (1)" \
        in str(spark.value)


def test_a_delete_from_an_insert_only_table_is_refused_as_locally():
    chain = ValidationChain("logs", "quarantine")
    assert chain.apply([Update(1, "logs", 1, (1, 5))]) == (Counter({(1, 5): 1}), set())
    routed, rejected = chain.apply([Update(2, "logs", -1, (1, 5)), Update(3, "logs", 1, (2, 6))])
    assert routed == Counter({(2, 6): 1})
    assert rejected == {(2, -1, (1, 5), "table logs is insert-only (ivm.insert_only): deletes are not allowed")}


def test_a_dependency_the_primary_key_implies_gets_no_stage():
    assert [str(fd) for fd in checked_dependencies(CATALOG.table("loc"))] == ["loc: locn → zip"]
