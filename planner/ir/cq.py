"""The conjunctive-query notation of rule tests: ``Q(y, u) :- r(x, y), s(y, z), t(u) | x < z, y >= 3``.

A conjunctive query is a head (its free variables), a body of atoms (a relation applied to
variables; a variable shared by two atoms is an equi-join), and conditions after ``|``. It is the
shape the join-tree rules reason about (AJU §2, IEDyn §2), so their tests state inputs this way
rather than as plan trees. Conditions are expressions of the plan notation (``planner/ir/notation.py``)
whose variables are unqualified columns, ``Column(None, "x")``; printing and parsing round-trip:
``parse_cq(str(q)) == q``.

>>> q = parse_cq("Q(y, u) :- r(x, y), s(y, z), t(u) | x < z, y >= 3")
>>> q.variables()
('x', 'y', 'z', 'u')
>>> print(q)
Q(y, u) :- r(x, y), s(y, z), t(u) | x < z, y >= 3
"""

from __future__ import annotations

import functools

import attrs
import lark

from planner.ir.expressions import Expr, columns
from planner.ir.notation import (
    expr_from_tree,
    format_identifier,
    identifier_from_token,
    load_grammar,
    parse_with,
    print_expr,
)


@attrs.frozen
class Atom:
    """``relation(variables...)``: one use of a relation, its columns named by variables in order."""

    relation: str
    variables: tuple[str, ...]

    def __str__(self) -> str:
        return f"{format_identifier(self.relation)}({_listed(self.variables)})"


@attrs.frozen
class ConjunctiveQuery:
    """``name(head) :- atoms | conditions``; every head and condition variable occurs in an atom."""

    name: str
    head: tuple[str, ...]
    atoms: tuple[Atom, ...]
    conditions: tuple[Expr, ...] = ()

    def __attrs_post_init__(self) -> None:
        if not self.atoms:
            raise ValueError(f"conjunctive query {self.name} has no atoms")
        bound = set(self.variables())
        for variable in self.head:
            if variable not in bound:
                raise ValueError(f"head variable {variable} of {self.name} occurs in no atom")
        for condition in self.conditions:
            for column in columns(condition):
                if column.table is not None or column.name not in bound:
                    raise ValueError(
                        f"condition {print_expr(condition)} of {self.name} uses {column}, which is no atom's variable"
                    )

    def variables(self) -> tuple[str, ...]:
        """Every variable of the body, in order of first occurrence."""
        return tuple(dict.fromkeys(v for atom in self.atoms for v in atom.variables))

    def free_variables(self) -> tuple[str, ...]:
        return self.head

    def __str__(self) -> str:
        return print_cq(self)


def print_cq(query: ConjunctiveQuery) -> str:
    text = f"{format_identifier(query.name)}({_listed(query.head)}) :- {', '.join(map(str, query.atoms))}"
    if query.conditions:
        text += " | " + ", ".join(print_expr(c) for c in query.conditions)
    return text


def parse_cq(text: str) -> ConjunctiveQuery:
    """Parse the notation; ValueError names the line and column of a syntax error, or the unsafe variable."""
    tree = parse_with(_parser(), text.strip())
    name, head, *rest = tree.children
    atoms = [t for t in rest if isinstance(t, lark.Tree) and t.data == "atom"]
    conditions = [t for t in rest[len(atoms) :] if t is not None]
    return ConjunctiveQuery(
        identifier_from_token(name),
        _variables(head),
        tuple(Atom(identifier_from_token(atom.children[0]), _variables(atom.children[1])) for atom in atoms),
        tuple(expr_from_tree(c) for c in conditions),
    )


def _variables(tree: lark.Tree) -> tuple[str, ...]:
    return tuple(identifier_from_token(t) for t in tree.children if t is not None)


def _listed(names: tuple[str, ...]) -> str:
    return ", ".join(format_identifier(n) for n in names)


@functools.cache
def _parser() -> lark.Lark:
    return load_grammar("cq.lark", "start")
