"""EXPLAIN's headline: the strategies the plan uses, and what an update costs, read off the stage rows.

The strategy names every maintenance algorithm in the plan, bottom up (a UNION ALL of two aggregates
names both relations; a nested aggregate over one relation names both its parts). The cost is not
written here: it quotes the stage rows' costs that no other stage's cost dominates, naming their
stages, so the headline can say neither less nor more than a stage row (issue 28: "every change is
O(1)" above an O(n log n) stage).

A stage's cost is text (``StageDescription.update_cost``) such as ``O(1) per tuple; O(group) when the
child turns (non-)live: O(λ) amortized``. Its terms ``O(...)`` are read as sums of monomials: n, N
and M are sizes (``n log n`` is n¹·log¹), any other word is a quantity of its own (``k``, ``λ``,
``group``, ``rows that flip``). One term is at most another when each of its monomials is at most
one of the other's (a monomial is at most another when every quantity it has appears there with an
exponent at least as large: (power, log power) in that order). Within one clause an amortized term
replaces the worst-case one it amortizes; a cost per batch is compared only with costs per batch.
A cost without a term, or that opens with "no" (``no bound claimed: ...``), is kept as it is and
dominates nothing.
"""

from __future__ import annotations

import re

import attrs

from planner.compiler import CompiledQuery
from planner.explain_gjt import gjt_of
from planner.explain_heavy_light import heavy_light_of
from planner.explain_view_tree import view_tree_of
from planner.ir.logical import LogicalPlan, SetOperation
from planner.ir.maintenance import ChangePropagationJoin, ForeignKeyJoin, NestedAggregate, ViewAtom
from planner.ir.outer_join import OuterJoin
from planner.ir.view_tree_plan import FactorizedViewTree
from planner.ir.window import MaintainedWindow

SIZES = {"n", "N", "M"}  # a size: of the database, a group, a partition (n), M and N as the papers write it
#: a quantity → (power, power of its logarithm)
Monomial = dict[str, tuple[float, int]]

NESTED = {"rpai_tree": "RPAI tree", "pai_map": "PAI map", "per_key_index": "per-key RPAI trees (AJU Thm 15)",
          "general": "RPAI's general algorithm"}
PROPAGATION = {"theorem11": "change propagation over AJU Theorem 11's join tree",
               "forced": "change propagation over a forced join order",
               "fallback": "general fallback: change propagation over binary delta joins"}


# -- the strategy ------------------------------------------------------------------------------------


def strategy_names(compiled: CompiledQuery) -> list[str]:
    """Each maintenance algorithm of the plan once: the relations maintained alone (a block of one
    table, a subquery's own table) in one name first, then the others innermost first."""
    names: list[str] = []
    alone = [n.root for n in compiled.plan.walk() if isinstance(n, ForeignKeyJoin) and not n.edges]  # in plan order
    if alone:
        alone = list(dict.fromkeys(alone))
        names.append(f"one relation ({alone[0]})" if len(alone) == 1 else f"one relation each ({', '.join(alone)})")
    for node in reversed(list(compiled.plan.walk())):
        names += _names(node)
    tree = view_tree_of(compiled)
    if tree is not None:
        names.append("F-IVM view tree" + (", factorized result" if isinstance(tree, FactorizedViewTree) else "")
                     + f" (order {tree.order})")
    if gjt_of(compiled) is not None:
        names.append("IEDyn generalized join tree (inequality joins)")
    if heavy_light_of(compiled) is not None:
        names.append(f"heavy/light triangle count (IVM^ε, ε = {heavy_light_of(compiled).epsilon:g})")
    return list(dict.fromkeys(names)) or ["selection and projection only"]


def _names(node: object) -> list[str]:
    match node:
        case ForeignKeyJoin(edges=edges, root=root) if edges:
            found = [f"AJU live tuples over the foreign-key tree rooted at {root}"]
        case NestedAggregate(strategy=strategy):
            found = [f"{NESTED[strategy]} for the nested aggregate"]
        case ChangePropagationJoin(tree_kind=kind):
            found = [PROPAGATION[kind]]
        case ViewAtom(key=None, alias=alias):
            found = [f"derived table {alias} ({computes(node)}) read as a relation fed by its row changes"]
        case MaintainedWindow(strategy=strategy):
            found = [f"window ({strategy.replace('_', ' ')})"]
        case OuterJoin(kind=kind):
            found = [f"{'inner join over an outer join' if kind == 'inner' else kind.upper() + ' OUTER JOIN'} by "
                     "change propagation with per-key match counts"]
        case _:
            found = []
    if isinstance(node, ForeignKeyJoin) and node.join_selects:
        found.append("join-select (AJU Thm 15)")
    return found


