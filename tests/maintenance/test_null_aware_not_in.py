"""``x NOT IN (subquery)`` over columns that may be NULL (Spark's null-aware anti join, rules/not_in.py),
maintained on both local runners and equal to DuckDB's recomputation (whose NOT IN is Spark's: checked
against ``spark.sql`` in the slow test) after every batch of random insert/delete streams in which
NULLs enter and leave the subquery, the subquery empties and refills, values repeat in a bag, and the
outer column is NULL too."""

from __future__ import annotations

import random

import pytest

from catalog.ddl import catalog_from_ddl
from operators.runtime.stream import Update
from planner.compiler import compile_query
from planner.explain import explain_text
from planner.ir.maintenance import ViewAtom
from tests.maintenance.checking import check_against_recomputation

DDL = """
CREATE TABLE w (id INT PRIMARY KEY, grp INT, x INT);
CREATE TABLE s (sid INT PRIMARY KEY, grp INT, v INT);
CREATE TABLE b (grp INT, v INT)
"""

QUERIES = {
    "uncorrelated, both sides nullable": "select w.id, w.x from w where w.x not in (select s.v from s)",
    "uncorrelated, the outer column a key": "select w.id, w.grp from w where w.id not in (select s.v from s)",
    "correlated": "select w.id, w.x from w where w.x not in (select s.v from s where s.grp = w.grp)",
    "over a bag, with an aggregate above": """select w.grp, count(*) as n, sum(w.x) as total from w
        where w.x not in (select b.v from b where b.grp = w.grp) group by w.grp""",
    "a filtered bag": "select w.id from w where w.x not in (select b.v from b where b.grp > 1)",
    "a grouped subquery": "select w.id, w.x from w where w.x not in (select b.v from b group by b.v having count(*) > 1)",
}

#: the default set's representative case (every query on both runners is in the slow set)
FAST = {("uncorrelated, both sides nullable", True)}


def not_in_stream(seed: int, updates: int = 400) -> list[Update]:
    """Random inserts and deletes over w, s and b in phases: in one phase the subquery's tables take
    NULL values, at the next phase's start those NULL rows leave again (the subquery turns from
    holding a NULL to holding none); s and b are emptied twice (the empty subquery, every row in).
    The stream ends without NULLs in the subquery."""
    rng = random.Random(seed)
    live: dict[str, list[tuple]] = {"w": [], "s": [], "b": []}
    stream: list[Update] = []
    small = [None, 1, 2, 3]

    def emit(table: str, op: int, row: tuple) -> None:
        stream.append(Update(len(stream) + 1, table, op, row))

    def delete(table: str, which) -> None:
        for row in [r for r in live[table] if which(r)]:
            live[table].remove(row)
            emit(table, -1, row)

    phase = -1
    while len(stream) < updates:
        if len(stream) // 50 != phase:
            phase = len(stream) // 50
            if phase % 2 == 0:  # the NULLs leave the subquery
                delete("s", lambda r: r[2] is None)
                delete("b", lambda r: r[1] is None)
            if phase in (3, 6):  # the subquery empties
                delete("s", lambda r: True)
                delete("b", lambda r: True)
        nulls = 0.25 if phase % 2 else 0.0
        table = rng.choice(["w", "s", "b"])
        rows = live[table]
        if rows and (len(rows) >= 9 or rng.random() < 0.35):
            row = rows.pop(rng.randrange(len(rows)))
            emit(table, -1, row)
            continue
        value = None if rng.random() < nulls else rng.randint(1, 6)
        if table == "b":
            row = rng.choice(rows) if rows and rng.random() < 0.3 else (rng.choice(small), value)
        else:
            taken = {r[0] for r in rows}
            key = rng.choice([k for k in range(1, 14) if k not in taken])
            x = rng.choice([None, *range(1, 7)]) if table == "w" else value
            row = (key, rng.choice(small), x)
        rows.append(row)
        emit(table, 1, row)
    delete("s", lambda r: r[2] is None)  # the stream ends with the subquery holding values only
    delete("b", lambda r: r[1] is None)
    return stream


def _cases() -> list:
    return [pytest.param(name, compiled, id=f"{name}-{'compiled' if compiled else 'generic'}",
                         marks=() if (name, compiled) in FAST else pytest.mark.slow)
            for name in QUERIES for compiled in (True, False)]


@pytest.mark.parametrize(("name", "compiled"), _cases())
def test_null_aware_not_in_equals_recomputation(name, compiled):
    view = check_against_recomputation(QUERIES[name], catalog_from_ddl(DDL), not_in_stream(1), batch_size=10,
                                       informative_at_least=0.3, compiled=compiled)
    assert view.result(), "the final result must not be empty"


@pytest.mark.slow
@pytest.mark.parametrize("seed", [2, 3, 4, 5])
@pytest.mark.parametrize("name", list(QUERIES))
def test_null_aware_not_in_on_more_streams(name, seed):
    check_against_recomputation(QUERIES[name], catalog_from_ddl(DDL), not_in_stream(seed), batch_size=3,
                                compiled=seed % 2 == 0)


def test_the_stream_has_the_subquery_null_empty_and_plain():
    """The check above is only as good as its stream: the subquery must hold a NULL at some batch end,
    be empty at some, and hold only values at others, while w has rows."""
    states = set()
    present: dict[str, list[tuple]] = {"w": [], "s": []}
    for update in not_in_stream(1):
        if update.table in present:
            (present[update.table].append if update.op > 0 else present[update.table].remove)(update.row)
        if present["w"]:
            values = [r[2] for r in present["s"]]
            states.add("empty" if not values else "null" if None in values else "values")
    assert states == {"empty", "null", "values"}


def test_explain_names_the_null_aware_strategy_and_its_cost():
    plan = compile_query(QUERIES["correlated"], catalog_from_ddl(DDL)).plan
    views = [n for n in plan.walk() if isinstance(n, ViewAtom)]
    assert sorted((v.anti, v.optional) for v in views) == [(False, True), (True, False)]
    text = " ".join(explain_text(compile_query(QUERIES["correlated"], catalog_from_ddl(DDL))).split())
    assert "Subquery (_v0, _v1): null-aware NOT IN" in text
    assert "O(rows of that correlation key) when a NULL enters or leaves the subquery" in text
