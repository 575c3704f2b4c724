"""Projections of q-hierarchical equi-joins kept factorized on a view tree (rules/factorized_output.py,
Olteanu Ex. 4.4), each equal to DuckDB's recomputation after every batch of random insert/delete
streams over bag tables (repeated rows, deletes that empty a join value, NULLs in join columns that
must never join), in pull mode (the view keeps no copy: the result is enumerated from the views) and
in push mode (the changes delta-enumerated); with PRIMARY KEYs, Ex. 4.12's join that is
q-hierarchical only as its Σ-reduct."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from catalog.ddl import catalog_from_ddl
from operators.runtime.stream import Update, batches
from planner.compiler import compile_query
from planner.ir.view_tree_plan import FactorizedViewTree
from planner.view import MaintainedView
from tests.maintenance.checking import check_against_recomputation
from tests.maintenance.test_gjt_local import CATALOG, random_stream

QUERIES = {
    "Ex. 4.4's Q(Y, X, Z) = R(Y, X)·S(Y, Z)": "select r.a, r.b, s.e from r, s where r.a = s.d",
    "bound columns projected away (bag multiplicities)": "select r.a, s.e from r join s on r.a = s.d",
    "three atoms on one variable": "select r.a, r.b, s.e, t.h from r, s, t where r.a = s.d and s.d = t.g",
    "nested variables a ⊃ (e = h)": "select r.a, s.e, t.i from r, s, t where r.a = s.d and s.d = t.g and s.e = t.h",
    "selection and an expression": "select r.a + 1 as a1, s.e, s.f from r, s where r.a = s.d and r.b > 2",
    "distinct": "select distinct r.a, s.e from r, s where r.a = s.d",
    "distinct of an expression (counted above)": "select distinct r.a * 0 as z, s.e from r, s where r.a = s.d",
    "self-join": "select x.a, x.b, y.c from r x, r y where x.a = y.a",
    "top-k above the tree": "select r.a, s.e from r, s where r.a = s.d order by r.a desc, s.e limit 4",
    "order by (the result kept sorted)": "select r.a, r.b, s.e from r, s where r.a = s.d order by s.e, r.a",
    "select * (the join column twice)": "select * from r, s where r.a = s.d",
}

#: aggregates the payload tree refuses (nullable columns, MIN/MAX), on a forced view tree: the tree
#: enumerates the group and argument columns into the ordinary aggregate above it
FORCED = {
    "global count": "select count(*) as n from r, s where r.a = s.d",
    "min/max per join value": "select r.a, min(s.e) as lo, max(r.b) as hi, count(s.f) as n from r, s "
                              "where r.a = s.d group by r.a",
}


@pytest.mark.parametrize("name", list(QUERIES))
def test_factorized_join_equals_recomputation_after_every_batch(name):
    compiled = compile_query(QUERIES[name], CATALOG, strict=True)
    assert any(isinstance(n, FactorizedViewTree) for n in compiled.plan.walk())
    view = check_against_recomputation(QUERIES[name], CATALOG, random_stream(seed=len(name), nulls=0.1), batch_size=30,
                                       informative_at_least=0.7)
    assert view.result(), "the final result must not be empty"


@pytest.mark.parametrize("name", list(FORCED))
def test_a_forced_view_tree_feeds_the_aggregate_above_it(name):
    compiled = compile_query(FORCED[name], CATALOG, strict=True, join_strategy="view-tree")
    assert any(isinstance(n, FactorizedViewTree) for n in compiled.plan.walk())
    view = check_against_recomputation(FORCED[name], CATALOG, random_stream(seed=len(name), nulls=0.1), batch_size=30,
                                       informative_at_least=0.7, join_strategy="view-tree")
    assert view.result()


def test_nulls_in_join_columns_never_join():
    """Half the values NULL: a NULL join value must meet nothing, also not another NULL."""
    sql = QUERIES["three atoms on one variable"]
    view = check_against_recomputation(sql, CATALOG, random_stream(seed=5, nulls=0.5, domain=3), batch_size=20,
                                       informative_at_least=0.5)
    assert view.result() and all(row[0] is not None for row in view.result())


def test_deletes_that_empty_the_join_and_an_empty_result():
    """Deletes of every row: the join empties group by group, ending empty, equal to DuckDB throughout."""
    inserts = [u for u in random_stream(seed=9, deletes=0.0, size=120)]
    deletes = [Update(len(inserts) + i + 1, u.table, -1, u.row) for i, u in enumerate(reversed(inserts))]
    view = check_against_recomputation(QUERIES["three atoms on one variable"], CATALOG, inserts + deletes,
                                       batch_size=15, informative_at_least=0.4)
    assert view.result() == []


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled runner", "generic stages"])
def test_pushed_deltas_add_up_to_the_result_a_pulling_view_enumerates(compiled):
    """Both views keep no copy of the result (it is enumerated from the views); the pushing one returns
    each batch's delta-enumerated changes, which summed equal the result; the pulling one returns none."""
    sql = QUERIES["nested variables a ⊃ (e = h)"]
    with (MaintainedView(sql, CATALOG, strict=True, compiled=compiled) as pushing,
          MaintainedView(sql, CATALOG, strict=True, compiled=compiled, push=False) as pulling):
        assert pushing.ordered is None and pulling.ordered is None
        summed: Counter = Counter()
        for batch in batches(random_stream(seed=7, nulls=0.1), 40):
            summed.update(dict(pushing.apply(batch)))
            assert pulling.apply(batch) == []
            assert +summed == pushing.current == pulling.current
            assert sum(pulling.current.values()) == len(pulling.result())
        assert pulling.result(), "an empty result cannot show the deltas are right"


