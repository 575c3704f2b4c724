import logging

import attrs
import pytest

from planner.ir.logical import LogicalPlan
from planner.optimizer.executor import (
    Batch,
    FixedPoint,
    Once,
    OptimizerError,
    Rule,
    RuleExecutor,
)

LOGGER = "spark_ivm.optimizer"


@attrs.frozen
class Leaf(LogicalPlan):
    name: str


@attrs.frozen
class Wrap(LogicalPlan):
    child_fields = ("child",)
    child: LogicalPlan


@attrs.frozen
class Bag(LogicalPlan):
    """A node holding a list, so it cannot be hashed."""

    items: list


def wrapped(depth: int, leaf: LogicalPlan) -> LogicalPlan:
    for _ in range(depth):
        leaf = Wrap(leaf)
    return leaf


class PeelOneWrap(Rule):
    """Removes the outermost Wrap only, so peeling n layers takes n iterations."""

    def apply(self, plan, ctx):
        return plan.child if isinstance(plan, Wrap) else plan


class AddWrap(Rule):
    """Never settles."""

    def apply(self, plan, ctx):
        return Wrap(plan)


@attrs.frozen
class RenameLeaf(Rule):
    old: str
    new: str

    def apply(self, plan, ctx):
        return plan.transform_up(lambda node: Leaf(self.new) if node == Leaf(self.old) else node)


class ToggleLeaf(Rule):
    """a → b → a: an oscillation across iterations."""

    def apply(self, plan, ctx):
        match plan:
            case Leaf("a"):
                return Leaf("b")
            case Leaf("b"):
                return Leaf("a")
        return plan


class RebuildEqualCopy(Rule):
    """Breaks the contract: returns an equal plan that is a new object."""

    def apply(self, plan, ctx):
        return attrs.evolve(plan)


class ReverseBag(Rule):
    def apply(self, plan, ctx):
        return Bag(plan.items[::-1])


class Explode(Rule):
    def apply(self, plan, ctx):
        raise ValueError("boom")


class ReturnNothing(Rule):
    def apply(self, plan, ctx):
        return None


def run(*batches, strict=True, plan=Leaf("a"), ctx=None, **options):
    return RuleExecutor(batches, strict=strict, **options).execute(plan, ctx)


def test_rule_name_is_its_class_name():
    assert PeelOneWrap().name == "PeelOneWrap"
    assert RenameLeaf("a", "b").name == "RenameLeaf"


def test_fixed_point_repeats_until_an_iteration_changes_nothing():
    plan, trace = run(Batch("peel", FixedPoint(10), (PeelOneWrap(),)), plan=wrapped(3, Leaf("x")))
    assert plan == Leaf("x")
    assert [(r.iteration, r.effective) for r in trace.runs] == [(1, True), (2, True), (3, True), (4, False)]


def test_trace_records_batch_iteration_rule_plans_and_time():
    start = wrapped(1, Leaf("a"))
    _, trace = run(
        Batch("rename", Once(), (RenameLeaf("a", "b"),)),
        Batch("peel", FixedPoint(5), (PeelOneWrap(), RenameLeaf("zzz", "y"))),
        plan=start,
    )
    rows = [(r.batch, r.iteration, r.rule, r.effective) for r in trace.runs]
    assert rows == [
        ("rename", 1, "RenameLeaf", True),
        ("rename", 2, "RenameLeaf", False),  # the strict idempotence re-run
        ("peel", 1, "PeelOneWrap", True),
        ("peel", 1, "RenameLeaf", False),
        ("peel", 2, "PeelOneWrap", False),
        ("peel", 2, "RenameLeaf", False),
    ]
    assert trace.runs[0].before is start and trace.runs[0].after == Wrap(Leaf("b"))
    assert all(r.elapsed_s >= 0 for r in trace.runs)
    assert trace.effective_runs() == [trace.runs[0], trace.runs[2]]


def test_rules_applied_lists_effective_rules_once_in_order_of_first_change():
    _, trace = run(
        Batch("wrap", Once(), (AddWrap(),)),
        Batch(
            "peel then rename", FixedPoint(5), (RenameLeaf("nope", "x"), PeelOneWrap(), RenameLeaf("a", "b"))
        ),
        Batch("wrap again", Once(), (AddWrap(),)),
        strict=False,
    )
    assert trace.rules_applied() == ["AddWrap", "PeelOneWrap", "RenameLeaf"]


def test_context_is_passed_to_rules_untouched():
    seen = []

    class RecordContext(Rule):
        def apply(self, plan, ctx):
            seen.append(ctx)
            return plan

    ctx = object()
    run(Batch("record", FixedPoint(3), (RecordContext(),)), ctx=ctx)
    assert seen == [ctx]


