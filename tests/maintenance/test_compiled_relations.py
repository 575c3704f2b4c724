"""A relation fused with its indexes in the compiled program (operators/stages/live_relation.py).

The first index (the home) keeps every tuple of R, the others only the tuples alive on the home's
child; a tuple moves in and out of them when its home partner appears or goes. These tests drive
that on small random streams where every partner toggles often: children deleted and inserted again
with other values, foreign keys that dangle, R's tuples deleted while live and while not, batches
of one change and of many. The compiled runner must give the generic stages' changes batch by batch
(and DuckDB's result), and its indexes must hold exactly the layout the module promises.
"""

from __future__ import annotations

import random
from decimal import Decimal

import pytest

from catalog.ddl import catalog_from_ddl
from operators.runtime.stream import Update, UpdateBatch, batches
from planner.view import MaintainedView
from tests.maintenance.checking import check_against_recomputation, count_equal_changes

DDL = """
CREATE TABLE grp (g INT PRIMARY KEY, g_name VARCHAR(10));
CREATE TABLE a (a_id INT PRIMARY KEY, a_g INT REFERENCES grp (g), a_v INT);
CREATE TABLE b (b_id INT PRIMARY KEY, b_g INT REFERENCES grp (g), b_v INT);
CREATE TABLE c (c_id INT PRIMARY KEY, c_v INT);
CREATE TABLE r (r_a INT REFERENCES a (a_id), r_line INT, r_b INT REFERENCES b (b_id), r_c INT REFERENCES c (c_id),
                r_x DECIMAL(10,2), PRIMARY KEY (r_a, r_line));
"""

QUERIES = {
    # two children and an assertion key (a and b must reach the same grp), as Q5's lineitem
    "assertion key": "SELECT g_name, SUM(r_x) AS s, COUNT(*) AS n FROM r, a, b, grp "
                     "WHERE r_a = a_id AND r_b = b_id AND a_g = b_g AND b_g = g AND g_name <> 'z' GROUP BY g_name",
    # three children, the live rows themselves in the result
    "three children": "SELECT r_a, r_line, r_x, a_v, b_v, c_v FROM r, a, b, c "
                      "WHERE r_a = a_id AND r_b = b_id AND r_c = c_id AND a_v < 7",
    # the home's child is b (R's key holds none of it), the other an EXISTS view
    "exists": "SELECT r_a, r_line, b_v FROM r, b WHERE r_b = b_id AND EXISTS (SELECT * FROM a WHERE a_id = r_a AND a_v < 7)",
    # an anti join off the home
    "not exists": "SELECT r_a, r_line, b_v FROM r, b WHERE r_b = b_id "
                  "AND NOT EXISTS (SELECT * FROM c WHERE c_id = r_c AND c_v < 3)",
    # every index optional (Q21's shape): a partner is never None, so every tuple is in every index
    "optional home": "SELECT r_a, r_line, r_x FROM r WHERE EXISTS (SELECT * FROM r r2 WHERE r2.r_a = r.r_a AND r2.r_b <> r.r_b) "
                     "AND NOT EXISTS (SELECT * FROM r r3 WHERE r3.r_a = r.r_a AND r3.r_b <> r.r_b AND r3.r_x > 5)",
}


def random_stream(seed: int, steps: int) -> list[Update]:
    """Valid inserts and deletes over small key domains: foreign keys point at absent keys (grp 3 never
    exists, r's keys 8 never), a child is deleted and inserted again with other values, R's tuples
    come and go, each deleted as written (set semantics: never a second copy of a key)."""
    rng = random.Random(seed)
    present: dict[str, dict[tuple, tuple]] = {t: {} for t in ("grp", "a", "b", "c", "r")}
    make = {
        "grp": lambda: (rng.randrange(3), rng.choice("xxyz")),
        "a": lambda: (rng.randrange(8), rng.choice((0, 0, 0, 1, 2, 3)), rng.randrange(10)),
        "b": lambda: (rng.randrange(8), rng.choice((0, 0, 0, 1, 2, 3)), rng.randrange(10)),
        "c": lambda: (rng.randrange(6), rng.randrange(6)),
        "r": lambda: (rng.randrange(9), rng.randrange(4), rng.randrange(9), rng.randrange(7),
                      Decimal(rng.randrange(1000)) / 100),
    }
    key_width = {"r": 2}
    updates: list[Update] = []
    while len(updates) < steps:
        table = rng.choices(("grp", "a", "b", "c", "r"), (1, 2, 2, 2, 8))[0]
        rows = present[table]
        row = make[table]()
        key = row[: key_width.get(table, 1)]
        if key not in rows:
            rows[key] = row
            updates.append(Update(len(updates) + 1, table, 1, row))
        elif rng.random() < 0.4:  # a present key is deleted less often than an absent one is inserted
            updates.append(Update(len(updates) + 1, table, -1, rows.pop(key)))
    return updates


