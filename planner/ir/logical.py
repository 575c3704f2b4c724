"""Logical plan nodes: frozen attrs values with children in tuples.

A rewrite that changes nothing returns the *same object*, so "no effect" is an identity check
(``new is old``). ``transform_up`` / ``transform_down`` apply a function to every node; rules use
them with a ``match`` on the node in hand.

Output columns are ``Column(alias, name)`` pairs: a ``Scan`` of ``lineitem`` aliased ``l`` outputs
``l.l_orderkey``, ...; ``Project`` and ``Aggregate`` output unqualified names (``Column(None, name)``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import ClassVar

import attrs

from planner.ir.expressions import AggregateCall, Call, Column, Expr, Literal, Subquery, contains_subquery
from planner.ir.guarantee import Guarantee

#: A stateless stage's cost: a selection and a projection are linear.
LINEAR_COST = "O(1) per result change"


@attrs.frozen
class NamedExpr:
    """``expr AS name`` in a select list or a group-by list."""

    name: str
    expr: Expr


@attrs.frozen
class SortKey:
    expr: Expr
    ascending: bool = True


class LogicalPlan:
    """Base of every plan node. Subclasses are ``@attrs.frozen`` and list children in ``child_fields``."""

    child_fields: ClassVar[tuple[str, ...]] = ()
    # The field shown in square brackets in the plan notation (``Join[inner]``), if any.
    variant_field: ClassVar[str | None] = None
    #: Whether an incremental operator maintains this node: the strategy rules replace the logical
    #: nodes no stage implements, so one left in the plan is what ``planner/optimizer/unsupported.py`` names.
    maintained: ClassVar[bool] = False
    #: Whether a ``Filter`` over this node is a HAVING that the node's own stage applies to its groups.
    having_applies: ClassVar[bool] = False

    @property
    def output(self) -> tuple[Column, ...]:
        """The output columns in order: the row layout stages compile expressions against (Catalyst's
        ``output``). Each node class computes its own, once (a cached property)."""
        raise NotImplementedError(f"no output layout for {self.node_name}")

    def own_guarantee(self) -> Guarantee:
        """What this node itself adds to the plan's guarantee (its algorithm, its stage's cost); a node
        without a stage of its own (a Sort applied when read, a HAVING its aggregate applies) adds nothing."""
        return Guarantee()

    def guarantee(self) -> Guarantee:
        """What maintaining this subplan promises per update: its own part composed with its children's."""
        return self.own_guarantee().above(tuple(child.guarantee() for child in self.children))

    @property
    def children(self) -> tuple[LogicalPlan, ...]:
        out: list[LogicalPlan] = []
        for name in self.child_fields:
            value = getattr(self, name)
            out.extend(value if isinstance(value, tuple) else (value,))
        return tuple(out)

    def with_children(self, new_children: tuple[LogicalPlan, ...]) -> LogicalPlan:
        """A copy with ``new_children`` (same arity), or ``self`` if all are the same objects."""
        if all(n is o for n, o in zip(new_children, self.children, strict=True)):
            return self
        changes = {}
        rest = list(new_children)
        for name in self.child_fields:
            value = getattr(self, name)
            if isinstance(value, tuple):
                changes[name], rest = tuple(rest[: len(value)]), rest[len(value) :]
            else:
                changes[name], rest = rest[0], rest[1:]
        return attrs.evolve(self, **changes)

    def transform_up(self, fn: Callable[[LogicalPlan], LogicalPlan]) -> LogicalPlan:
        """Post-order rewrite: children first, then ``fn`` on the rebuilt node."""
        node = self.with_children(tuple(c.transform_up(fn) for c in self.children))
        return fn(node)

    def transform_down(self, fn: Callable[[LogicalPlan], LogicalPlan]) -> LogicalPlan:
        """Pre-order rewrite: ``fn`` on this node, then on the children of its result."""
        node = fn(self)
        return node.with_children(tuple(c.transform_down(fn) for c in node.children))

    def walk(self):
        yield self
        for child in self.children:
            yield from child.walk()

    def expressions(self):
        """The expressions held in this node's own fields (select items, conditions, keys...)."""
        for field in attrs.fields(type(self)):
            if field.name in self.child_fields:
                continue
            values = getattr(self, field.name)
            for value in values if isinstance(values, tuple) else (values,):
                expr = value.expr if isinstance(value, NamedExpr | SortKey) else value
                if isinstance(expr, Column | Literal | Call | AggregateCall | Subquery):
                    yield expr

    @property
    def node_name(self) -> str:
        """The class name, as the plan notation prints it (``kind`` is a field of Join and SetOperation)."""
        return type(self).__name__


