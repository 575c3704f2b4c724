"""Atomic batches (issue 9, item 4): an error anywhere in a batch leaves every state as before it.

A fault is injected in the middle of a batch, after other keys of the same stage and other stages
already ran it: either a stage that raises for one key (the runner's journal must revert everything
done before), or an expression that raises inside a stage's ``process`` after the stage changed its
state (the stage must put the key back itself). Then every stage's state, the validator's rows, the
result and the rejected list must equal a snapshot taken before the batch, and sending the same
batch again without the fault must give what a view that never failed gives, batch after batch.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import attrs
import pytest
from sortedcontainers import SortedKeyList, SortedList

from catalog.orderbook import orderbook_catalog
from catalog.tpch import tpch_catalog
from operators.runtime.stream import Update, UpdateBatch, batches
from operators.runtime.validate import InvalidChangeError
from operators.stages.aggregate import GroupAggregateStage, ValueCounts
from operators.stages.fused import FusedStage
from operators.stages.nested.general import GeneralNestedStage, GeneralState
from operators.stages.nested.rpai_tree import RpaiTreeStage
from operators.stages.top_k import TopKStage
from operators.stages.view_tree import ViewTreeState
from operators.structures.pai_map import HashAggregateIndex
from operators.structures.ring_relation import RingRelation
from operators.structures.rpai_tree import RPAITree
from planner.compiler import compile_query
from planner.view import MaintainedView
from planner.workloads.orderbook_streams import make_orderbook_stream, make_r_stream

EXAMPLES = Path(__file__).parents[2] / "examples"
Q3 = (EXAMPLES / "tpch" / "q03.sql").read_text()
VWAP = (EXAMPLES / "orderbook" / "vwap.sql").read_text()
JOIN = """select c_name, o_orderkey, o_totalprice, n_name
          from customer, orders, nation
          where c_custkey = o_custkey and c_nationkey = n_nationkey"""
GROUPED = """select o_custkey, count(*) as n, sum(o_totalprice) as total, min(o_orderdate) as first,
                    max(o_totalprice) as largest, count(distinct o_orderpriority) as priorities
             from orders group by o_custkey"""
TOP_K = "select o_orderkey, o_totalprice from orders order by o_totalprice desc, o_orderkey limit 5"


#: The stage faults are armed inside the generic stages' ``process`` (the specification, and the code
#: the Spark processors run), so those scenarios run the generic stages. The compiled runner's own undo
#: is checked at the end of the module, with faults where its program hands over to stage code.
GENERIC = {"compiled": False}


class InjectedFault(RuntimeError):
    pass


# ---------------------------------------------------------------------------------------------
# snapshots: every state as plain values, so that equal contents compare equal whatever the
# object identities, dict orders or tree shapes


def canonical(value):
    if isinstance(value, RPAITree):
        return ("RPAITree", tuple(value.items()))
    if isinstance(value, HashAggregateIndex):
        return ("HashIndex", tuple(value.items()))
    if isinstance(value, SortedList | SortedKeyList):
        return ("sorted", tuple(canonical(v) for v in value))
    if isinstance(value, ValueCounts):
        slots = [s for cls in type(value).__mro__ for s in getattr(cls, "__slots__", ())]
        return (type(value).__name__, tuple((s, canonical(getattr(value, s))) for s in slots))
    if isinstance(value, ViewTreeState):  # a view tree's relations, compared by contents
        return ("ViewTreeState", tuple(canonical(r) for r in value.relations), canonical(value.pending))
    if isinstance(value, RingRelation):
        return ("RingRelation", canonical(value.entries), canonical(value.indexes))
    if isinstance(value, GeneralState):
        fields = {f.name: canonical(getattr(value, f.name)) for f in attrs.fields(type(value))}
        fields["output"] = Counter(value.output)  # a cache of the result rows: their order is free
        return ("GeneralState", fields)
    if attrs.has(type(value)):
        return (type(value).__name__, {f.name: canonical(getattr(value, f.name)) for f in attrs.fields(type(value))})
    if isinstance(value, Counter):
        return ("Counter", {k: v for k, v in value.items() if v})
    if isinstance(value, dict):
        return {key: canonical(v) for key, v in value.items()}
    if isinstance(value, set | frozenset):
        return frozenset(value)
    if isinstance(value, list | tuple):
        return type(value)(canonical(v) for v in value)
    return value


def snapshot(view: MaintainedView) -> dict:
    return {
        "stages": canonical(view.runner.states),
        "validator": view.validator.state(),
        "result": Counter(view.current),
        "rejected": list(view.rejected),
    }


# ---------------------------------------------------------------------------------------------
# faults


def fail_on_call(stage, call: int):
    """Make ``stage`` raise on its ``call``-th key (1-based) of the batch, before processing it: the
    keys before it, and the stages before this one, have already run the batch."""
    calls = {"n": 0}
    for name in ("process", "process_journaled"):
        method = getattr(stage, name, None)
        if method is None:
            continue

        def failing(*args, _method=method):
            calls["n"] += 1
            if calls["n"] == call:
                raise InjectedFault(f"fault injected in {stage.name} at key call {call}")
            return _method(*args)

        object.__setattr__(stage, name, failing)


def heal(stage) -> None:
    for name in ("process", "process_journaled"):
        stage.__dict__.pop(name, None)


def record_stages(view: MaintainedView) -> tuple[list[int], callable]:
    """Record the ids of the stages that process keys, in order, until the returned function stops it."""
    reached: list[int] = []
    armed = []
    for node in view.runner.dataflow.stages:
        for name in ("process", "process_journaled"):
            method = getattr(node.stage, name, None)
            if method is None:
                continue

            def recording(*args, _method=method, _id=node.id):
                if _id not in reached:
                    reached.append(_id)
                return _method(*args)

            object.__setattr__(node.stage, name, recording)
        armed.append(node.stage)
    return reached, lambda: [heal(stage) for stage in armed]


# ---------------------------------------------------------------------------------------------
# the scenario every test runs


def run_with_fault(sql, catalog, updates, batch_size, inject, fail_at: int = 3, **options):
    """Feed ``updates`` in batches to a view that fails once on batch ``fail_at`` (``inject(view,
    batch)`` arms the fault and returns a function that disarms it) and to a view that never fails;
    after the failure every state equals the snapshot before it, and after each later batch the
    two views agree on the result, the validator's rows and every stage's state."""
    options.setdefault("compiled", False)
    chunks = list(batches(updates, batch_size))
    assert len(chunks) > fail_at + 1, "the stream is too short for the scenario"
    with MaintainedView(sql, catalog, strict=True, **options) as view, \
            MaintainedView(sql, catalog, strict=True, **options) as reference:
        for number, batch in enumerate(chunks):
            if number == fail_at:
                # the reference runs the batch first, telling which stages it reaches and in what order
                reached, stop = record_stages(reference)
                expected = Counter(dict(reference.apply(batch)))
                stop()
                before = snapshot(view)
                disarm = inject(view, batch, reached)
                with pytest.raises(InjectedFault):
                    view.apply(batch)
                disarm()
                assert snapshot(view) == before, "a failed batch changed some state"
            else:
                expected = Counter(dict(reference.apply(batch)))
            assert Counter(dict(view.apply(batch))) == expected, f"the result's changes differ at batch {number}"
            if number >= fail_at:
                assert snapshot(view) == snapshot(reference), f"states differ after batch {number}"
        assert view.result(), "the scenario's result is empty: it would not show a wrong undo"


def stage_fault(position: str, call: int = 2):
    """Arm a fault in the first, middle or last stage the batch reaches."""

    def inject(view, batch, reached):
        assert len(reached) >= 2 or position == "first", "the batch reaches one stage only"
        chosen = {"first": reached[0], "middle": reached[len(reached) // 2], "last": reached[-1]}[position]
        stage = view.runner.dataflow.stage(chosen).stage
        fail_on_call(stage, call)
        return lambda: heal(stage)

    return inject


def find_stage(view: MaintainedView, kind: type):
    for node in view.runner.dataflow.stages:
        stage = node.stage
        if isinstance(stage, FusedStage) and isinstance(stage.second, kind):
            return stage.second
        if isinstance(stage, kind):
            return stage
    raise AssertionError(f"no {kind.__name__} in the dataflow")


def expression_fault(kind: type, attribute: str, when):
    """Wrap the compiled expression ``attribute`` of the ``kind`` stage so that it raises when ``when``
    holds (of its argument and its value): the error comes from inside the stage's ``process``."""

    def inject(view, batch, reached):
        stage = find_stage(view, kind)
        original = getattr(stage, attribute)

        doomed = []

        def failing(row):
            # deterministic once chosen, as an expression is: the chosen row fails whenever it is read
            value = original(row)
            if not doomed and when(view, row, value):
                doomed.append(row)
            if doomed and row == doomed[0]:
                raise InjectedFault(f"{attribute} failed on {row!r}")
            return value

        setattr(stage, attribute, failing)
        return lambda: setattr(stage, attribute, original)

    return inject


