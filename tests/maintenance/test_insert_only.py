"""Insert-only plans (Olteanu §4.6, rules/insert_only.py): MIN/MAX keeping the current extreme per group
and top-k keeping the k best rows, over tables declared ``ivm.insert_only``.

Each query runs on random insert-only streams (bag tables with duplicate rows, NULLs, ties, foreign
keys dangling at first so joins start empty) and must equal DuckDB's recomputation after every batch
and give, batch for batch, the very changes of the same query over the same tables without the flag
(the general ordered-multiset plan), on the compiled and the generic runner. A delete on an
insert-only table is rejected with every state unchanged; a key inserted twice is still rejected.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter

import pytest

from catalog.ddl import catalog_from_ddl
from operators.runtime.stream import Update, batches
from operators.runtime.validate import InvalidChangeError
from operators.stages.aggregate import GroupAggregateStage
from operators.stages.fused import FusedStage
from operators.stages.insert_only_aggregate import InsertOnlyAggregateStage
from operators.stages.insert_only_top_k import InsertOnlyTopKStage
from operators.stages.top_k import TopKStage
from planner.explain import explain_json, explain_text
from planner.view import MaintainedView
from tests.maintenance.checking import check_against_recomputation
from tests.maintenance.test_atomic_batches import InjectedFault, fail_on_call, heal, snapshot
from tests.maintenance.test_serialized_state import SerializingRunner

FLAGGED_DDL = """
CREATE TABLE s (b INT PRIMARY KEY, d INT) TBLPROPERTIES ('ivm.insert_only' = 'true');
CREATE TABLE r (a INT PRIMARY KEY, b INT REFERENCES s (b), c INT) TBLPROPERTIES ('ivm.insert_only' = 'true');
CREATE TABLE e (x INT, y INT) TBLPROPERTIES ('ivm.insert_only' = 'true');
CREATE TABLE f (x INT, y INT) TBLPROPERTIES ('ivm.insert_only' = 'true');
"""
FLAGGED = catalog_from_ddl(FLAGGED_DDL)
PLAIN = catalog_from_ddl(re.sub(r" TBLPROPERTIES \([^)]*\)", "", FLAGGED_DDL))

AGGREGATES = {
    "grouped over a bag table": "select x, min(y) as lo, max(y) as hi, count(*) as n, sum(y) as total, count(y) as ny "
                                "from e group by x",
    "global over a foreign-key join": "select min(r.c) as lo, max(s.d) as hi, count(*) as n "
                                      "from r, s where r.b = s.b and r.c > 3",
    "grouped by the join key (fused into the join stage)": "select s.b, min(r.c) as lo, max(r.c) as hi from r, s "
                                                           "where r.b = s.b group by s.b",
    "binary join with HAVING": "select e.y, min(f.y) as lo, max(f.x + f.y) as hi from e, f where e.x = f.x "
                               "group by e.y having count(*) > 1",
    "inequality join": "select min(f.y) as lo, max(e.y) as hi from e, f where e.x < f.x",
}
TOP_K = {
    "top-k over a bag table, ties": "select x, y from e where y is not null order by y desc, x limit 5",
    "top-k of distinct values": "select distinct y from f order by y limit 3",
    "top-k over a foreign-key join": "select r.a, s.d from r, s where r.b = s.b order by s.d desc, r.a limit 4",
    "top-k over UNION ALL": "select x from e union all select y from f order by x desc limit 3",
}
QUERIES = AGGREGATES | TOP_K


def insert_only_stream(seed: int, size: int = 420) -> list[Update]:
    """Inserts only: r first for a while (its foreign keys dangle, so the joins start empty), then any
    table; s keys each once in a shuffled order, r keys unique; e and f rows from small domains, so
    rows repeat (and one in five re-inserts a row already there), with NULLs."""
    rng = random.Random(seed)
    s_keys = list(range(14))
    rng.shuffle(s_keys)
    seen: dict[str, list[tuple]] = {"e": [], "f": []}

    def value(domain: int) -> int | None:
        return None if rng.random() < 0.15 else rng.randrange(domain)

    updates = []
    for seq in range(1, size + 1):
        table = "r" if seq <= 20 else rng.choice("rsef" if s_keys else "ref")
        if table == "r":
            row = (seq, rng.randrange(16), value(25))
        elif table == "s":
            row = (s_keys.pop(), value(12))
        elif seen[table] and rng.random() < 0.2:
            row = rng.choice(seen[table])
        else:
            row = (rng.randrange(6), value(15))
            seen[table].append(row)
        updates.append(Update(seq, table, 1, row))
    return updates


def stages_of(view: MaintainedView) -> list:
    """The view's stages, a fused stage as its two parts."""
    out = []
    pending = [node.stage for node in view.compiled.dataflow.stages]
    while pending:
        stage = pending.pop(0)
        pending[:0] = [stage.first, stage.second] if isinstance(stage, FusedStage) else []
        out += [] if isinstance(stage, FusedStage) else [stage]
    return out


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "generic"])
@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("name", QUERIES)
def test_insert_only_plan_equals_recomputation_and_the_general_plan(name, seed, compiled):
    sql, updates = QUERIES[name], insert_only_stream(seed)
    view = check_against_recomputation(sql, FLAGGED, updates, batch_size=30, informative_at_least=0.6,
                                       compiled=compiled)
    stages = stages_of(view)
    variant = InsertOnlyAggregateStage if name in AGGREGATES else InsertOnlyTopKStage
    assert any(isinstance(stage, variant) for stage in stages), f"{name}: the insert-only variant was not chosen"
    with MaintainedView(sql, FLAGGED, compiled=compiled) as flagged, MaintainedView(sql, PLAIN, compiled=compiled) as plain:
        general = GroupAggregateStage if name in AGGREGATES else TopKStage
        assert not any(isinstance(s, InsertOnlyAggregateStage | InsertOnlyTopKStage) for s in stages_of(plain))
        assert any(type(s) is general for s in stages_of(plain)), f"{name}: the plain tables get the general plan"
        for number, batch in enumerate(batches(updates, 30)):
            assert Counter(dict(flagged.apply(batch))) == Counter(dict(plain.apply(batch))), f"batch {number} differs"
        assert flagged.result() == plain.result() and flagged.result()


