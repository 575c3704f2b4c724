"""Inequality joins maintained two ways, each equal to recomputation after every batch of a random
insert/delete stream: on a generalized join tree (IEDyn, pull mode: the view keeps no copy of the
result) and by the materializing fallback (``join_strategy="binary"``: binary joins with their
sub-joins materialized, each inequality filtering the lowest join holding its columns)."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from catalog.ddl import catalog_from_ddl
from operators.runtime.stream import Update, batches
from planner.compiler import compile_query
from planner.ir.gjt_maintenance import GeneralizedJoinTree
from planner.ir.maintenance import ChangePropagationJoin
from tests.maintenance.checking import check_against_recomputation

CATALOG = catalog_from_ddl("""
create table r (a int, b int, c int);
create table s (d int, e int, f int);
create table t (g int, h int, i int);
""")

QUERIES = {
    "two-way a<d": "select r.a, r.b, s.d, s.e from r, s where r.a < s.d",
    "three-way a<d, e<g": "select r.a, r.b, r.c, s.d, s.e, s.f, t.g, t.h, t.i from r, s, t where r.a < s.d and s.e < t.g",
    "equality key c=f=i": "select r.a, s.d, t.g, t.i from r, s, t where r.c = s.f and s.f = t.i and r.a < s.d and s.e < t.g",
    "a<d, e<g, d<g (two inequalities s-t)": "select r.a, s.d, s.e, t.g from r, s, t where r.a < s.d and s.e < t.g and s.d < t.g",
    "subtree below N keyed by f=i": "select r.a, r.b from r, s, t where r.a < s.d and s.f = t.i and s.e < t.g",
    "projection (not free-connex)": "select r.b, t.h from r, s, t where r.a < s.d and s.e < t.g",
    "band with offsets": "select r.a, s.d from r, s where r.a < s.d + 2 and s.d - r.a <= 5 and r.b <= s.e",
    "count(*): out(Q) empty": "select count(*) as n from r, s where r.a < s.d",
    "between": "select r.a, s.d from r, s where r.a between s.d and s.e",
    "self-join with a key": "select x.a, y.a from r x, r y where x.b = y.b and x.a < y.a",
    "two columns of r in one variable": "select r.b, s.e from r, s where r.a = s.d and r.c = s.d and r.b < s.e",
    "top-k": "select r.a, s.d from r, s where r.a < s.d order by r.a desc, s.d limit 5",
    "distinct": "select distinct r.b, t.h from r, s, t where r.a < s.d and s.e < t.g",
    "aggregate over the join": "select r.b, count(*) as n, sum(t.h) as total from r, s, t "
                               "where r.a <= s.d and s.e > t.g group by r.b",
}


def random_stream(seed: int, size: int = 360, domain: int = 8, deletes: float = 0.25,
                  nulls: float | None = None) -> list[Update]:
    """Inserts of small random rows of r, s, t and deletes of rows present (a change is a delete with
    probability ``deletes`` when the table has rows); with ``nulls`` a value is NULL with that
    probability (one more draw per value, so None and 0 give different streams)."""
    rng = random.Random(seed)
    present: dict[str, list[tuple]] = {"r": [], "s": [], "t": []}
    updates = []
    for seq in range(1, size + 1):
        table = rng.choice("rst")
        if present[table] and rng.random() < deletes:
            row = present[table].pop(rng.randrange(len(present[table])))
            updates.append(Update(seq, table, -1, row))
        else:
            row = tuple(None if nulls is not None and rng.random() < nulls else rng.randrange(domain) for _ in range(3))
            present[table].append(row)
            updates.append(Update(seq, table, 1, row))
    return updates


@pytest.mark.parametrize("strategy", [None, "binary"], ids=["gjt", "binary fallback"])
@pytest.mark.parametrize("name", list(QUERIES))
def test_inequality_join_equals_recomputation_after_every_batch(name, strategy):
    compiled = compile_query(QUERIES[name], CATALOG, strict=True, join_strategy=strategy)
    kinds = {type(n) for n in compiled.plan.walk()}
    assert (GeneralizedJoinTree in kinds) == (strategy is None)
    assert (ChangePropagationJoin in kinds) == (strategy == "binary")
    check_against_recomputation(QUERIES[name], CATALOG, random_stream(seed=len(name)), batch_size=30,
                                informative_at_least=0.7, join_strategy=strategy)


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled runner", "generic stages"])
def test_pull_mode_keeps_no_result_and_the_pushed_deltas_add_up_to_it(compiled):
    sql = QUERIES["three-way a<d, e<g"]
    from planner.view import MaintainedView

    with MaintainedView(sql, CATALOG, strict=True, compiled=compiled) as view:
        assert view.compiled.dataflow.enumerated_by is not None and view.ordered is None
        pushed: Counter = Counter()
        for batch in batches(random_stream(seed=7), 40):
            for row, weight in view.apply(batch):
                pushed[row] += weight
            assert +pushed == view.current and sum(view.current.values()) == len(view.result())
        assert view.result(), "an empty result cannot show the deltas are right"


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled runner", "generic stages"])
def test_without_push_a_batch_returns_no_changes_and_the_state_still_reads_the_result(compiled):
    """IEDyn's pull-based mode: the T-representation alone is maintained; the result read from it
    equals the pushing view's after every batch."""
    from planner.view import MaintainedView

    sql = QUERIES["three-way a<d, e<g"]
    with (MaintainedView(sql, CATALOG, strict=True, compiled=compiled) as pushing,
          MaintainedView(sql, CATALOG, strict=True, compiled=compiled, push=False) as pulling):
        informative = 0
        for batch in batches(random_stream(seed=11), 40):
            pushing.apply(batch)
            assert pulling.apply(batch) == []
            assert pulling.current == pushing.current
            informative += bool(pulling.current)
        assert informative > 5, "an empty result cannot show the pulled state is right"


def test_without_push_a_plan_that_keeps_its_result_is_refused():
    from planner.view import MaintainedView

    with pytest.raises(ValueError, match="cannot run without them"):
        MaintainedView(QUERIES["two-way a<d"] + " order by r.a", CATALOG, push=False)


def test_a_subtree_below_the_connex_set_with_a_key_gets_a_reduct_stage_of_its_own():
    stages = compile_query(QUERIES["subtree below N keyed by f=i"], CATALOG).dataflow.stages
    keys = [(n.stage.output, n.stage.key) for n in stages if type(n.stage).__name__ == "GjtStage"]
    assert keys == [(None, ("s.f",)), (("r.a", "r.b"), ())]  # REDUCT keyed by s.f feeds the ENUMERATE stage


def test_order_by_keeps_the_result_and_still_sorts():
    sql = QUERIES["two-way a<d"] + " order by r.a, s.d"
    compiled = compile_query(sql, CATALOG, strict=True)
    assert compiled.dataflow.enumerated_by is None
    check_against_recomputation(sql, CATALOG, random_stream(seed=3), batch_size=60, informative_at_least=0.8)


@pytest.mark.parametrize("strategy", [None, "binary"], ids=["gjt", "binary fallback"])
def test_the_generic_stages_agree_with_recomputation_too(strategy):
    """The compiled program inlines the filtered binary join; the generic stage classes are its spec."""
    check_against_recomputation(QUERIES["equality key c=f=i"], CATALOG, random_stream(seed=2), batch_size=45,
                                informative_at_least=0.7, join_strategy=strategy, compiled=False)
