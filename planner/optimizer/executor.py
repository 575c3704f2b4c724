"""Run batches of rewrite rules over a plan and record every run (Catalyst's RuleExecutor).

The optimizer is one list of named batches; a batch applies its rules in order, either once or
repeatedly until the plan stops changing. "Stops changing" is an identity check, because a rule that
does not fire returns the very object it was given (see ``planner/ir/logical.py``). Every rule run goes
into a ``PlanTrace``, which the debug log and EXPLAIN VERBOSE both read. Under test the executor is
strict: a batch that does not settle (no fixed point, oscillation, a ``Once`` batch that is not
idempotent) raises, so a bad rule fails its test instead of quietly costing time in production,
where the executor only warns and keeps the last plan.
"""

from __future__ import annotations

import difflib
import logging
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeAlias

import attrs

# Logical plans and, after lowering, maintenance plans: any frozen value the rules understand.
Plan: TypeAlias = Any


class OptimizerError(Exception):
    """A rule failed, or a batch did not settle (no fixed point, oscillation, non-idempotent Once)."""


class Rule:
    """One rewrite with one entry point; its name is its class name.

    A rule states what it does to the node in hand (``rewrite``, a ``match`` with a law per case) and
    the executor walks the plan, bottom-up (DataFusion's ``apply_order`` Up, Catalyst's
    ``transformUp``): children are rewritten before their parent sees them. A rule that must see the
    whole plan at once (a pass over several nodes) overrides ``apply`` instead.
    """

    @property
    def name(self) -> str:
        return type(self).__name__

    def apply(self, plan: Plan, ctx: Any) -> Plan:
        """The rewritten plan, or ``plan`` itself (the same object) when the rule does not fire."""
        return plan.transform_up(lambda node: self.rewrite(node, ctx))

    def rewrite(self, node: Plan, ctx: Any) -> Plan:
        """The node in hand rewritten (its children already are), or ``node`` itself."""
        raise NotImplementedError(f"{self.name} defines neither rewrite nor apply")


@attrs.frozen
class Once:
    """Run the batch one time; in strict mode a second run must change nothing."""


@attrs.frozen
class FixedPoint:
    """Repeat the batch until an iteration changes nothing, at most ``max_iterations`` times."""

    max_iterations: int = attrs.field(validator=attrs.validators.ge(1))


@attrs.frozen
class Batch:
    name: str
    strategy: Once | FixedPoint
    rules: tuple[Rule, ...] = attrs.field(converter=tuple)


@attrs.frozen
class RuleRun:
    """One application of one rule: what went in, what came out, and how long it took."""

    batch: str
    iteration: int
    rule: str
    before: Plan
    after: Plan
    elapsed_s: float
    effective: bool = attrs.field(init=False)

    @effective.default
    def _changed_the_plan(self) -> bool:
        return self.after is not self.before


@attrs.define
class PlanTrace:
    """Every rule run of one optimization, in order."""

    runs: list[RuleRun] = attrs.Factory(list)

    def effective_runs(self) -> list[RuleRun]:
        return [run for run in self.runs if run.effective]

    def rules_applied(self) -> list[str]:
        """Names of the rules that changed the plan, each once, in order of their first change."""
        return _effective_rule_names(self.runs)


def _effective_rule_names(runs: Sequence[RuleRun]) -> list[str]:
    return list(dict.fromkeys(run.rule for run in runs if run.effective))


class _PlanHistory:
    """Plans seen during one fixpoint, each with the trace length when it appeared.

    Looked up by hash; a plan holding something unhashable falls back to a scan with ``==``.
    """

    def __init__(self) -> None:
        self._hashed: dict[Plan, int] = {}
        self._unhashable: list[tuple[Plan, int]] = []

    def add(self, plan: Plan, trace_position: int) -> None:
        try:
            self._hashed.setdefault(plan, trace_position)
        except TypeError:
            self._unhashable.append((plan, trace_position))

    def position_of(self, plan: Plan) -> int | None:
        try:
            return self._hashed.get(plan)
        except TypeError:
            return next((position for seen, position in self._unhashable if seen == plan), None)