def test_explain_names_the_insert_only_tables_and_the_reason():
    compiled = MaintainedView(AGGREGATES["global over a foreign-key join"], FLAGGED).compiled
    assert "insert_only=[r, s]" in explain_text(compiled, verbose=True)
    stages = json.loads(explain_json(compiled))["stages"]
    aggregate = next(s for s in stages if s["operator"].startswith("InsertOnlyAggregate"))
    assert aggregate["operator"] == "InsertOnlyAggregate (MIN, MAX, COUNT)"
    assert aggregate["why"].startswith("insert-only: r, s only gain rows")
    assert aggregate["update_cost"] == "O(1) per join change"
    stages = json.loads(explain_json(MaintainedView(TOP_K["top-k over a foreign-key join"], FLAGGED).compiled))["stages"]
    top_k = next(s for s in stages if s["operator"].startswith("InsertOnlyTopK"))
    assert (top_k["operator"], top_k["state"]) == ("InsertOnlyTopK (k=4)", "the 4 best rows only")
    assert top_k["why"].startswith("insert-only: r, s only gain rows")


def test_a_retracting_operator_between_keeps_the_general_plan_and_explain_says_why():
    sql = "select max(r.c) as hi from r where not exists (select 1 from e where e.x = r.a)"
    view = MaintainedView(sql, FLAGGED)
    assert not any(isinstance(s, InsertOnlyAggregateStage) for s in stages_of(view))
    assert ("Not applied: KeepExtremaOfInsertOnlyInput: the aggregate reads insert-only e, r, but a NOT "
            "EXISTS / NOT IN drops a row") in " ".join(explain_text(view.compiled).split())


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "generic"])
@pytest.mark.parametrize("name", ["grouped over a bag table", "top-k over a bag table, ties"])
def test_a_delete_on_an_insert_only_table_is_rejected_and_leaves_every_state_unchanged(name, compiled):
    updates = insert_only_stream(3)
    view = MaintainedView(QUERIES[name], FLAGGED, compiled=compiled)
    for batch in batches(updates[:200], 40):
        view.apply(batch)
    before = snapshot(view)
    assert before["result"], "the view must hold rows for the check to mean anything"
    present = next(u.row for u in updates[:200] if u.table == "e")
    bad = [Update(201, "e", 1, (0, 0)), Update(202, "e", -1, present)]
    with pytest.raises(InvalidChangeError, match="table e is insert-only.*deletes are not allowed"):
        view.apply(bad)
    assert snapshot(view) == before
    # the view goes on as one that never saw the batch
    with MaintainedView(QUERIES[name], PLAIN) as reference:
        reference.apply(updates[:200])
        for batch in batches(updates[200:], 40):
            assert Counter(dict(view.apply(batch))) == Counter(dict(reference.apply(batch)))
        assert view.result() == reference.result()


