"""Aggregates over inequality joins read off the GJT root's ring payload (no join enumeration),
each equal to recomputation (DuckDB) after every batch of random insert/delete streams with NULLs."""

from __future__ import annotations

import pytest

from catalog.ddl import catalog_from_ddl
from operators.runtime.stream import Update
from operators.stages.gjt import GjtStage
from operators.stages.payload_aggregate import PayloadAggregateStage
from planner.compiler import compile_query
from planner.explain import explain_text
from planner.ir.gjt_aggregate import READ_FROM_ROOT
from tests.maintenance.checking import check_against_recomputation
from tests.maintenance.test_gjt_local import random_stream as inequality_stream

CATALOG = catalog_from_ddl("""
create table r (a int, b int, c int);
create table s (d int, e int, f int);
create table t (g int, h int, i int);
""")

NOT_NULL = catalog_from_ddl("""
create table r (a int not null, b int not null, c int not null);
create table s (d int not null, e int not null, f int not null);
create table t (g int not null, h int not null, i int not null);
""")

Q3 = "from r, s, t where r.a < s.d and s.e < t.g"
KEYED = "from r, s, t where r.c = s.f and s.f = t.i and r.a < s.d and s.e < t.g"
TAKEN = {
    "count(*) grouped, two-way": "select r.b, count(*) as n from r, s where r.a < s.d group by r.b",
    "sum, avg, count(x) grouped, two-way": "select r.b, sum(s.e) as se, avg(s.e) as ae, count(s.e) as ce, "
                                           "count(*) as n from r, s where r.a < s.d group by r.b",
    "global, Q3-like": f"select count(*) as n, sum(t.h) as sh, avg(r.b) as ab {Q3}",
    "grouped by s.e, Q3-like": f"select s.e, sum(r.b) as sb, avg(t.h) as ah, count(*) as n {Q3} group by s.e",
    "keyed (equality + inequality)": f"select r.c, sum(s.e) as se, count(t.h) as ch, avg(r.b) as ab {KEYED} "
                                     "group by r.c",
    "keyed, global": f"select sum(t.h) as sh, count(*) as n {KEYED}",
    "having": "select r.b, sum(s.e) as se from r, s where r.a < s.d group by r.b having count(*) > 3",
    "expressions over one atom": "select r.b, sum(s.e * s.f) as p, avg(s.e - s.f) as d, count(s.e + 1) as c "
                                 "from r, s where r.a < s.d group by r.b",
}
#: an argument spanning atoms (BSP's shape): taken over NOT NULL columns only
SPANNING = f"select s.e, sum(r.b * r.c - t.h) as x, avg(r.b + t.h) as y {Q3} group by s.e"
ENUMERATED = {  # the ring cannot (or the root is too coarse): enumeration into a ring aggregate
    "root too coarse": f"select t.h, r.b, sum(s.f) as sf {Q3} group by t.h, r.b",
    "min": "select r.b, min(s.e) as m from r, s where r.a < s.d group by r.b",
    "argument spanning nullable atoms": SPANNING,
    "product across atoms": "select r.b, sum(r.c * s.e) as p from r, s where r.a < s.d group by r.b",
}


def random_stream(seed: int, size: int = 300, nulls: float = 0.125) -> list[Update]:
    """test_gjt_local's stream with NULLs (a value in 8 by default) and more deletes."""
    return inequality_stream(seed, size, domain=6, deletes=0.3, nulls=nulls)


def _stage_types(sql: str, catalog=CATALOG) -> list[type]:
    return [type(n.stage) for n in compile_query(sql, catalog, strict=True).dataflow.stages]


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled runner", "generic stages"])
@pytest.mark.parametrize("name", list(TAKEN))
def test_ring_read_aggregate_equals_recomputation_after_every_batch(name, compiled):
    sql = TAKEN[name]
    stages = _stage_types(sql)
    assert PayloadAggregateStage in stages and GjtStage in stages, stages
    check_against_recomputation(sql, CATALOG, random_stream(seed=len(name)), batch_size=25,
                                informative_at_least=0.7, compiled=compiled)


def test_an_argument_spanning_not_null_atoms_is_read_off_one_slot():
    assert PayloadAggregateStage in _stage_types(SPANNING, NOT_NULL)
    check_against_recomputation(SPANNING, NOT_NULL, random_stream(seed=5, nulls=0), batch_size=25,
                                informative_at_least=0.7)


@pytest.mark.parametrize("name", list(ENUMERATED))
def test_what_the_ring_cannot_read_is_enumerated_and_still_right(name):
    sql = ENUMERATED[name]
    assert PayloadAggregateStage not in _stage_types(sql)
    check_against_recomputation(sql, CATALOG, random_stream(seed=len(name)), batch_size=25,
                                informative_at_least=0.5)


def test_explain_says_the_join_is_not_enumerated_or_why_it_is():
    taken = explain_text(compile_query(TAKEN["keyed (equality + inequality)"], CATALOG), verbose=True)
    assert READ_FROM_ROOT in taken and "O(1) per changed root tuple" in taken
    refused = explain_text(compile_query(ENUMERATED["root too coarse"], CATALOG), verbose=True)
    assert READ_FROM_ROOT not in refused and "without r.b, t.h" in refused


def test_payloads_of_root_tuples_in_one_group_add_up_and_an_all_null_sum_is_null():
    """A root label wider than the GROUP BY: two root tuples (g, x) of group g; slot 0 the sum, slot 1
    the non-NULL count; SUM over join tuples whose argument is NULL only reads NULL, COUNT(*) still counts."""
    from operator import itemgetter

    from operators.stages.aggregate import AggregateSpec
    from operators.stages.base import Change

    stage = PayloadAggregateStage(("g",), (itemgetter(0),), (AggregateSpec("sum", None), AggregateSpec("count", None),
                                                             AggregateSpec("avg", None)),
                                  ((0, 1), (None, None), (0, 1)), lambda row: row, ("g", "s", "n", "a"), "test")
    state, out = stage.process(("g",), None, [Change(0, ("g", 1, (2, (10, 2))), 1), Change(0, ("g", 2, (3, (5, 1))), 1)])
    assert out == [(("g", 15, 5, 5), 1)]
    state, out = stage.process(("g",), state, [Change(0, ("g", 1, (2, (10, 2))), -1), Change(0, ("g", 1, (4, (0, 0))), 1),
                                               Change(0, ("g", 2, (3, (5, 1))), -1)])
    assert sorted(out, key=str) == sorted([(("g", 15, 5, 5), -1), (("g", None, 4, None), 1)], key=str)
