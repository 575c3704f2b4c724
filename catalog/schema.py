"""Tables, keys and foreign keys, and the facts derived from them.

A composite primary key is also exposed as one *combined key* (AJU §2.1): the planner treats
``(ps_partkey, ps_suppkey)`` as a single attribute, so a foreign key on two columns is one edge of
the foreign-key graph, exactly like a single-column one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import attrs

from catalog.types import DataType, UnsupportedType, to_type


class CatalogError(ValueError):
    """A schema fact is missing or inconsistent (names the table and column)."""


class UnknownTableError(CatalogError):
    pass


class UnknownColumnError(CatalogError):
    pass


class UnsupportedColumnError(CatalogError):
    """A column whose type spark-ivm lacks is read (by a view, a key, a dependency): names the table,
    the column and its type as the user wrote it."""

    def __init__(self, table: str, column: Column, where: str = ""):
        super().__init__(
            f"{where}{': ' if where else ''}table {table}, column {column.name} has type {column.type}, which spark-ivm "
            "does not support (supported: BOOLEAN, INT, BIGINT, DOUBLE, DECIMAL(p,s), STRING, DATE, TIMESTAMP, "
            "TIMESTAMP_NTZ); the table's other columns can be used"
        )


@attrs.frozen
class Column:
    name: str
    type: DataType | UnsupportedType = attrs.field(converter=to_type)  # a name such as "decimal(15,2)" is parsed
    nullable: bool = True


@attrs.frozen
class ForeignKey:
    """``table(columns)`` references the primary key ``ref_table(ref_columns)``."""

    table: str
    columns: tuple[str, ...]
    ref_table: str
    ref_columns: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.table}({', '.join(self.columns)}) → {self.ref_table}({', '.join(self.ref_columns)})"


@attrs.frozen
class FunctionalDependency:
    """``determinant → dependent`` within ``table``: rows that agree on the determinant columns agree on
    the dependent ones (Olteanu §4.4). ``declared`` False marks one a primary key implies."""

    table: str
    determinant: tuple[str, ...]
    dependent: tuple[str, ...]
    declared: bool = True

    def __str__(self) -> str:
        return f"{self.table}: {', '.join(self.determinant)} → {', '.join(self.dependent)}"


@attrs.frozen
class Table:
    name: str
    columns: tuple[Column, ...]
    primary_key: tuple[str, ...] = ()
    foreign_keys: tuple[ForeignKey, ...] = ()
    static: bool = False  # never updated after load (Olteanu §4.5)
    insert_only: bool = False
    #: declared dependencies only; ``Catalog.functional_dependencies`` adds the primary key's
    functional_dependencies: tuple[FunctionalDependency, ...] = ()
    #: an estimate of the row count (``ivm.rows``), read only by cost models; None: unknown
    rows: int | None = None
    #: columns of a type spark-ivm lacks (``UnsupportedType``), apart from ``columns``: rows and
    #: streams leave them out, and a view that reads one is refused (``unsupported_column``)
    unsupported_columns: tuple[Column, ...] = ()

    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)

    def column(self, name: str) -> Column:
        for col in self.columns:
            if col.name == name:
                return col
        if (unsupported := self.unsupported_column(name)) is not None:
            raise UnsupportedColumnError(self.name, unsupported)
        raise UnknownColumnError(f"table {self.name} has no column {name!r} (columns: {', '.join(self.column_names)})")

    def has_column(self, name: str) -> bool:
        return any(c.name == name for c in self.columns)

    def unsupported_column(self, name: str) -> Column | None:
        """The column ``name`` when its type is one spark-ivm lacks, else None."""
        return next((c for c in self.unsupported_columns if c.name == name), None)


@attrs.frozen
class Catalog:
    """An immutable set of tables; ``with_table`` returns a new catalog."""

    tables: Mapping[str, Table] = attrs.field(factory=dict, converter=lambda t: dict(t))

    @classmethod
    def of(cls, tables: Iterable[Table]) -> Catalog:
        catalog = cls({})
        for table in tables:
            catalog = catalog.with_table(table)
        return catalog.validated()

    def with_table(self, table: Table) -> Catalog:
        if table.name in self.tables:
            raise CatalogError(f"table {table.name} is defined twice")
        return Catalog({**self.tables, table.name: table})

    def table(self, name: str) -> Table:
        try:
            return self.tables[name.lower()]
        except KeyError:
            known = ", ".join(sorted(self.tables)) or "none"
            raise UnknownTableError(f"unknown table {name!r} (known tables: {known})") from None

    def has_table(self, name: str) -> bool:
        return name.lower() in self.tables

    def validated(self) -> Catalog:
        """Check every key, foreign key and dependency names real columns, and every FK targets a primary key."""
        for table in self.tables.values():
            for col in table.primary_key:
                table.column(col)
            for fd in table.functional_dependencies:
                for col in fd.determinant + fd.dependent:
                    if (unsupported := table.unsupported_column(col)) is not None:
                        raise UnsupportedColumnError(table.name, unsupported, f"functional dependency {fd}")
                    if not table.has_column(col):
                        raise UnknownColumnError(f"functional dependency {fd}: table {table.name} has no column {col!r}")
            for fk in table.foreign_keys:
                for col in fk.columns:
                    table.column(col)
                if not self.has_table(fk.ref_table):
                    raise UnknownTableError(f"foreign key {fk}: unknown table {fk.ref_table!r}")
                target = self.table(fk.ref_table)
                for col in fk.ref_columns:
                    target.column(col)
                if tuple(fk.ref_columns) != tuple(target.primary_key):
                    raise CatalogError(
                        f"foreign key {fk} does not reference the primary key of {target.name} "
                        f"(its primary key is ({', '.join(target.primary_key) or 'none declared'}))"
                    )
                if len(fk.columns) != len(fk.ref_columns):
                    raise CatalogError(f"foreign key {fk} has {len(fk.columns)} columns but references {len(fk.ref_columns)}")
        return self

    def foreign_key(self, table: str, columns: tuple[str, ...], ref_table: str) -> ForeignKey | None:
        """The declared FK from ``table(columns)`` to ``ref_table``'s primary key, if any (column order free)."""
        for fk in self.table(table).foreign_keys:
            if fk.ref_table == ref_table and sorted(fk.columns) == sorted(columns):
                return fk
        return None

    def fk_graph(self) -> dict[str, tuple[ForeignKey, ...]]:
        """The schema's foreign-key graph (AJU §2.1): an edge R → S for each FK of R referencing S."""
        return {name: table.foreign_keys for name, table in self.tables.items()}

    def functional_dependencies(self, table: str) -> tuple[FunctionalDependency, ...]:
        """The primary key's dependency (key → every other column), then the declared ones."""
        t = self.table(table)
        implied = tuple(c for c in t.column_names if c not in t.primary_key)
        key = (FunctionalDependency(t.name, t.primary_key, implied, declared=False),) if t.primary_key and implied else ()
        return key + t.functional_dependencies
