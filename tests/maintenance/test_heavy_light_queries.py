"""The triangle count planned from SQL (rules/heavy_light.py: IVM^ε, Olteanu §3.3) against DuckDB's
recomputation after every batch of insert/delete streams with a hub of growing degree
(planner/workloads/triangle.py): the tables grow (M doubles, the hub turns heavy) then shrink (M
halves, the hub turns light again), so the comparison runs through both rebalancings. Three
tables R, S, T, and the common self-join of one edge table; ε = ½, and ε = 1 (plain delta queries)
and ε = 0.3 on the same stream; the count 0 over empty tables, as Spark returns it."""

from __future__ import annotations

import pytest

from catalog.ddl import catalog_from_ddl
from operators.runtime.stream import Update
from operators.stages.triangle_count import TriangleState
from planner.view import MaintainedView
from planner.workloads.oracle import DuckDBOracle
from planner.workloads.triangle import triangle_stream
from tests.maintenance.checking import compare_every_batch, stream_tables

DDL = """
CREATE TABLE r (a INT NOT NULL, b INT NOT NULL);
CREATE TABLE s (b INT NOT NULL, c INT NOT NULL);
CREATE TABLE t (c INT NOT NULL, a INT NOT NULL);
CREATE TABLE edges (src INT NOT NULL, dst INT NOT NULL);
"""
THREE_TABLES = "SELECT COUNT(*) AS triangles FROM r, s, t WHERE r.b = s.b AND s.c = t.c AND t.a = r.a"
SELF_JOIN = ("SELECT COUNT(*) AS triangles FROM edges e1, edges e2, edges e3 "
             "WHERE e1.dst = e2.src AND e2.dst = e3.src AND e3.dst = e1.src")


class ObservedReference:
    """DuckDB's recomputation, noting after every batch the count it expects and the maintained
    stage's partition (M and the number of heavy keys), read from the runner's state."""

    def __init__(self, oracle: DuckDBOracle, view: MaintainedView):
        self.oracle, self.view = oracle, view
        self.counts: list[int | None] = []  # None: no row (a HAVING that fails)
        self.capacities: list[int] = []
        self.heavy: list[int] = []

    def as_of(self, seq: int) -> None:
        self.oracle.as_of(seq)

    def reference(self, sql: str):
        expected = self.oracle.reference(sql)
        state = next((s[()] for s in self.view.runner.states.values() if isinstance(s.get(()), TriangleState)), None)
        if state is not None:  # (the comparison before the first batch finds the stage without a state)
            self.counts.append(expected.rows[0][0] if expected.rows else None)
            self.capacities.append(state.capacity)
            self.heavy.append(sum(len(relation.heavy) for relation in state.relations))
        return expected


def run(sql: str, updates: list[Update], batch_size: int, informative: float = 1.0, **options) -> ObservedReference:
    catalog = catalog_from_ddl(DDL)
    with DuckDBOracle(catalog) as oracle, MaintainedView(sql, catalog, strict=True, **options) as view:
        oracle.load_stream(stream_tables(catalog, updates))
        observed = ObservedReference(oracle, view)
        compare_every_batch(view, observed, sql, updates, batch_size, informative, "local runner vs DuckDB")
    return observed


def assert_informative(observed: ObservedReference, rebalanced: bool = True) -> None:
    nonzero = sum(bool(count) for count in observed.counts)
    assert nonzero >= 0.8 * len(observed.counts), f"only {nonzero} of {len(observed.counts)} batches count a triangle"
    if rebalanced:  # M grew and shrank (major rebalancing both ways), a heavy key came and went
        peak = observed.capacities.index(max(observed.capacities))
        assert observed.capacities[0] < observed.capacities[peak] > observed.capacities[-1]
        assert max(observed.heavy) > 0 and observed.heavy[0] < max(observed.heavy) > observed.heavy[-1]


@pytest.mark.parametrize(("sql", "tables"), [(THREE_TABLES, ("r", "s", "t")), (SELF_JOIN, ("edges",))],
                         ids=["three tables", "self-join of edges"])
def test_triangle_count_equals_recomputation_after_every_batch(sql, tables):
    observed = run(sql, triangle_stream(tables, 3000, seed=1), batch_size=60)
    assert_informative(observed)


@pytest.mark.parametrize("epsilon", [1.0, 0.3])
def test_other_epsilons_give_the_same_counts(epsilon):
    """ε = 1 makes every key light (delta queries only); ε = 0.3 makes more keys heavy."""
    updates = triangle_stream(("edges",), 1500, seed=2)
    observed = run(SELF_JOIN, updates, batch_size=50, heavy_light_epsilon=epsilon)
    assert_informative(observed, rebalanced=False)
    assert observed.counts == run(SELF_JOIN, updates, batch_size=50).counts
    assert (max(observed.heavy) == 0) == (epsilon == 1.0)


def test_generic_stages_agree_and_empty_tables_count_zero():
    """The generic runner (compiled=False) on the same stream; before any update the result is
    Spark's row over empty input, COUNT 0, and deleting everything brings it back."""
    catalog = catalog_from_ddl(DDL)
    with MaintainedView(SELF_JOIN, catalog, compiled=False) as view:
        assert view.result() == [(0,)]
        view.apply([Update(1, "edges", 1, (1, 2)), Update(2, "edges", 1, (2, 3)), Update(3, "edges", 1, (3, 1))])
        assert view.result() == [(3,)]  # one triangle, counted from each of its three edges
        view.apply([Update(4, "edges", -1, (2, 3))])
        assert view.result() == [(0,)]
    observed = run(THREE_TABLES, triangle_stream(("r", "s", "t"), 1500, seed=3), batch_size=50, compiled=False)
    assert_informative(observed, rebalanced=False)


def test_having_and_select_list_over_the_count():
    """HAVING filters the one row (no row while it fails, as Spark returns) and the select list
    computes over the count; the filter flips both ways during the stream."""
    sql = SELF_JOIN.replace("COUNT(*) AS triangles", "COUNT(*) * 2 AS doubled") + " HAVING COUNT(*) > 300"
    observed = run(sql, triangle_stream(("edges",), 1500, seed=5), batch_size=50, informative=0.2)
    shown = [count for count in observed.counts if count is not None]
    assert len(shown) <= 0.9 * len(observed.counts) and all(count > 600 for count in shown)


def test_a_selection_on_one_copy_of_the_edge_table():
    """A WHERE on one copy only (pushed into that atom, run at its source route): the three copies
    of one table see different rows."""
    sql = SELF_JOIN + " AND e2.src <> 0"
    observed = run(sql, triangle_stream(("edges",), 1500, seed=6), batch_size=50)
    assert_informative(observed, rebalanced=False)
