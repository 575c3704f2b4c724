"""EXPLAIN's headline: the strategies the plan uses, and what an update costs, read off the stage rows.

The strategies are the plan's ``guarantee()``, composed bottom-up by its nodes (a UNION ALL of two
aggregates names both relations; a nested aggregate over one relation names both its parts). The
cost quotes the stage rows' costs that no other stage's cost dominates, naming their stages, so the
headline can say neither less nor more than a stage row (issue 28: "every change is O(1)" above an
O(n log n) stage); and it is checked against the guarantee: a stage cost above every cost the plan's
nodes promise is marked in the headline (the golden files hold none). How a cost's text is read and
compared: ``planner/ir/guarantee.py``.
"""

from __future__ import annotations

from planner.compiler import CompiledQuery
from planner.ir.guarantee import Cost, Guarantee, costs_of


def strategy_names(compiled: CompiledQuery) -> list[str]:
    """Each maintenance algorithm of the plan once: the relations maintained alone (a block of one
    table, a subquery's own table) in one name first, then the others innermost first."""
    return compiled.plan.guarantee().names()


def worst_costs(update_costs: dict[int, str]) -> list[tuple[str, list[int]]]:
    """The costs no other stage's cost dominates, each with the stages that state it, in stage order."""
    stated = [(stage, cost) for stage, text in update_costs.items() for cost in costs_of(text)]
    worst: dict[str, list[int]] = {}
    for stage, cost in stated:
        if any(cost.at_most(other) and not other.at_most(cost) for _, other in stated):
            continue
        if stage not in worst.setdefault(cost.text, []):
            worst[cost.text].append(stage)
    return list(worst.items())


def cost_line(update_costs: dict[int, str], guarantee: Guarantee | None = None) -> str:
    """``O(λ) amortized ([0], [1]); O(log n + k) per batch ([2])``: the headline's cost, a cost above
    every cost ``guarantee`` promises marked as such."""
    return "; ".join(f"{text} ({', '.join(f'[{s}]' for s in stages)})" + _beyond(text, update_costs, stages, guarantee)
                     for text, stages in worst_costs(update_costs))


def _beyond(text: str, update_costs: dict[int, str], stages: list[int], guarantee: Guarantee | None) -> str:
    cost = next(c for c in costs_of(update_costs[stages[0]]) if c.text == text)
    if guarantee is None or not guarantee.exceeded_by(cost):
        return ""
    return f" beyond the plan's guarantee ({', '.join(c.text for c in guarantee.costs) or 'none stated'})"


def contradictions(update_costs: dict[int, str], guarantee: Guarantee) -> list[Cost]:
    """The stage costs above every cost the plan's guarantee states (none, when nodes and stages agree)."""
    return [cost for text in update_costs.values() for cost in costs_of(text) if guarantee.exceeded_by(cost)]