def on_call(number: int):
    """``when`` for ``expression_fault``: the ``number``-th call in the batch."""
    calls = Counter()

    def when(view, row, value):
        calls["n"] += 1
        return calls["n"] == number

    return when


def on_new_result_row(number: int):
    """``when`` for a select list (``finish``): the ``number``-th result row that is not in the result
    before the batch, so the stage has already taken the batch into its state when it fails."""
    calls = Counter()

    def when(view, row, value):
        if value is None or value in view.current:
            return False
        calls["n"] += 1
        return calls["n"] == number

    return when


BATCH = 4_000


@pytest.fixture(scope="module")
def tpch_prefix(tpch_streams):
    """Customers and nations first, then orders and lineitems with some deletes (the live-dimension
    stream): they join from the start, so the results are not empty."""
    tables = ("customer", "orders", "lineitem", "nation", "part")
    return UpdateBatch(tuple(u for u in tpch_streams["live"] if u.table in tables)[:20_000], checked=True)


def orderbook_stream():
    return make_orderbook_stream(300, 250, seed=5)


# ---------------------------------------------------------------------------------------------
# stage faults: first, middle and last stage, on every kind of plan


@pytest.mark.parametrize(("sql", "position", "call"), [
    (JOIN, "first", 2), (JOIN, "middle", 2), (JOIN, "last", 2),
    (Q3, "first", 2), (Q3, "middle", 2), (Q3, "last", 1),  # foreign-key lookups, a fused aggregate, top-k
    (GROUPED, "first", 2),  # one stage: its second key fails after the first
], ids=lambda value: {JOIN: "fk_join", Q3: "q3", GROUPED: "group_aggregate"}.get(value, str(value)))
def test_a_stage_failing_mid_batch_leaves_every_state_as_before(tpch_prefix, sql, position, call):
    run_with_fault(sql, tpch_catalog(), tpch_prefix, BATCH, stage_fault(position, call))


