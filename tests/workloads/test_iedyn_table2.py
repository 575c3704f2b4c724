"""Insert-only runs of Table 1's queries have the shape of IEDyn's Table 2 at a fifth of its sizes:
each query keeps the fraction of the relations' product that independent uniform values predict
(as Table 2 does where its rows agree with each other), and a projection counts the rows of its join."""

from __future__ import annotations

import pytest

from planner.workloads.iedyn_table2 import EXPECTED, PAPER, table2_rows

PROJECTED = {"q07": "q04", "q08": "q05", "q09": "q06", "q10": "q04", "q11": "q05", "q12": "q06"}
#: Table 2's rows whose selectivity is within 10% of the independent-values prediction
PAPER_AGREES = ("q01", "q03", "q06", "q07", "q10", "q11", "q12")


@pytest.fixture(scope="module")
def rows():
    return {row.query: row for row in table2_rows(0.2, seed=1)}


def test_every_query_keeps_the_predicted_fraction_of_the_product(rows):
    for query, row in rows.items():
        assert row.output > 0
        assert 0.75 < row.our_selectivity / EXPECTED[query] < 1.25, (query, row.our_selectivity)


def test_where_table2_agrees_with_the_prediction_ours_is_close_to_table2(rows):
    for query in PAPER_AGREES:
        assert abs(rows[query].paper_selectivity / EXPECTED[query] - 1) < 0.1
        assert 0.75 < rows[query].our_selectivity / rows[query].paper_selectivity < 1.25


def test_a_projection_keeps_the_multiplicities_of_its_join(rows):
    for projection, join in PROJECTED.items():
        assert rows[projection].output == rows[join].output


def test_stream_sizes_are_a_fifth_of_table2s(rows):
    assert {query: row.stream for query, row in rows.items()} == {
        query: round(size * 0.2) for query, (size, _) in PAPER.items()}
