"""The errors the SQL front end raises: what a user sees when a query cannot be planned."""

from __future__ import annotations

from catalog.schema import CatalogError


class UnsupportedSqlError(ValueError):
    """The SQL uses something the planner cannot represent; the message names the clause and why."""


class AmbiguousColumnError(CatalogError):
    """An unqualified column name matches columns of two relations of the same FROM."""