def test_quarantine_rejects_the_delete_and_applies_the_rest():
    view = MaintainedView(QUERIES["grouped over a bag table"], FLAGGED, on_invalid="quarantine")
    view.apply([Update(1, "e", 1, (1, 5)), Update(2, "e", 1, (1, 2))])
    view.apply([Update(3, "e", -1, (1, 2)), Update(4, "e", 1, (1, 9))])
    assert [(r.update.seq, "insert-only" in r.reason) for r in view.rejected] == [(3, True)]
    assert view.result() == [(1, 2, 9, 3, 16, 3)]


def test_an_insert_only_table_with_a_primary_key_still_rejects_a_duplicate_key():
    view = MaintainedView(TOP_K["top-k over a foreign-key join"], FLAGGED)
    view.apply([Update(1, "s", 1, (1, 10)), Update(2, "r", 1, (7, 1, 3))])
    with pytest.raises(InvalidChangeError, match="table r.*_seq 3"):
        view.apply([Update(3, "r", 1, (7, 1, 4))])
    assert view.result() == [(7, 10)]


def test_a_failure_after_the_insert_only_aggregate_ran_some_groups_is_undone():
    """Generic runner: the insert-only aggregate raises at its second group of a batch; the journal
    reverts the first (``revert`` returns the old, untouched state) and the batch can be sent again."""
    updates = insert_only_stream(4)
    view = MaintainedView(QUERIES["grouped over a bag table"], FLAGGED, compiled=False)
    view.apply(updates[:100])
    before = snapshot(view)
    stage = next(s for s in stages_of(view) if isinstance(s, InsertOnlyAggregateStage))
    batch = [Update(101, "e", 1, (0, -1)), Update(102, "e", 1, (1, 99)), Update(103, "e", 1, (2, -5))]
    fail_on_call(stage, 2)
    with pytest.raises(InjectedFault):
        view.apply(batch)
    heal(stage)
    assert snapshot(view) == before
    view.apply(batch)
    with MaintainedView(QUERIES["grouped over a bag table"], PLAIN) as reference:
        reference.apply(updates[:100] + batch)
        assert view.result() == reference.result()


def test_a_static_table_counts_as_insert_only_and_its_first_batch_may_cancel_a_row():
    """A static table takes rows only in its first batch; an insert and a delete of one row there net
    to nothing, which the insert-only aggregate accepts (it judges a batch by its net change per row)."""
    catalog = catalog_from_ddl("""
        CREATE TABLE dim (k INT, v INT) TBLPROPERTIES ('ivm.static' = 'true');
        CREATE TABLE facts (k INT, x INT) TBLPROPERTIES ('ivm.insert_only' = 'true');""")
    sql = "select d.v, min(f.x) as lo, max(f.x) as hi from dim d, facts f where d.k = f.k group by d.v"
    for compiled in (True, False):
        view = MaintainedView(sql, catalog, compiled=compiled)
        assert any(isinstance(s, InsertOnlyAggregateStage) for s in stages_of(view))
        view.apply([Update(1, "facts", 1, (1, 5)), Update(2, "dim", 1, (1, 10)), Update(3, "dim", 1, (2, 20)),
                    Update(4, "facts", 1, (2, 7)), Update(5, "dim", -1, (2, 20))])
        assert view.result() == [(10, 5, 5)]
        view.apply([Update(6, "facts", 1, (1, 2)), Update(7, "facts", 1, (1, 8))])
        assert view.result() == [(10, 2, 8)]


@pytest.mark.parametrize("name", ["grouped by the join key (fused into the join stage)", "top-k over a bag table, ties"])
def test_insert_only_stages_and_states_survive_serialization_as_on_spark(name, monkeypatch):
    """Each stage cloudpickled and each key's state pickled between batches, as the Spark runner ships them."""
    monkeypatch.setattr("planner.view.LocalRunner", SerializingRunner)
    view = check_against_recomputation(QUERIES[name], FLAGGED, insert_only_stream(5), batch_size=30,
                                       informative_at_least=0.6, compiled=False)
    assert any(isinstance(s, InsertOnlyAggregateStage | InsertOnlyTopKStage) for s in stages_of(view))