def computes(view: ViewAtom) -> str:
    """``window`` or the set operation (``UNION ALL``) a derived table's rows come from."""
    found: LogicalPlan = view.child
    while not isinstance(found, MaintainedWindow | SetOperation) and found.children:
        found = found.children[0]
    return found.kind.replace("_", " ").upper() if isinstance(found, SetOperation) else "window"


# -- the cost ----------------------------------------------------------------------------------------


@attrs.frozen
class Cost:
    """One stated cost of a stage: its text as the headline quotes it, its terms, its unit."""

    text: str
    terms: tuple[tuple[Monomial, ...], ...]  # () for a cost stated without a term
    per_batch: bool

    def at_most(self, other: Cost) -> bool:
        if not self.terms:
            return False
        if all(not any(m for m in term) for term in self.terms):  # O(1) costs less than anything
            return True
        return bool(other.terms) and self.per_batch == other.per_batch and all(
            any(_term_at_most(mine, theirs) for theirs in other.terms) for mine in self.terms)


def _term_at_most(mine: tuple[Monomial, ...], theirs: tuple[Monomial, ...]) -> bool:
    return all(any(_monomial_at_most(a, b) for b in theirs) for a in mine)


def _monomial_at_most(a: Monomial, b: Monomial) -> bool:
    return all(q in b and a[q] <= b[q] for q in a)


_POWER = re.compile(r"(\w)(?:\^([\d.]+)|([²³]))?")


def monomial(text: str) -> Monomial:
    """``n log n`` → {n: (1, 1)}; ``log k`` → {k: (0, 1)}; ``N^0.5`` → {n: (0.5, 0)}; words → one quantity.

    >>> monomial("n log n"), monomial("N^0.5"), monomial("1"), monomial("rows that flip")
    ({'n': (1, 1)}, {'n': (0.5, 0)}, {}, {'rows that flip': (1, 0)})
    """
    words, found, other = text.split(), {}, []
    index = 0
    while index < len(words):
        word = words[index]
        if word == "log" and index + 1 < len(words):
            base = "n" if words[index + 1] in SIZES else words[index + 1]
            power, logs = found.get(base, (0, 0))
            found[base] = (power, logs + 1)
            index += 2
            continue
        match = _POWER.fullmatch(word)
        if match and (match[1] in SIZES or len(words) == 1) and word != "1":
            base = "n" if match[1] in SIZES else match[1]
            power = float(match[2]) if match[2] else {"²": 2, "³": 3}.get(match[3], 1)
            found[base] = (found.get(base, (0, 0))[0] + power, found.get(base, (0, 0))[1])
        elif word != "1":
            other.append(word)
        index += 1
    if other:
        found[" ".join(other)] = (1, 0)
    return found


def _terms(clause: str) -> list[tuple[str, tuple[Monomial, ...], str]]:
    """The ``O(...)`` terms of one clause: (term text, its monomials, the clause's text after it)."""
    found = []
    start = clause.find("O(")
    while start >= 0:
        depth, end = 0, start + 1
        for end in range(start + 1, len(clause)):
            depth += {"(": 1, ")": -1}.get(clause[end], 0)
            if depth == 0:
                break
        inner = clause[start + 2:end]
        found.append((clause[start:end + 1], tuple(monomial(part) for part in inner.split(" + ")), clause[end + 1:]))
        start = clause.find("O(", end)
    return found


def stage_costs(update_cost: str) -> list[Cost]:
    """The costs one stage states, each clause's amortized term in place of the worst case it amortizes."""
    if "O(" not in update_cost or update_cost.startswith("no "):  # "no bound claimed: ...; each probe O(log M)"
        return [Cost(update_cost.split(":")[0], (), False)]
    costs = []
    for clause in update_cost.split(";"):
        terms = _terms(clause)
        amortized = [t for t in terms if t[2].lstrip().startswith("amortized")]
        for text, monomials, rest in amortized or terms:
            per_batch = rest.lstrip().startswith("per batch")
            suffix = " amortized" if amortized else " per batch" if per_batch else ""
            costs.append(Cost(text + suffix, (monomials,), per_batch))
    return costs


def worst_costs(update_costs: dict[int, str]) -> list[tuple[str, list[int]]]:
    """The costs no other stage's cost dominates, each with the stages that state it, in stage order."""
    stated = [(stage, cost) for stage, text in update_costs.items() for cost in stage_costs(text)]
    worst: dict[str, list[int]] = {}
    for stage, cost in stated:
        if any(cost.at_most(other) and not other.at_most(cost) for _, other in stated):
            continue
        if stage not in worst.setdefault(cost.text, []):
            worst[cost.text].append(stage)
    return list(worst.items())


def cost_line(update_costs: dict[int, str]) -> str:
    """``O(λ) amortized ([0], [1]); O(log n + k) per batch ([2])``: the headline's cost."""
    return "; ".join(f"{text} ({', '.join(f'[{s}]' for s in stages)})" for text, stages in worst_costs(update_costs))