SELF_JOIN = ("select o1.o_orderkey, o2.o_orderkey from orders o1, orders o2 where o1.o_orderdate = o2.o_orderdate "
             "and o1.o_orderpriority = '1-URGENT' and o2.o_orderpriority = '2-HIGH'")


@pytest.mark.parametrize(("sql", "options"), [
    # a fault in the last stage, after every stage before it ran the batch
    ("select distinct c_nationkey, o_orderpriority from customer, orders where c_custkey = o_custkey", {}),
    ("select o_custkey from orders where o_orderpriority = '1-URGENT' "
     "union select c_custkey from customer where c_nationkey = 3", {}),
    (SELF_JOIN, {"join_strategy": "binary"}),
    ("select l_orderkey, l_linenumber, p_name, o_orderdate from lineitem, orders, part "
     "where l_orderkey = o_orderkey and l_partkey = p_partkey", {}),
    ("select o_orderkey from orders where exists (select * from lineitem where l_orderkey = o_orderkey and l_quantity > 45)",
     {}),
    ("select o_custkey, sum(o_totalprice) from orders group by o_custkey "
     "having sum(o_totalprice) > (select sum(o_totalprice) / 1000 from orders)", {}),
    (SELF_JOIN, {}),  # q-hierarchical through o_orderkey → o_orderdate: a factorized view tree
], ids=["distinct", "union", "binary_join", "live_tuple", "exists", "join_select", "view_tree"])
def test_every_kind_of_stage_is_put_back_when_a_later_stage_fails(tpch_prefix, sql, options):
    run_with_fault(sql, tpch_catalog(), tpch_prefix, BATCH, stage_fault("last", call=2), **options)


@pytest.mark.parametrize(("name", "strategy", "position"), [
    # the first stage of these is keyed by a constant: a fault on its one key precedes all work, so
    # the faults sit where stages before them already ran the batch
    ("mst", None, "middle"), ("mst", None, "last"),  # RPAI trees, then their product
    ("mst", "general", "middle"), ("mst", "general", "last"),
    ("psp", None, "middle"), ("psp", None, "last"),  # per-key indexes, their sums, their product
])
def test_a_nested_stage_failing_mid_batch_leaves_every_state_as_before(name, strategy, position):
    sql = (EXAMPLES / "orderbook" / f"{name}.sql").read_text()
    run_with_fault(sql, orderbook_catalog(), orderbook_stream(), 60, stage_fault(position, call=1), nested_strategy=strategy)


