"""Schema facts for the planner: tables, keys, foreign keys and functional dependencies.

Every rule asks this package, never column names, whether a join is along a key. The bottom layer:
it imports nothing of ours, and every other package may import it.
"""

from catalog.schema import (
    Catalog,
    CatalogError,
    Column,
    ForeignKey,
    FunctionalDependency,
    Table,
    UnknownColumnError,
    UnknownTableError,
)

__all__ = [
    "Catalog",
    "CatalogError",
    "Column",
    "ForeignKey",
    "FunctionalDependency",
    "Table",
    "UnknownColumnError",
    "UnknownTableError",
]
