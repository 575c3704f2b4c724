"""The errors the SQL front end raises: what a user sees when a query cannot be planned."""

from __future__ import annotations

import re

from sqlglot.errors import ParseError

from catalog.schema import CatalogError


class UnsupportedSqlError(ValueError):
    """The SQL uses something the planner cannot represent; the message names the clause and why."""


class AmbiguousColumnError(CatalogError):
    """An unqualified column name matches columns of two relations of the same FROM."""


class UnsupportedDataFrameError(UnsupportedSqlError):
    """A DataFrame's analyzed Catalyst plan holds a node or expression the planner cannot represent,
    or the DataFrame is not a classic (py4j) one; the message names the node and why."""


def located_parse_error(sql: str, err: ParseError) -> str:
    """The first parse error's description and position, then the offending line with a caret under the
    token sqlglot stopped at (its ``col`` is the 1-based column where that token ends)."""
    if not err.errors:
        return str(err)
    first = err.errors[0]
    line, end, token = first["line"], first["col"], first.get("highlight") or ""
    lines = sql.splitlines() or [""]
    text = lines[min(max(line, 1), len(lines)) - 1]
    start = max(end - len(token), 0)
    caret = " " * start + "^" * max(len(token), 1)
    # "Required keyword: 'expression' missing for <class 'sqlglot.expressions.core.EQ'>" speaks sqlglot
    description = _SQLGLOT_MISSING.sub("an expression is missing", first["description"])
    return f"{description} at line {line}, column {start + 1}:\n  {text}\n  {caret}"


_SQLGLOT_MISSING = re.compile(r"Required keyword: '\w+' missing for <class '[\w.]+'>")
