"""Generalized conjunctive queries (IEDyn §2): the normal form of a join block with inequalities.

A GCQ is ``π_out(r_1(x̄_1) ⋈ … ⋈ r_n(x̄_n) | P_1 ∧ … ∧ P_m)``: atoms over variables, equalities
folded into shared variables (two columns that must be equal become one variable, so the natural
join expresses them), θ-predicates kept as predicates, and the output (free) variables. The paper
treats predicates abstractly; we keep the ones IEDyn indexes: inequalities ``<``, ``<=`` between
two variables (``>``/``>=`` are flipped, ``BETWEEN`` becomes two), optionally with a constant
offset (``x < y + c``, ``x - y < c``: a band join). Multiplicities (GMR semantics,
deletes as negative weights) are a property of evaluation, not of this form, so nothing here
carries them.

``gcq_build.py`` reads plans into this form; this module holds only the values, so plan nodes that
will carry a GJT can import it without a cycle.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta
from decimal import Decimal

import attrs

from planner.ir.expressions import FLIPPED, Expr

INEQUALITIES = ("<", "<=")
#: A constant added to the right side: a number, or a day-time interval for dates and timestamps.
Offset = int | float | Decimal | timedelta


@attrs.frozen
class Atom:
    """``table(variables)`` under the name ``alias``; ``variables[i]`` is the variable of ``columns[i]``."""

    alias: str
    variables: tuple[str, ...]
    table: str = ""
    columns: tuple[str, ...] = ()

    @property
    def var_set(self) -> frozenset[str]:
        return frozenset(self.variables)

    def __str__(self) -> str:
        return f"{self.alias}({','.join(self.variables)})"


@attrs.frozen(order=True)
class Inequality:
    """``left op right + offset`` with ``op`` in ``<``, ``<=`` (the normal form flips ``>`` and ``>=``)."""

    left: str
    op: str = attrs.field(validator=attrs.validators.in_(INEQUALITIES))
    right: str
    offset: Offset = 0

    @property
    def variables(self) -> frozenset[str]:
        return frozenset((self.left, self.right))

    @property
    def strict(self) -> bool:
        return self.op == "<"

    def __str__(self) -> str:
        if not self.offset:
            return f"{self.left} {self.op} {self.right}"
        negative = self.offset < type(self.offset)(0)
        return f"{self.left} {self.op} {self.right} {'-' if negative else '+'} {_text(-self.offset if negative else self.offset)}"


def _text(offset: Offset) -> str:
    """An offset as SQL: a number, or an interval (``interval '30' day``, not Python's ``30 days, 0:00:00``)."""
    if isinstance(offset, timedelta):
        if not offset % timedelta(days=1):
            return f"interval '{offset.days}' day"
        return f"interval '{offset.total_seconds():g}' second"
    return str(offset)


def inequality(left: str, op: str, right: str, offset: Offset = 0) -> Inequality:
    """The normal form of ``left op right + offset`` for op in ``< <= > >=``
    (``l > r + c`` is ``r < l - c``)."""
    if op in (">", ">="):
        return Inequality(right, FLIPPED[op], left, -offset)
    return Inequality(left, op, right, offset)


@attrs.frozen
class Gcq:
    """A GCQ; ``output`` None means a full query (every variable is free)."""

    atoms: tuple[Atom, ...]
    predicates: tuple[Inequality, ...] = ()
    output: frozenset[str] | None = attrs.field(default=None, converter=attrs.converters.optional(frozenset))
    atom_filters: tuple[tuple[str, Expr], ...] = ()

    def __attrs_post_init__(self) -> None:
        known = self.variables
        for p in self.predicates:
            if not p.variables <= known:
                raise ValueError(f"predicate {p} uses a variable of no atom")
        if self.output is not None and not self.output <= known:
            raise ValueError(f"output variables {sorted(self.output - known)} occur in no atom")

    @property
    def variables(self) -> frozenset[str]:
        return frozenset().union(*(a.var_set for a in self.atoms))

    @property
    def out(self) -> frozenset[str]:
        """out(Q): the free variables."""
        return self.variables if self.output is None else self.output

    def crowded_pairs(self) -> tuple[tuple[str, str], ...]:
        """Pairs of atoms (aliases) that more than one inequality relates: IEDyn Thm 5.5 promises
        constant-delay enumeration only without them (and the journal version withdrew the
        O(M log M) update bound for them)."""
        count: dict[tuple[str, str], int] = {}
        for p in self.predicates:
            pairs = {
                tuple(sorted((a.alias, b.alias)))
                for a in self.atoms
                if p.left in a.var_set
                for b in self.atoms
                if p.right in b.var_set and a.alias != b.alias
            }
            for pair in pairs:
                count[pair] = count.get(pair, 0) + 1
        return tuple(sorted(pair for pair, n in count.items() if n > 1))

    def with_predicates(self, predicates: Iterable[Inequality]) -> Gcq:
        return attrs.evolve(self, predicates=tuple(predicates))

    def __str__(self) -> str:
        body = " ⋈ ".join(str(a) for a in self.atoms)
        if self.predicates:
            body += " | " + " ∧ ".join(str(p) for p in self.predicates)
        if self.output is None or self.output == self.variables:
            return body
        return f"π_{{{','.join(sorted(self.output))}}}({body})"