@attrs.frozen
class Scan(LogicalPlan):
    """A base table read; ``alias`` names this copy of the table (Q7 reads nation twice)."""

    table: str
    alias: str
    columns: tuple[str, ...]

    @property
    def output(self) -> tuple[Column, ...]:
        return tuple(Column(self.alias, c) for c in self.columns)


@attrs.frozen
class Filter(LogicalPlan):
    child_fields = ("child",)
    condition: Expr
    child: LogicalPlan

    @property
    def maintained(self) -> bool:
        """A HAVING without a subquery is applied by the stage of the aggregate below it."""
        return self.child.having_applies and not contains_subquery(self.condition)

    @functools.cached_property
    def output(self) -> tuple[Column, ...]:
        return self.child.output


@attrs.frozen
class Project(LogicalPlan):
    child_fields = ("child",)
    maintained = True
    items: tuple[NamedExpr, ...]
    child: LogicalPlan

    @functools.cached_property
    def output(self) -> tuple[Column, ...]:
        return tuple(Column(None, item.name) for item in self.items)

    def own_guarantee(self) -> Guarantee:
        return Guarantee.stated(cost=LINEAR_COST)  # σ and π are linear (AJU Thm 14)


@attrs.frozen
class Join(LogicalPlan):
    """``kind`` is inner, left, cross, semi or anti; ``condition`` None for a cross join."""

    child_fields = ("left", "right")
    variant_field = "kind"
    kind: str
    condition: Expr | None
    left: LogicalPlan
    right: LogicalPlan

    @functools.cached_property
    def output(self) -> tuple[Column, ...]:
        return self.left.output if self.kind in ("semi", "anti") else self.left.output + self.right.output


@attrs.frozen
class Aggregate(LogicalPlan):
    """Group by ``group_by``; output is the group columns then the named aggregates."""

    child_fields = ("child",)
    group_by: tuple[NamedExpr, ...]
    aggregates: tuple[NamedExpr, ...]
    child: LogicalPlan

    @functools.cached_property
    def output(self) -> tuple[Column, ...]:
        return grouped_output(self.group_by, self.aggregates)


def grouped_output(group_by: tuple[NamedExpr, ...], aggregates: tuple[NamedExpr, ...]) -> tuple[Column, ...]:
    """An aggregate's output: the group columns, then the named aggregates, unqualified."""
    return tuple(Column(None, item.name) for item in (*group_by, *aggregates))


@attrs.frozen
class Distinct(LogicalPlan):
    child_fields = ("child",)
    child: LogicalPlan

    @functools.cached_property
    def output(self) -> tuple[Column, ...]:
        return self.child.output


@attrs.frozen
class Sort(LogicalPlan):
    child_fields = ("child",)
    maintained = True  # applied when the result is read
    keys: tuple[SortKey, ...]
    child: LogicalPlan

    @functools.cached_property
    def output(self) -> tuple[Column, ...]:
        return self.child.output


@attrs.frozen
class Limit(LogicalPlan):
    child_fields = ("child",)
    count: int
    child: LogicalPlan

    @functools.cached_property
    def output(self) -> tuple[Column, ...]:
        return self.child.output


@attrs.frozen
class SubqueryAlias(LogicalPlan):
    """A derived table or WITH view: re-qualifies the child's output columns with ``alias``."""

    child_fields = ("child",)
    alias: str
    child: LogicalPlan

    @functools.cached_property
    def output(self) -> tuple[Column, ...]:
        return tuple(Column(self.alias, c.name) for c in self.child.output)


@attrs.frozen
class SetOperation(LogicalPlan):
    """``kind`` is union, union_all, except or intersect."""

    child_fields = ("left", "right")
    variant_field = "kind"
    kind: str
    left: LogicalPlan
    right: LogicalPlan

    @functools.cached_property
    def output(self) -> tuple[Column, ...]:
        return self.left.output  # SQL names a set operation's columns after its left side

    def own_guarantee(self) -> Guarantee:
        return Guarantee.stated(cost="O(1) per change")  # each row's two counts (AJU Thm 14)
