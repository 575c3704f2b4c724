"""The per-batch comparison fails when the maintained result is wrong: a check that cannot fail
checks nothing. Each case corrupts a correct view's result in one way and expects the comparison
with DuckDB (over the stream, not the engine) to say where it differs."""

from __future__ import annotations

from pathlib import Path

import pytest

from catalog.tpch import tpch_catalog
from planner.view import MaintainedView
from planner.workloads.oracle import DuckDBOracle
from tests.maintenance.checking import check_against_recomputation, compare_every_batch, stream_tables

QUERIES = Path(__file__).parents[2] / "examples" / "tpch"
Q3 = (QUERIES / "q03.sql").read_text()


def swap_first_two(rows):
    return [rows[1], rows[0], *rows[2:]] if len(rows) > 1 else rows  # (the result before any batch is empty)


def cent_more_revenue(rows):
    if not rows:
        return rows
    key, revenue, *rest = rows[-1]
    return [*rows[:-1], (key, revenue + type(revenue)("0.01"), *rest)]  # float now, Decimal later


def drop_last(rows):
    return rows[:-1]


class CorruptedView:
    """A correct view whose ``result()`` is passed through ``corrupt`` (what a buggy engine returns)."""

    def __init__(self, view: MaintainedView, corrupt):
        self.view, self.corrupt = view, corrupt

    def apply(self, batch):
        return self.view.apply(batch)

    def result(self):
        return self.corrupt(self.view.result())


@pytest.mark.parametrize(("corrupt", "message"), [
    (swap_first_two, "tie group 0: the order differs"),
    (cent_more_revenue, "maintained but not recomputed"),
    (drop_last, "9 rows maintained vs 10 recomputed"),
], ids=["order", "decimal", "row"])
def test_a_wrong_result_fails_the_comparison(tpch_streams, corrupt, message):
    catalog, stream = tpch_catalog(), tpch_streams["live"]
    with DuckDBOracle(catalog) as oracle, MaintainedView(Q3, catalog) as view:
        oracle.load_stream(stream_tables(catalog, stream))
        with pytest.raises(AssertionError, match=message):
            compare_every_batch(CorruptedView(view, corrupt), oracle, Q3, stream, 50_000, 0.0, "corrupted")


def test_a_comparison_of_empty_results_is_refused_as_a_check(tpch_streams):
    """Q17 with the specification's parameters is NULL at every batch at SF 0.01."""
    with pytest.raises(AssertionError, match="0 of 2 compared batches had a result with a non-NULL value"):
        check_against_recomputation((QUERIES / "q17.sql").read_text(), tpch_catalog(),
                                    tpch_streams["live"], batch_size=80_000, informative_at_least=0.5)