def _chunks(updates: list[Update], seed: int) -> list[UpdateBatch]:
    """Batches of 1 to 40 changes."""
    rng, chunks, start = random.Random(seed), [], 0
    while start < len(updates):
        size = rng.choice((1, 1, 3, 40))
        chunks.append(UpdateBatch(tuple(updates[start:start + size])))
        start += size
    return chunks


@pytest.mark.parametrize("name", QUERIES)
@pytest.mark.parametrize("seed", [1, 2])
def test_fused_relations_give_the_generic_stages_changes(name, seed):
    catalog = catalog_from_ddl(DDL)
    updates = random_stream(seed, 3_000)
    with MaintainedView(QUERIES[name], catalog, compiled=False) as generic, \
            MaintainedView(QUERIES[name], catalog, compiled=True) as compiled:
        assert compiled.runner.program.relations, "the query must have a fused relation to test"
        chunks = _chunks(updates, seed)
        informative = count_equal_changes(generic, compiled, ((chunk, chunk) for chunk in chunks))
        assert informative >= 10, "the comparison needs batches that change the result"
        _assert_layout(compiled, updates)


@pytest.mark.parametrize("name", ["assertion key", "three children"])
def test_fused_relations_match_duckdb(name):
    view = check_against_recomputation(QUERIES[name], catalog_from_ddl(DDL), random_stream(3, 1_500), 25,
                                       informative_at_least=0.5)
    assert view.runner.program.relations


def test_the_result_empties_and_fills_again():
    """Deleting every grp row empties Q5's shape; inserting them again brings the same result back."""
    catalog = catalog_from_ddl(DDL)
    updates = random_stream(2, 2_000)
    groups = {}
    for update in updates:
        if update.table == "grp":
            groups[update.row[0]] = update.row if update.op == 1 else None
    seq = updates[-1].seq
    gone = [Update(seq + 1 + i, "grp", -1, row) for i, row in enumerate(r for r in groups.values() if r is not None)]
    back = [Update(seq + 1 + len(gone) + i, "grp", 1, u.row) for i, u in enumerate(gone)]
    with MaintainedView(QUERIES["assertion key"], catalog, compiled=False) as generic, \
            MaintainedView(QUERIES["assertion key"], catalog) as compiled:
        count_equal_changes(generic, compiled, ((b, b) for b in batches(updates, 50)))
        full = compiled.result()
        assert full, "the stream must leave rows to remove"
        count_equal_changes(generic, compiled, [(gone, gone)])
        assert compiled.result() == []
        _assert_layout(compiled, updates + gone)
        count_equal_changes(generic, compiled, [(back, back)])
        assert compiled.result() == full


def test_a_change_that_does_not_fit_a_fused_relation_is_refused():
    """Unvalidated input only: a second tuple of one key, or a delete whose row is not the stored one."""
    catalog = catalog_from_ddl(DDL)
    row = (1, 0, 2, 3, Decimal("1.50"))
    for bad in ([(row, 1), (row[:4] + (Decimal("2.00"),), 1)], [(row, 1), (row[:4] + (Decimal("2.00"),), -1)]):
        with MaintainedView(QUERIES["three children"], catalog) as view:
            with pytest.raises(RuntimeError, match="does not fit"):
                view.runner.apply({"r": bad})


def _assert_layout(view: MaintainedView, updates: list[Update]) -> None:
    """Every present tuple of R is in its home entry; in the other indexes exactly those alive on the
    home's child; no entry is left without tuples and without a child."""
    r = {}
    for update in updates:
        if update.table == "r":
            key = update.row[:2]
            if update.op == 1:
                r[key] = update.row
            else:
                del r[key]
    program = view.runner.program
    for relation in program.relations.values():
        home, (home_key, _) = relation.lookups[0], relation.keys[0]
        homed = [row for entry in program.states[home.id].values() for row in entry[0].values()]
        assert len(homed) == len(r), "every tuple of R is in its home entry"
        alive = {row for row in homed if _alive_on(home, program.states[home.id][_key(row, home_key)][1])}
        for lookup in relation.lookups[1:]:
            kept = {row for entry in program.states[lookup.id].values() for row in entry[0].values()}
            assert kept == alive, f"{lookup.stage.name} holds exactly the tuples alive on the home's child"
        for lookup in relation.lookups:
            assert all(entry[0] or entry[1] is not None for entry in program.states[lookup.id].values())


def _key(row: tuple, positions: tuple[int, ...]):
    return row[positions[0]] if len(positions) == 1 else tuple(row[p] for p in positions)


def _alive_on(lookup, slot) -> bool:
    """Whether a lookup's child slot makes R's tuples alive on it (``ForeignKeyLookupStage._partner``)."""
    return lookup.stage._partner([None, slot]) is not None