class RuleExecutor:
    """Runs ``batches`` in order; ``strict`` turns a batch that does not settle into an error.

    ``render`` turns a plan into text for the debug diff of each effective rule run.
    """

    def __init__(
        self,
        batches: Iterable[Batch],
        strict: bool = False,
        logger: logging.Logger | None = None,
        render: Callable[[Plan], str] = repr,
    ) -> None:
        self.batches = tuple(batches)
        self.strict = strict
        self.logger = logger or logging.getLogger("spark_ivm.optimizer")
        self.render = render

    def execute(self, plan: Plan, ctx: Any) -> tuple[Plan, PlanTrace]:
        trace = PlanTrace()
        for batch in self.batches:
            if isinstance(batch.strategy, Once):
                plan = self._run_once(batch, plan, ctx, trace)
            else:
                plan = self._run_to_fixed_point(batch, plan, ctx, trace)
        return plan, trace

    def _run_once(self, batch: Batch, plan: Plan, ctx: Any, trace: PlanTrace) -> Plan:
        plan = self._run_rules(batch, 1, plan, ctx, trace)
        if self.strict:
            rerun_start = len(trace.runs)
            self._run_rules(batch, 2, plan, ctx, trace)
            changed_by = _effective_rule_names(trace.runs[rerun_start:])
            if changed_by:
                raise OptimizerError(
                    f"batch {batch.name!r} runs Once but is not idempotent: running it again "
                    f"changed the plan in {', '.join(changed_by)}"
                )
        return plan

    def _run_to_fixed_point(self, batch: Batch, plan: Plan, ctx: Any, trace: PlanTrace) -> Plan:
        history = _PlanHistory()
        history.add(plan, len(trace.runs))
        for iteration in range(1, batch.strategy.max_iterations + 1):
            iteration_start = len(trace.runs)
            new_plan = self._run_rules(batch, iteration, plan, ctx, trace)
            if new_plan is plan:
                return plan
            first_seen = history.position_of(new_plan)
            if first_seen is not None:
                cycle = ", ".join(_effective_rule_names(trace.runs[first_seen:]))
                self._did_not_settle(
                    f"batch {batch.name!r} oscillates: iteration {iteration} returned to an earlier "
                    f"plan (changed by {cycle}; a rule that rebuilds an equal plan instead of "
                    f"returning the same object also counts)"
                )
                return new_plan
            history.add(new_plan, len(trace.runs))
            plan = new_plan
        last_changed_by = ", ".join(_effective_rule_names(trace.runs[iteration_start:]))
        self._did_not_settle(
            f"batch {batch.name!r} did not reach a fixed point within "
            f"{batch.strategy.max_iterations} iterations (last changed by {last_changed_by})"
        )
        return plan

    def _run_rules(self, batch: Batch, iteration: int, plan: Plan, ctx: Any, trace: PlanTrace) -> Plan:
        for rule in batch.rules:
            started = time.perf_counter()
            try:
                after = rule.apply(plan, ctx)
            except Exception as error:
                raise OptimizerError(
                    f"rule {rule.name} in batch {batch.name!r} failed: {type(error).__name__}: {error}"
                ) from error
            if after is None:
                raise OptimizerError(
                    f"rule {rule.name} in batch {batch.name!r} returned None instead of a plan "
                    f"(a rule that does not fire returns its input plan)"
                )
            run = RuleRun(batch.name, iteration, rule.name, plan, after, time.perf_counter() - started)
            trace.runs.append(run)
            if run.effective:
                self._log_diff(run)
            plan = after
        return plan

    def _log_diff(self, run: RuleRun) -> None:
        if not self.logger.isEnabledFor(logging.DEBUG):
            return
        diff = difflib.unified_diff(
            self.render(run.before).splitlines(),
            self.render(run.after).splitlines(),
            "before",
            "after",
            lineterm="",
        )
        self.logger.debug(
            "batch %r iteration %d: %s changed the plan\n%s",
            run.batch,
            run.iteration,
            run.rule,
            "\n".join(diff),
        )

    def _did_not_settle(self, message: str) -> None:
        if self.strict:
            raise OptimizerError(message)
        self.logger.warning("%s; keeping the last plan", message)
