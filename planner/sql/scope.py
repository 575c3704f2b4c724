"""Name resolution for the SQL front end: the relations a FROM makes visible, and their columns.

Every column becomes ``Column(alias, name)`` of the relation that produces it: the innermost FROM
that has it, then the enclosing queries' scopes for correlated references. Ambiguity and unknown
names are errors here, so no rule ever guesses what an unqualified name meant.
"""

from __future__ import annotations

import attrs

from catalog.schema import Catalog, UnknownColumnError
from catalog.types import DataType
from planner.ir.expressions import Column, type_of
from planner.ir.logical import Aggregate, Join, LogicalPlan, Project, Scan, SetOperation
from planner.sql.errors import AmbiguousColumnError, UnsupportedSqlError


@attrs.frozen
class Relation:
    """A relation of a FROM clause: its alias, the names of its output columns and their types."""

    alias: str
    columns: tuple[str, ...]
    types: tuple[DataType | None, ...]

    def column(self, name: str) -> Column:
        return Column(self.alias, name, self.types[self.columns.index(name)])


@attrs.frozen
class Scope:
    """The relations one query's FROM makes visible, and the enclosing query's scope (for correlation)."""

    relations: tuple[Relation, ...]
    parent: Scope | None

    @property
    def aliases(self) -> frozenset[str]:
        return frozenset(r.alias for r in self.relations)

    def with_relation(self, relation: Relation) -> Scope:
        if relation.alias in self.aliases:
            raise UnsupportedSqlError(
                f"FROM: the alias {relation.alias!r} is used twice; give each copy of the table its own alias"
            )
        return attrs.evolve(self, relations=(*self.relations, relation))

    def lookup(self, qualifier: str | None, name: str, clause: str) -> Column | None:
        """The column this level of scope binds ``qualifier.name`` to, or None to look further out."""
        if qualifier is not None:
            relation = next((r for r in self.relations if r.alias == qualifier), None)
            if relation is None:
                return None
            if name not in relation.columns:
                raise UnknownColumnError(
                    f"unknown column {qualifier}.{name} in {clause}: {qualifier} has columns {', '.join(relation.columns)}"
                )
            return _unique_column(relation, name, clause)
        matches = [r for r in self.relations if name in r.columns]
        if len(matches) > 1:
            candidates = " and ".join(f"{r.alias}.{name}" for r in matches)
            raise AmbiguousColumnError(f"column {name} in {clause} is ambiguous: it could be {candidates}")
        return _unique_column(matches[0], name, clause) if matches else None


def _unique_column(relation: Relation, name: str, clause: str) -> Column:
    if relation.columns.count(name) > 1:
        raise AmbiguousColumnError(
            f"column {relation.alias}.{name} in {clause} is ambiguous: {relation.alias} outputs two columns named {name}"
        )
    return relation.column(name)


def output_names(plan: LogicalPlan) -> tuple[str, ...]:
    """The column names ``plan`` outputs, in order: what a FROM alias makes visible."""
    match plan:
        case Scan(columns=columns):
            return columns
        case Project(items=items):
            return tuple(item.name for item in items)
        case Aggregate(group_by=group_by, aggregates=aggregates):
            return tuple(item.name for item in (*group_by, *aggregates))
        case Join(kind="semi" | "anti", left=left):
            return output_names(left)
        case Join(left=left, right=right):
            return output_names(left) + output_names(right)
        case SetOperation(left=left):
            return output_names(left)
    return output_names(plan.children[0])


def output_types(plan: LogicalPlan, catalog: Catalog) -> tuple[DataType | None, ...]:
    """The Spark types of ``plan``'s output columns, in ``output_names`` order (None: untyped)."""
    match plan:
        case Scan(table=table, columns=columns):
            return tuple(catalog.table(table).column(c).type for c in columns)
        case Project(items=items):
            return tuple(type_of(item.expr) for item in items)
        case Aggregate(group_by=group_by, aggregates=aggregates):
            return tuple(type_of(item.expr) for item in (*group_by, *aggregates))
        case Join(kind="semi" | "anti", left=left):
            return output_types(left, catalog)
        case Join(left=left, right=right):
            return output_types(left, catalog) + output_types(right, catalog)
        case SetOperation(left=left):
            return output_types(left, catalog)
    return output_types(plan.children[0], catalog)
