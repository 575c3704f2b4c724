"""What a maintenance plan promises per update, composed bottom-up from what each node promises.

Each plan node states its own part (``LogicalPlan.own_guarantee``): the maintenance algorithm it
stands for, if any, and the per-update costs its stage is bounded by. ``LogicalPlan.guarantee()``
composes a node's part with its children's: the algorithms in order, and the costs that no other
cost of the plan dominates. EXPLAIN's headline names the strategies from it and checks the stage
rows' costs against it, so the headline cannot say less than a stage row (issue 28: "every change
is O(1)" above an O(n log n) stage) nor a stage state more than the plan promises unnoticed.

A cost is text such as ``O(1) per tuple; O(group) when the child turns (non-)live: O(λ) amortized``.
Its terms ``O(...)`` are read as sums of monomials: n, N and M are sizes (``n log n`` is n¹·log¹),
any other word is a quantity of its own (``k``, ``λ``, ``group``, ``rows that flip``). One term is at
most another when each of its monomials is at most one of the other's (a monomial is at most
another when every quantity it has appears there with an exponent at least as large: (power, log
power) in that order). Within one clause an amortized term replaces the worst-case one it
amortizes; a cost per batch is compared only with costs per batch. A cost without a term, or that
opens with "no" (``no bound claimed: ...``), is kept as it is and dominates nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import attrs

SIZES = {"n", "N", "M"}  # a size: of the database, a group, a partition (n), M and N as the papers write it
#: a quantity → (power, power of its logarithm)
Monomial = dict[str, tuple[float, int]]


@attrs.frozen
class Cost:
    """One stated cost: its text as the headline quotes it, its terms, its unit."""

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


def costs_of(update_cost: str) -> list[Cost]:
    """The costs one text states, each clause's amortized term in place of the worst case it amortizes."""
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


def undominated(costs: Iterable[Cost]) -> list[Cost]:
    """The costs no other of them dominates, each once, in order."""
    costs = list(costs)
    kept = [c for c in costs if not any(c.at_most(o) and not o.at_most(c) for o in costs)]
    return list({c.text: c for c in reversed(kept)}.values())[::-1]


@attrs.frozen
class Guarantee:
    """What maintaining a (sub)plan promises: ``alone``, the relations maintained by themselves (a
    block of one table), in plan order; ``strategies``, the other maintenance algorithms, innermost
    first; ``costs``, the per-update costs no other cost of the plan dominates."""

    alone: tuple[str, ...] = ()
    strategies: tuple[str, ...] = ()
    costs: tuple[Cost, ...] = ()
    #: the strategies whose per-update cost only their stages state (a view tree's per-atom fan-out
    #: depends on the view layout lowering builds, operators/stages/view_tree.py): not checked
    deferred: tuple[str, ...] = ()

    @classmethod
    def stated(cls, *strategies: str, cost: str = "", alone: tuple[str, ...] = ()) -> Guarantee:
        """A node's own part: its algorithms and the costs ``cost`` states (``costs_of``)."""
        return cls(alone, strategies, tuple(costs_of(cost)) if cost else ())

    @classmethod
    def deferred_to_stages(cls, strategy: str) -> Guarantee:
        return cls(strategies=(strategy,), deferred=(strategy,))

    def above(self, children: tuple[Guarantee, ...]) -> Guarantee:
        """This node's part composed with its children's: the relations alone in plan order (the node
        first), the strategies innermost first (the children last to first, then the node), the costs
        no other dominates."""
        below = children[::-1]
        return Guarantee(
            tuple(dict.fromkeys((*self.alone, *(r for c in children for r in c.alone)))),
            tuple(dict.fromkeys((*(s for c in below for s in c.strategies), *self.strategies))),
            tuple(undominated((*(k for c in below for k in c.costs), *self.costs))),
            tuple(dict.fromkeys((*(s for c in below for s in c.deferred), *self.deferred))))

    def names(self) -> list[str]:
        """The strategies as EXPLAIN's headline names them, the relations maintained alone first."""
        alone = self.alone
        first = ([f"one relation ({alone[0]})" if len(alone) == 1 else f"one relation each ({', '.join(alone)})"]
                 if alone else [])
        return first + list(self.strategies) or ["selection and projection only"]

    def exceeded_by(self, cost: Cost) -> bool:
        """Whether a stage's ``cost`` is above every cost this guarantee states (a contradiction)."""
        return not self.deferred and not any(cost.at_most(mine) or cost == mine for mine in self.costs)