def test_the_generic_stages_agree_with_recomputation_too():
    check_against_recomputation(QUERIES["distinct"], CATALOG, random_stream(seed=2, nulls=0.1), batch_size=45,
                                informative_at_least=0.7, compiled=False)


KEYED = catalog_from_ddl("""
create table r (x int, w int);
create table s (x int primary key, y int);
create table t (y int primary key, z int);
""")


def keyed_stream(seed: int, size: int = 400) -> list[Update]:
    """r a bag; s and t sets by their keys (insert an absent key, delete a present row), so the
    key FDs x → y and y → z hold at every step."""
    rng = random.Random(seed)
    present: dict[str, dict] = {"r": {}, "s": {}, "t": {}}
    updates = []
    for seq in range(1, size + 1):
        table = rng.choice("rst")
        rows = present[table]
        if rows and rng.random() < 0.3:
            row = rng.choice(sorted(rows, key=repr))
            rows[row] -= 1
            if not rows[row]:
                del rows[row]
            updates.append(Update(seq, table, -1, row))
            continue
        key = rng.randrange(6)
        if table != "r" and any(row[0] == key for row in rows):
            continue
        row = (key, rng.randrange(4) if table != "r" else rng.choice([None, 0, 1, 2]))
        rows[row] = rows.get(row, 0) + 1
        updates.append(Update(seq, table, 1, row))
    return updates


def test_ex_4_12_is_maintained_through_its_sigma_reduct():
    """Q(Z, X, W) = R(X, W)·S(X, Y)·T(Y, Z) is not hierarchical; with the keys x → y, y → z its Σ-reduct
    is q-hierarchical (Ex. 4.12), and y joins the free variables (determined by x)."""
    sql = "select t.z, s.x, r.w from r, s, t where r.x = s.x and s.y = t.y"
    node = next(n for n in compile_query(sql, KEYED, strict=True).plan.walk() if isinstance(n, FactorizedViewTree))
    assert node.fd_reduct and "s.y" in node.free
    view = check_against_recomputation(sql, KEYED, keyed_stream(seed=3), batch_size=25, informative_at_least=0.6)
    assert view.result()