def test_the_pai_map_failing_mid_batch_leaves_every_state_as_before():
    run_with_fault((EXAMPLES / "orderbook" / "ex21.sql").read_text(), orderbook_catalog(), make_r_stream(400, seed=2),
                   40, stage_fault("first", call=2))


# ---------------------------------------------------------------------------------------------
# faults inside a stage's process, after it changed the key's state


def test_an_aggregate_failing_in_its_select_list_puts_its_group_back(tpch_prefix):
    # finish runs over the new state, after the sums and the MIN/MAX multisets took the batch
    run_with_fault(GROUPED, tpch_catalog(), tpch_prefix, BATCH,
                   expression_fault(GroupAggregateStage, "finish", on_new_result_row(5)))


def test_an_aggregate_failing_on_an_argument_mid_group_puts_its_group_back(tpch_prefix):
    # a customer with several orders in the batch fails on its second one, after the first already
    # went into the group's sums and its MIN/MAX and DISTINCT multisets
    def inject(view, batch, reached):
        stage = find_stage(view, GroupAggregateStage)
        index = next(i for i, spec in enumerate(stage.aggregates) if spec.func == "max")
        argument, update = stage._updates[index]
        per_group, doomed = Counter(), []

        def failing(row):
            # deterministic once chosen: the same row fails again if evaluated again, no other row does
            if not doomed:
                per_group[stage.key_of(0, row)] += 1
                if per_group[stage.key_of(0, row)] == 2:
                    doomed.append(row)
            if doomed and row == doomed[0]:
                raise InjectedFault(f"argument failed on {row!r}")
            return argument(row)

        original = stage._updates
        stage._updates = (*original[:index], (failing, update), *original[index + 1 :])
        return lambda: setattr(stage, "_updates", original)

    run_with_fault(GROUPED, tpch_catalog(), tpch_prefix, BATCH, inject)


def test_top_k_failing_on_a_sort_key_leaves_its_list_as_before(tpch_prefix):
    run_with_fault(TOP_K, tpch_catalog(), tpch_prefix, BATCH, expression_fault(TopKStage, "order_key", on_call(10)))


def test_the_rpai_tree_failing_in_its_output_takes_back_the_batch():
    # the tree and the uncorrelated total took the batch; the new result row's finish then fails
    run_with_fault(VWAP, orderbook_catalog(), orderbook_stream(), 60, expression_fault(RpaiTreeStage, "finish", on_new_result_row(1)))


def test_the_general_algorithm_failing_on_its_predicate_takes_back_the_batch():
    # the predicate is read over the result map after every map took the batch
    run_with_fault(VWAP, orderbook_catalog(), orderbook_stream(), 60, expression_fault(GeneralNestedStage, "predicate", on_call(40)),
                   nested_strategy="general")


# ---------------------------------------------------------------------------------------------
# validation errors


def with_duplicate(batch: UpdateBatch) -> tuple[list[Update], Update]:
    """The batch with, in its middle, a second insert of a row it inserted earlier."""
    updates = list(batch)
    middle = len(updates) // 2
    victim = next(u for u in reversed(updates[:middle]) if u.op == 1 and u.table in ("orders", "lineitem"))
    duplicate = Update(seq=updates[middle - 1].seq, table=victim.table, op=1, row=victim.row)
    return [*updates[:middle], duplicate, *updates[middle:]], duplicate


def test_a_duplicate_key_mid_batch_rejects_the_whole_batch_and_the_fixed_batch_then_applies(tpch_prefix):
    chunks = list(batches(tpch_prefix, BATCH))
    with MaintainedView(Q3, tpch_catalog(), strict=True) as view, MaintainedView(Q3, tpch_catalog()) as reference:
        for batch in chunks[:3]:
            view.apply(batch)
            reference.apply(batch)
        bad, duplicate = with_duplicate(chunks[3])
        before = snapshot(view)
        with pytest.raises(InvalidChangeError, match="duplicate primary key") as error:
            view.apply(bad)
        assert error.value.update == duplicate
        assert snapshot(view) == before
        for batch in chunks[3:]:
            assert Counter(dict(view.apply(batch))) == Counter(dict(reference.apply(batch)))
        assert snapshot(view) == snapshot(reference)
        assert view.result()


