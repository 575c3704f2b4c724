"""Assertions for tests that state plans as text: before and after in the plan notation.

Expected text may be indented to sit inside a test (``textwrap.dedent`` and ``strip`` normalise it);
a mismatch fails with a unified diff of the printed plans.
"""

from __future__ import annotations

import difflib
import textwrap
from typing import Any, Protocol

from planner.ir.logical import LogicalPlan
from planner.ir.notation import parse_plan, print_plan


class PlanRewrite(Protocol):
    """What the assertions need of a rule: only ``apply`` (a protocol, so they do not tie tests to
    ``executor.Rule``, the class every rule derives from)."""

    def apply(self, plan: LogicalPlan, ctx: Any) -> LogicalPlan: ...


def assert_plan_text(actual_plan: LogicalPlan, expected_text: str) -> None:
    """Fail with a diff unless ``actual_plan`` prints as ``expected_text``."""
    actual, expected = print_plan(actual_plan), _normalized(expected_text)
    if actual != expected:
        diff = difflib.unified_diff(
            expected.splitlines(), actual.splitlines(), "expected", "actual", lineterm=""
        )
        raise AssertionError("plan differs from the expected text:\n" + "\n".join(diff))


def assert_rewrite(rule: PlanRewrite, before: str, after: str, ctx: Any) -> None:
    """``rule`` turns the plan ``before`` into the plan ``after``."""
    assert_plan_text(rule.apply(parse_plan(before), ctx), after)


def assert_unchanged(rule: PlanRewrite, plan_text: str, ctx: Any) -> None:
    """``rule`` does not fire on ``plan_text``: it returns the very same plan object."""
    plan = parse_plan(plan_text)
    result = rule.apply(plan, ctx)
    assert_plan_text(result, print_plan(plan))
    if result is not plan:
        raise AssertionError(
            f"{type(rule).__name__} returned an equal but new plan; a rule that changes nothing "
            "must return the same object"
        )


def _normalized(text: str) -> str:
    return "\n".join(line.rstrip() for line in textwrap.dedent(text).strip().splitlines())
