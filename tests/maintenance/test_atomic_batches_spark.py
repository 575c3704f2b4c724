"""Atomic batches on Spark: one ``apply`` is one micro-batch, even when Spark triggers mid-write.

The Spark runner's query runs continuously, so a trigger can fire at any moment while ``apply``
puts a batch into the inbox. Were a batch's tables published one by one, a trigger between two of
them would split it into micro-batches: the first committed, the second failing, and the caller
told that nothing happened while the state already held half the batch (and re-sending it would
apply that half twice). Here a trigger is forced right after every file ``apply`` publishes into
the inbox, with the batch's first table valid and its second one invalid (checked on the executors
under the ``error`` policy): every state must stay as before, and the corrected batch sent again
must give DuckDB's answer.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.errors import StreamingQueryException

from catalog.tpch import tpch_catalog
from operators.runtime.run_errors import SparkBatchError
from operators.runtime.spark_session import make_spark_session
from operators.runtime.stream import Update
from planner.view import MaintainedView
from planner.workloads.oracle import DuckDBOracle, StreamTables, assert_matches_reference

pytestmark = pytest.mark.spark

SEGMENTS = """select c_mktsegment, count(*) as orders, sum(o_totalprice) as total
              from customer, orders where c_custkey = o_custkey group by c_mktsegment"""


def numbered(changes: list[tuple[str, int, tuple]], first_seq: int) -> list[Update]:
    return [Update(seq, table, op, row) for seq, (table, op, row) in enumerate(changes, start=first_seq)]


def test_a_trigger_between_the_files_of_a_failing_batch_commits_none_of_it(tpch_tables, tmp_path, monkeypatch):
    catalog = tpch_catalog()
    customers = tpch_tables["customer"][:40]
    orders_of = {c[0]: [o for o in tpch_tables["orders"] if o[1] == c[0]] for c in customers}
    loaded, joining = customers[:30], customers[30:]
    load = numbered([("customer", 1, c) for c in loaded] + [("orders", 1, o) for c in loaded for o in orders_of[c[0]]], 1)
    leaving = next(c for c in loaded if orders_of[c[0]])  # its orders leave the join: the first part changes the result
    duplicate = orders_of[leaving[0]][0]
    # customer's part comes first (the inbox is written in the order of the tables' first changes), and
    # the orders part ends with a duplicate key, which only the executors' validation state can see
    fixed = numbered([("customer", -1, leaving), *(("customer", 1, c) for c in joining),
                      *(("orders", 1, o) for c in joining for o in orders_of[c[0]])], len(load) + 1)
    bad = [*fixed, Update(fixed[-1].seq + 1, "orders", 1, duplicate)]
    assert len({u.table for u in bad}) == 2 and bad[0].table == "customer"

    with MaintainedView(SEGMENTS, catalog, engine="spark", spark=make_spark_session(app="spark-ivm-atomic-split"),
                        work_dir=str(tmp_path)) as view:
        view.apply(load)
        runner = view.runner
        before = (view.result(), runner.state_size(), list(view.rejected))
        assert before[0], "the comparison needs a result"

        published: list[Path] = []
        rename = Path.rename

        def rename_then_trigger(path: Path, target):
            moved = rename(path, target)
            if Path(target).is_relative_to(runner.inbox_dir):
                published.append(Path(target))
                try:  # a trigger right now: Spark plans a micro-batch of what the inbox shows
                    runner.query.processAllAvailable()
                except StreamingQueryException:
                    pass  # the batch failed; apply sees it too when it waits for the batch
            return moved

        with monkeypatch.context() as patched:
            patched.setattr(Path, "rename", rename_then_trigger)
            with pytest.raises(SparkBatchError, match=r"InvalidChangeError: .*table orders"):
                view.apply(bad)
        assert published, "the forced trigger never ran: apply published nothing through Path.rename"
        assert (view.result(), runner.state_size(), list(view.rejected)) == before
        checkpoint = tmp_path / "checkpoint"
        planned = {p.name for p in (checkpoint / "offsets").iterdir() if p.name.isdigit()}
        committed = {p.name for p in (checkpoint / "commits").iterdir() if p.name.isdigit()}
        assert planned == committed == {"0"}, "only the load is committed; nothing of the failed batch is left planned"

        view.apply(fixed)
        with DuckDBOracle(catalog) as oracle:
            oracle.load_stream(StreamTables.from_updates(catalog, [*load, *fixed]))
            oracle.as_of(fixed[-1].seq)
            expected = oracle.reference(SEGMENTS)
        assert expected.is_informative()
        assert_matches_reference(view.result(), expected, "after the failed batch and its corrected resend")
