"""Name resolution for the SQL front end: the relations a FROM makes visible, and their columns.

Every column becomes ``Column(alias, name)`` of the relation that produces it: the innermost FROM
that has it, then the enclosing queries' scopes for correlated references. Ambiguity and unknown
names are errors here, so no rule ever guesses what an unqualified name meant.
"""

from __future__ import annotations

import attrs

from catalog.schema import Catalog, UnknownColumnError, UnsupportedColumnError
from catalog.schema import Column as CatalogColumn
from catalog.types import DataType, common_type, is_numeric
from planner.ir.expressions import Column, Expr, type_of
from planner.ir.logical import Aggregate, Join, LogicalPlan, NamedExpr, Project, Scan, SetOperation
from planner.sql.errors import AmbiguousColumnError, UnsupportedSqlError
from planner.sql.typing import typed_call


@attrs.frozen
class Relation:
    """A relation of a FROM clause: its alias, the names of its output columns and their types."""

    alias: str
    columns: tuple[str, ...]
    types: tuple[DataType | None, ...]
    #: a base table's columns of a type spark-ivm lacks: not in ``columns``, and refused when read
    unsupported: tuple[CatalogColumn, ...] = ()
    table: str = ""

    def column(self, name: str) -> Column:
        return Column(self.alias, name, self.types[self.columns.index(name)])

    def refuse_unsupported(self, name: str | None, clause: str) -> None:
        """Refuse reading column ``name`` (None: every column, as ``*`` does) when its type is one
        spark-ivm lacks, naming the table, the column and the type as written."""
        for column in self.unsupported:
            if name is None or column.name == name:
                raise UnsupportedColumnError(self.table, column, f"{clause} reads {'*' if name is None else name}")


@attrs.frozen
class Scope:
    """The relations one query's FROM makes visible, and the enclosing query's scope (for correlation)."""

    relations: tuple[Relation, ...]
    parent: Scope | None
    #: Names merged by ``JOIN ... USING`` / ``NATURAL JOIN``: unqualified, each means the kept side's
    #: column (``with_using``), for a FULL join ``coalesce(l.k, r.k)``.
    merged: tuple[tuple[str, Expr], ...] = ()
    #: What an unqualified ``SELECT *`` lists once a USING join reordered it (None: every relation's
    #: columns); a FULL join's merged column is a named ``coalesce``.
    star: tuple[Column | NamedExpr, ...] | None = None
    #: The hidden sides' USING columns, which ``SELECT *`` leaves out but ``side.*`` lists first.
    hidden: tuple[Column, ...] = ()

    @property
    def aliases(self) -> frozenset[str]:
        return frozenset(r.alias for r in self.relations)

    def refuse_unsupported(self, alias: str | None, clause: str) -> None:
        """``SELECT *`` (``alias.*``) would list a column of a type spark-ivm lacks: refused."""
        for relation in self.relations:
            if alias is None or relation.alias == alias:
                relation.refuse_unsupported(None, clause)

    def star_columns(self) -> tuple[Column | NamedExpr, ...]:
        """``SELECT *``: every column of every relation, or Spark's order after USING joins."""
        if self.star is not None:
            return self.star
        return tuple(r.column(name) for r in self.relations for name in r.columns)

    def qualified_star(self, alias: str) -> tuple[Column, ...]:
        """``alias.*``: as Spark 4 expands it (checked with spark.sql), the relation's USING columns
        first when it was a right side, then its columns in ``SELECT *`` order."""
        return tuple(c for c in (*self.hidden, *self.star_columns()) if isinstance(c, Column) and c.table == alias)

    def with_relation(self, relation: Relation) -> Scope:
        if relation.alias in self.aliases:
            raise UnsupportedSqlError(
                f"FROM: the alias {relation.alias!r} is used twice; give each copy of the table its own alias"
            )
        star = None if self.star is None else (*self.star, *(relation.column(n) for n in relation.columns))
        return attrs.evolve(self, relations=(*self.relations, relation), star=star)

    def with_using(self, names: tuple[str, ...], clause: str, kind: str = "inner") -> tuple[Scope, list[tuple[Column, Column]]]:
        """This scope, its last relation just joined ``USING (names)`` by a ``kind`` join, and the
        equalities that join it.

        Spark's rules (``Analyzer.commonNaturalJoinProcessing``): each name must be a column of both
        sides; unqualified it means the side the join keeps, the left side's column for an inner or
        LEFT join, the right side's for a RIGHT join and ``coalesce(l.k, r.k)`` for a FULL join; ``SELECT
        *`` lists the join columns once, first, then the rest of the left side, then the rest of the
        right side. The other side's USING columns are hidden: ``SELECT *`` leaves them out.
        """
        *left, right = self.relations
        left_scope = attrs.evolve(self, relations=tuple(left), star=None if self.star is None else self.star[: -len(right.columns)])
        pairs = []
        for name in names:
            left_column = left_scope.lookup(None, name, clause)
            if left_column is None or name not in right.columns:
                side = "left" if left_column is None else "right"
                raise UnknownColumnError(f"{clause}: the USING column {name} is not a column of the {side} side")
            pairs.append((left_column, _unique_column(right, name, clause)))
        lefts = tuple(left_column for left_column, _ in pairs)
        if kind == "right":
            keys, hidden = tuple(right_column for _, right_column in pairs), lefts
        elif kind == "full":
            keys = tuple(NamedExpr(name, typed_call("coalesce", pair, clause)) for name, pair in zip(names, pairs, strict=True))
            hidden = (*lefts, *(right_column for _, right_column in pairs))
        else:
            keys, hidden = lefts, tuple(right_column for _, right_column in pairs)
        star = (
            *keys,
            *(c for c in left_scope.star_columns() if c not in lefts),
            *(right.column(n) for n in right.columns if n not in names),
        )
        merged = (*((n, c) for n, c in self.merged if n not in names),
                  *((n, k.expr if isinstance(k, NamedExpr) else k) for n, k in zip(names, keys, strict=True)))
        return attrs.evolve(self, merged=merged, star=star, hidden=(*self.hidden, *hidden)), pairs

    def lookup(self, qualifier: str | None, name: str, clause: str) -> Expr | None:
        """The column this level of scope binds ``qualifier.name`` to, or None to look further out."""
        if qualifier is None:
            for merged_name, column in self.merged:
                if merged_name == name:
                    return column
        if qualifier is not None:
            relation = next((r for r in self.relations if r.alias == qualifier), None)
            if relation is None:
                return None
            if name not in relation.columns:
                relation.refuse_unsupported(name, clause)
                raise UnknownColumnError(
                    f"unknown column {qualifier}.{name} in {clause}: {qualifier} has columns {', '.join(relation.columns)}"
                )
            return _unique_column(relation, name, clause)
        matches = [r for r in self.relations if name in r.columns]
        if len(matches) > 1:
            candidates = " and ".join(f"{r.alias}.{name}" for r in matches)
            raise AmbiguousColumnError(f"column {name} in {clause} is ambiguous: it could be {candidates}")
        if not matches:
            for relation in self.relations:
                relation.refuse_unsupported(name, clause)
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
        case SetOperation(left=left, right=right):
            # Spark widens each column to the two sides' common type; numbers only here (an int beside a
            # decimal is a decimal: Python's values compare and hash alike), else the left side's type
            return tuple(
                common_type(a, b) if is_numeric(a) and is_numeric(b) else a
                for a, b in zip(output_types(left, catalog), output_types(right, catalog), strict=True)
            )
    return output_types(plan.children[0], catalog)
