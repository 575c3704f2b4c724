"""The errors the SQL front end raises: what a user sees when a query cannot be planned."""

from __future__ import annotations

from catalog.schema import CatalogError


class UnsupportedSqlError(ValueError):
    """The SQL uses something the planner cannot represent; the message names the clause and why."""


class AmbiguousColumnError(CatalogError):
    """An unqualified column name matches columns of two relations of the same FROM."""


class UnsupportedDataFrameError(UnsupportedSqlError):
    """A DataFrame's analyzed Catalyst plan holds a node or expression the planner cannot represent,
    or the DataFrame is not a classic (py4j) one; the message names the node and why."""