def test_a_duplicate_key_mid_batch_is_quarantined_and_the_rest_applies(tpch_prefix):
    chunks = list(batches(tpch_prefix, BATCH))
    with MaintainedView(Q3, tpch_catalog(), on_invalid="quarantine") as view, \
            MaintainedView(Q3, tpch_catalog()) as reference:
        bad, duplicate = with_duplicate(chunks[3])
        for batch in chunks:
            changes = view.apply(bad if batch is chunks[3] else batch)
            assert Counter(dict(changes)) == Counter(dict(reference.apply(batch)))
        assert [r.update for r in view.rejected] == [duplicate]
        assert "duplicate primary key" in view.rejected[0].reason
        assert snapshot(view)["stages"] == snapshot(reference)["stages"]
        assert view.validator.state() == reference.validator.state()


def test_quarantined_updates_of_a_batch_a_stage_failed_on_are_not_kept(tpch_prefix):
    chunks = list(batches(tpch_prefix, BATCH))
    with MaintainedView(Q3, tpch_catalog(), on_invalid="quarantine") as view:
        for batch in chunks[:3]:
            view.apply(batch)
        bad, duplicate = with_duplicate(chunks[3])
        before = snapshot(view)
        stage = view.runner.dataflow.stages[-1].stage
        fail_on_call(stage, 1)
        with pytest.raises(InjectedFault):
            view.apply(bad)
        heal(stage)
        assert snapshot(view) == before  # the rejected list too: the batch did not happen
        view.apply(bad)
        assert [r.update for r in view.rejected] == [duplicate]


# ---------------------------------------------------------------------------------------------
# Spark: the failed micro-batch is not committed, and the view commits nothing either


@pytest.mark.spark
def test_on_spark_a_failed_batch_commits_nothing(tpch_tables, tmp_path, monkeypatch):
    from operators.runtime.run_errors import SparkBatchError
    from operators.runtime.spark_session import make_spark_session

    orders = tpch_tables["orders"][:20]
    poisoned_group = (orders[-1][1],)  # the last order's customer: its group's select list fails
    orders = [row for row in orders[:-1] if (row[1],) != poisoned_group] + [orders[-1]]

    def compile_with_fault(sql, catalog, **options):
        # the fault must be in the stages before the Spark query starts (they are shipped to workers)
        compiled = compile_query(sql, catalog, **options)
        stage = compiled.dataflow.stages[0].stage
        stage.finish = _raising_on_group(stage.finish, poisoned_group)
        return compiled

    monkeypatch.setattr("planner.view.compile_query", compile_with_fault)
    updates = [Update(seq, "orders", 1, row) for seq, row in enumerate(orders, start=1)]
    spark = make_spark_session(app="spark-ivm-atomic-tests")
    with MaintainedView(GROUPED, tpch_catalog(), engine="spark", spark=spark, work_dir=str(tmp_path)) as view:
        view.apply(updates[:10])
        before = view.result()
        assert before
        with pytest.raises(SparkBatchError, match="poisoned group"):
            view.apply(updates[10:])
        assert view.result() == before and view.rejected == []
        checkpoint = tmp_path / "checkpoint"
        planned = {p.name for p in (checkpoint / "offsets").iterdir() if p.name.isdigit()}
        committed = {p.name for p in (checkpoint / "commits").iterdir() if p.name.isdigit()}
        assert planned == committed == {"0"}, "the failed micro-batch is neither committed nor left planned"
        # the batch was withdrawn: the same view goes on with the input fixed
        view.apply(updates[10:-1])
        with MaintainedView(GROUPED, tpch_catalog()) as local:
            local.apply(updates[:-1])
            assert view.result() == local.result() != before


def _raising_on_group(finish, group):
    def checked(row):
        if row[: len(group)] == group:
            raise ValueError(f"poisoned group {group!r}")
        return finish(row)

    return checked


