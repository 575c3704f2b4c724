"""``result()`` read off an ordered multiset kept up to date per batch (issue 13, item 3).

The reference is the implementation it replaced: sort the whole result by every column, then stable
sorts by the ORDER BY positions (NULLs first ascending, last descending). The new one must give
exactly its output, in order, after every batch, on every TPC-H and order-book query, on ORDER BY
columns holding NULLs, and on equal values of different types (an int and a Decimal tie).
"""

from __future__ import annotations

import random
from collections import Counter
from decimal import Decimal
from pathlib import Path

import pytest

from catalog.ddl import catalog_from_ddl
from catalog.orderbook import orderbook_catalog
from catalog.tpch import tpch_catalog
from operators.runtime.stream import UpdateBatch, batches
from operators.structures.ordered_multiset import NegativeCountError, OrderedMultiset
from planner.view import MaintainedView
from planner.workloads.orderbook_streams import make_orderbook_stream, make_r_stream
from tests.maintenance.test_sql_breadth import EMP_DDL, emp_stream

EXAMPLES = Path(__file__).parents[2] / "examples"
TPCH = sorted((EXAMPLES / "tpch").glob("q*.sql"))
ORDERBOOK = ["vwap", "ex21", "sq1", "sq2", "psp", "mst", "nq1", "nq2"]


def _nulls_first(value):
    return (value is not None, value)


def sorted_as_before(rows, order) -> list:
    """The replaced ``result()``: a full sort, then one stable sort per ORDER BY position, last first."""
    rows = list(rows)
    rows.sort(key=lambda r: tuple(_nulls_first(v) for v in r))
    for position, ascending in reversed(order):
        rows.sort(key=lambda r, p=position: _nulls_first(r[p]), reverse=not ascending)
    return rows


def reference_result(view: MaintainedView) -> list:
    dataflow = view.compiled.dataflow
    return [row[: dataflow.visible_width] for row in sorted_as_before(view.current.elements(), dataflow.presentation_order)]


def compare_in_batches(sql: str, catalog, updates, batch_size: int) -> int:
    """After every batch the view's ``result()`` equals the reference; return how many were non-empty."""
    non_empty = 0
    with MaintainedView(sql, catalog) as view:
        for number, batch in enumerate(batches(tuple(updates), batch_size)):
            view.apply(batch)
            expected = reference_result(view)
            assert view.result() == expected, f"the order differs after batch {number}"
            assert list(view.rows(limit=3)) == expected[:3]
            non_empty += bool(expected)
    return non_empty


@pytest.fixture(scope="module")
def live_prefix(tpch_streams):
    """The first 60 000 updates of the live-dimension stream, where every query but Q17 is non-empty."""
    return UpdateBatch(tuple(tpch_streams["live"])[:60_000], checked=True)


@pytest.mark.parametrize("path", TPCH, ids=lambda p: p.stem)
def test_every_tpch_query_reads_in_the_old_order(live_prefix, path):
    non_empty = compare_in_batches(path.read_text(), tpch_catalog(), live_prefix, batch_size=6_000)
    if path.stem != "q17":  # Q17 as specified is empty at SF 0.01
        assert non_empty >= 2


@pytest.mark.parametrize("name", ORDERBOOK)
def test_every_orderbook_query_reads_in_the_old_order(name):
    sql = (EXAMPLES / "orderbook" / f"{name}.sql").read_text()
    stream = make_r_stream(400, seed=2) if name == "ex21" else make_orderbook_stream(200, 150, seed=5)
    assert compare_in_batches(sql, orderbook_catalog(), stream, batch_size=40) >= 2


@pytest.mark.parametrize("sql", [
    "select emp_id, salary, dname from emp order by salary desc, dname",
    "select emp_id, salary, dname from emp order by salary, dname desc",
    "select emp_id, dname from emp order by salary desc, emp_id",  # the ORDER BY column is hidden
    "select dname, salary from emp",  # no ORDER BY: the whole row, NULLs first
])
def test_nulls_in_order_by_columns(sql):
    stream = emp_stream(3)
    assert any(u.table == "emp" and u.row[1] is None for u in stream), "the stream must have NULL salaries"
    assert compare_in_batches(sql, catalog_from_ddl(EMP_DDL), stream, batch_size=25) > 5


def test_random_changes_with_nulls_and_decimal_int_ties():
    """Rows drawn from a small domain with NULLs, ints, equal Decimals and strings, under mixed
    directions (numbers and strings descending take different paths); enumeration starts half way,
    so both the first sort and the kept-up-to-date list are checked."""
    rng = random.Random(11)
    values = [None, 1, 2, Decimal("1.0"), Decimal("2.50"), 3]
    order = ((1, False), (2, False), (0, True))
    multiset, truth = OrderedMultiset(order), Counter()
    for step in range(300):
        changes = Counter()
        for _ in range(rng.randint(1, 6)):
            row = (rng.choice(values), rng.choice(values), rng.choice(["a", "b", None]))
            weight = -1 if truth[row] + changes[row] > 0 and rng.random() < 0.4 else 1
            changes[row] += weight
        multiset.apply(list(changes.items()))
        truth.update(changes)
        truth = +truth
        if step >= 100:
            rows = list(multiset.rows())
            assert rows == sorted_as_before(truth.elements(), order)
    assert len(rows) == len(multiset) > 20
    assert any(r[1] is None for r in rows) and any(isinstance(r[1], Decimal) for r in rows)
    assert any(r[2] is None for r in rows)


def test_failed_change_leaves_the_multiset_as_it_was():
    multiset = OrderedMultiset(((0, True),), [(1, "x"), (2, "y")])
    list(multiset.rows())  # the sorted list exists and must be restored too
    with pytest.raises(NegativeCountError):
        multiset.apply([((1, "x"), -1), ((3, "z"), -1)])
    with pytest.raises(TypeError):  # "w" cannot be compared with the ints: raised after (1, "x") went
        multiset.apply([((1, "x"), -1), (("w", "w"), 1)])
    assert multiset.counts == Counter({(1, "x"): 1, (2, "y"): 1})
    assert list(multiset.rows()) == [(1, "x"), (2, "y")]