def test_strict_fixed_point_past_max_iterations_raises_naming_the_batch():
    with pytest.raises(
        OptimizerError, match=r"batch 'grow' did not reach a fixed point within 4 iterations.*AddWrap"
    ):
        run(Batch("grow", FixedPoint(4), (AddWrap(),)))


def test_non_strict_fixed_point_past_max_iterations_warns_and_keeps_the_last_plan(caplog):
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        plan, trace = run(Batch("grow", FixedPoint(4), (AddWrap(),)), strict=False)
    assert plan == wrapped(4, Leaf("a"))
    assert len(trace.runs) == 4
    [record] = caplog.records
    assert record.levelno == logging.WARNING
    assert "batch 'grow' did not reach a fixed point within 4 iterations" in record.getMessage()


def test_strict_once_batch_that_changes_the_plan_when_rerun_raises_naming_the_rule():
    with pytest.raises(OptimizerError, match=r"batch 'grow' runs Once but is not idempotent.*AddWrap"):
        run(Batch("grow", Once(), (RenameLeaf("a", "b"), AddWrap())))


def test_non_strict_once_batch_runs_one_time():
    plan, trace = run(Batch("grow", Once(), (AddWrap(),)), strict=False)
    assert plan == Wrap(Leaf("a"))
    assert len(trace.runs) == 1


def test_strict_oscillation_is_reported_naming_the_batch_and_the_rules_that_changed_the_plan():
    with pytest.raises(OptimizerError, match=r"batch 'flip' oscillates") as raised:
        # Peeling changes iteration 1 only; the cycle b → a → b is ToggleLeaf's alone.
        run(Batch("flip", FixedPoint(100), (PeelOneWrap(), ToggleLeaf())), plan=wrapped(1, Leaf("a")))
    assert "ToggleLeaf" in str(raised.value)
    assert "PeelOneWrap" not in str(raised.value)


def test_non_strict_oscillation_warns_and_stops_with_the_last_plan(caplog):
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        plan, trace = run(Batch("flip", FixedPoint(100), (ToggleLeaf(),)), strict=False)
    assert plan == Leaf("a")
    assert len(trace.runs) == 2
    assert "batch 'flip' oscillates" in caplog.text


def test_rule_rebuilding_an_equal_plan_is_reported_at_once_not_iterated_to_the_limit():
    with pytest.raises(OptimizerError, match=r"iteration 1 returned to an earlier plan.*RebuildEqualCopy"):
        run(Batch("copy", FixedPoint(100), (RebuildEqualCopy(),)))


def test_oscillation_of_unhashable_plans_is_found_by_equality():
    with pytest.raises(OptimizerError, match=r"iteration 2 returned to an earlier plan.*ReverseBag"):
        run(Batch("reverse", FixedPoint(100), (ReverseBag(),)), plan=Bag([1, 2]))


def test_rule_exception_is_wrapped_naming_batch_and_rule():
    with pytest.raises(
        OptimizerError, match=r"rule Explode in batch 'fragile' failed: ValueError: boom"
    ) as raised:
        run(Batch("fragile", FixedPoint(3), (PeelOneWrap(), Explode())))
    assert isinstance(raised.value.__cause__, ValueError)


def test_rule_returning_none_is_an_error_naming_the_rule():
    with pytest.raises(OptimizerError, match=r"rule ReturnNothing in batch 'lazy' returned None"):
        run(Batch("lazy", Once(), (ReturnNothing(),)))


def test_debug_log_shows_a_diff_of_each_effective_run_in_the_rendered_notation(caplog):
    def render(plan):
        return "\n".join(f"{'  ' * depth}{node.node_name}" for depth, node in enumerate(plan.walk()))

    with caplog.at_level(logging.DEBUG, logger=LOGGER):
        run(Batch("peel", FixedPoint(5), (PeelOneWrap(),)), plan=wrapped(1, Leaf("a")), render=render)
    [record] = caplog.records
    message = record.getMessage()
    assert "batch 'peel' iteration 1: PeelOneWrap changed the plan" in message
    assert "-Wrap" in message and "-  Leaf" in message and "+Leaf" in message


class CollapseDoubleWrap(Rule):
    """States only what it does to the node in hand; the executor walks the plan."""

    def rewrite(self, node, ctx):
        match node:
            # wrap(wrap(x)) = wrap(x)
            case Wrap(Wrap(inner)):
                return Wrap(inner)
        return node


def test_a_rule_that_only_rewrites_the_node_in_hand_is_walked_bottom_up_by_the_executor():
    plan, trace = RuleExecutor([Batch("collapse", Once(), [CollapseDoubleWrap()])], strict=True).execute(
        wrapped(4, Leaf("x")), None)
    assert plan == Wrap(Leaf("x"))  # children first: one bottom-up pass collapses every layer
    assert trace.rules_applied() == ["CollapseDoubleWrap"]
    untouched = Wrap(Leaf("y"))
    assert CollapseDoubleWrap().apply(untouched, None) is untouched  # no effect is the same object