def test_a_fused_stage_is_atomic_per_key_on_its_own_as_on_spark(tpch_prefix):
    # On Spark each key's process runs alone (no runner journal): the fused stage must undo its first
    # stage's step and its inner keys itself when the inner aggregate fails for the key
    chunks = list(batches(tpch_prefix, BATCH))
    with MaintainedView(Q3, tpch_catalog(), **GENERIC) as view, MaintainedView(Q3, tpch_catalog(), **GENERIC) as reference:
        for batch in chunks[:4]:
            view.apply(batch)
            reference.apply(batch)
        node = next(n for n in view.runner.dataflow.stages if isinstance(n.stage, FusedStage))
        reference_stage = reference.runner.dataflow.stage(node.id).stage
        calls = []

        def recording(key, state, changes, journal):
            new_state, out = FusedStage.process_journaled(reference_stage, key, state, changes, journal)
            calls.append((key, changes, state is not None and bool(out)))
            return new_state, out

        reference_stage.process_journaled = recording
        reference.apply(chunks[4])  # the first batch where an order with lineitems gets more
        states, fused = view.runner.states[node.id], node.stage
        # fail on the last key that had a state and whose inner aggregate emitted: both halves ran
        doomed_key = [key for key, _, both in calls if both][-1]
        original = fused.second.finish
        fused.second.finish = lambda row: _raise(row) if doomed[0] else original(row)
        doomed = [False]
        for key, changes, _ in calls:
            doomed[0] = key == doomed_key
            if doomed[0]:
                before = canonical(states.get(key))
                with pytest.raises(InjectedFault):
                    fused.process(key, states.get(key), changes)
                assert canonical(states.get(key)) == before
                continue
            new_state, _ = fused.process(key, states.get(key), changes)
            if new_state is None:
                states.pop(key, None)
            else:
                states[key] = new_state
        fused.second.finish = original


def _raise(row):
    raise InjectedFault(f"finish failed on {row!r}")


# ---------------------------------------------------------------------------------------------
# the compiled runner (operators/runtime/compiled/runner.py): its inline steps replayed negated, its ring
# aggregates' groups put back, its generic stages journaled


@pytest.mark.parametrize("sql", [
    Q3,  # foreign-key lookups and a ring aggregate (compiled), then top-k (a stage)
    TOP_K,
    "select distinct c_nationkey, o_orderpriority from customer, orders where c_custkey = o_custkey",
    "select o_custkey from orders where o_orderpriority = '1-URGENT' "
    "union select c_custkey from customer where c_nationkey = 3",
    "select o_custkey, sum(o_totalprice) from orders group by o_custkey "
    "having sum(o_totalprice) > (select sum(o_totalprice) / 1000 from orders)",
    # lineitem's indexes and live tuple fused into one relation (operators/stages/live_relation.py), then top-k
    "select l_orderkey, l_linenumber, p_name, o_orderdate from lineitem, orders, part "
    "where l_orderkey = o_orderkey and l_partkey = p_partkey order by o_orderdate, l_orderkey, l_linenumber limit 20",
], ids=["q3", "top_k", "distinct", "union", "join_select", "live_tuple"])
def test_the_compiled_runner_puts_back_every_state_when_a_stage_after_its_program_fails(tpch_prefix, sql):
    # the first stage the batch reaches that is not compiled, on its first key: after the whole program
    run_with_fault(sql, tpch_catalog(), tpch_prefix, BATCH, stage_fault("first", call=1), compiled=True)


def test_the_compiled_ring_aggregate_failing_in_its_select_list_puts_back_the_batch(tpch_prefix):
    # the lookups and the groups took the whole batch; the second new result row's select list fails
    run_with_fault(Q3, tpch_catalog(), tpch_prefix, BATCH,
                   expression_fault(GroupAggregateStage, "finish", on_new_result_row(2)), compiled=True)


# ---------------------------------------------------------------------------------------------
# the view's own step of a batch: keeping the result's changes in its ordered result


def result_fault(view, batch, reached):
    """Make the view's ordered result refuse the batch's result changes (after every stage ran it): the
    stages must be undone with the validator's rows, as for a stage's fault."""

    def failing(delta):
        raise InjectedFault("fault injected keeping the result's changes")

    view.ordered.apply = failing
    return lambda: vars(view.ordered).pop("apply")


@pytest.mark.parametrize("compiled", [False, True], ids=["generic", "compiled"])
@pytest.mark.parametrize("sql", [Q3, TOP_K], ids=["q3", "top_k"])
def test_a_failure_keeping_the_result_puts_back_the_stages_too(tpch_prefix, sql, compiled):
    # UpdateBatch input takes the general path (validate, then runner.apply) on both runners
    run_with_fault(sql, tpch_catalog(), tpch_prefix, BATCH, result_fault, compiled=compiled)
