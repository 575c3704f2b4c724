"""GROUP BY ROLLUP / CUBE / GROUPING SETS: the grouping sets of a GROUP BY clause, and how one set's
query block reads its keys and ``grouping()`` / ``grouping_id()``.

Spark plans grouping sets as an ``Expand`` (one copy of every row per set, the absent keys NULL, a
``spark_grouping_id`` column) under one ``Aggregate`` grouped by the keys and the grouping id. The
maintained plan here is its algebraic equal: a ``UNION ALL`` of one grouped aggregate per set, each
showing NULL for the keys outside its set, so every set is an ordinary ring or group aggregate and
a change costs what it costs there, once per set. The grouping id needs no column: within one
branch it is a constant, so ``grouping(k)`` and ``grouping_id()`` are literals there, and a real
NULL key and a rolled-up one stay apart because they come from different branches (two equal rows
of a multiset, as in Spark). The empty set ``()`` is grouped by its grouping id, a constant, not
a global aggregate: Spark's aggregate is grouped by the id too, so a ROLLUP over an empty input
has no grand-total row (checked on Spark 4: ``GROUP BY ROLLUP(g)`` over no rows gives no rows).

Spark's rules reproduced: ``GROUP BY a, ROLLUP(b)`` is the cross product of its parts' sets;
``GROUP BY a, b WITH ROLLUP`` is ``ROLLUP(a, b)``; a set repeated gives its rows again; the keys
are the distinct expressions in order of appearance, and ``grouping_id()``'s bits are theirs,
the first key the highest bit, a bit set when the key is rolled up; ``grouping_id(k1, ...)`` must
name exactly the keys in that order (GROUPING_ID_COLUMN_MISMATCH). ``grouping()`` is typed INT
here (Spark's TINYINT: the catalog has no TINYINT; the values are the same 0 and 1).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

from sqlglot import exp

from catalog.types import BIGINT, INT, NULL
from planner.ir.expressions import Call, Expr, Literal, cast_op, type_of, walk
from planner.sql.errors import UnsupportedSqlError

GROUPING_FUNCTIONS = ("grouping", "grouping_id")


def grouping_call(node: exp.Grouping | exp.GroupingId, convert: Callable[[exp.Expression], Expr]) -> Call:
    """``grouping(k)`` / ``grouping_id(...)`` as a placeholder call that ``branch_constants`` resolves."""
    args = tuple(convert(e) for e in node.expressions)
    if isinstance(node, exp.Grouping):
        if len(args) != 1:
            raise UnsupportedSqlError(f"grouping() takes one column: {node.sql(dialect='spark')}")
        return Call("grouping", args, INT)
    return Call("grouping_id", args, BIGINT)


def reject_grouping_functions(exprs: list[Expr], clause: str) -> None:
    """Spark's refusal of ``grouping()`` outside a GROUP BY with grouping sets."""
    if any(isinstance(e, Call) and e.op in GROUPING_FUNCTIONS for expr in exprs for e in walk(expr)):
        raise UnsupportedSqlError(
            f"grouping()/grouping_id() in {clause} can only be used with GROUPING SETS, CUBE or ROLLUP "
            "(Spark: UNSUPPORTED_GROUPING_EXPRESSION)"
        )


def has_grouping_sets(group: exp.Group) -> bool:
    return bool(group.args.get("rollup") or group.args.get("cube")
                or any(isinstance(e, exp.Rollup | exp.Cube | exp.GroupingSets) for e in group.expressions))


def grouping_sets(group: exp.Group, key_of: Callable[[exp.Expression], Expr]) -> tuple[list[Expr], list[tuple[Expr, ...]]]:
    """The distinct keys of ``group`` in order of appearance, and its grouping sets (each a tuple of
    keys, possibly empty, possibly repeated). ``key_of`` converts one key expression (an ordinal too)."""
    factors: list[list[list[exp.Expression]]] = []
    plain = [e for e in group.expressions if not isinstance(e, exp.Rollup | exp.Cube | exp.GroupingSets)]
    if group.args.get("rollup") or group.args.get("cube"):
        # GROUP BY a, b WITH ROLLUP: ROLLUP(a, b) (MySQL's spelling, which Spark accepts)
        if len(plain) != len(group.expressions):
            raise UnsupportedSqlError("GROUP BY ... WITH ROLLUP/CUBE lists plain expressions only (as in Spark)")
        units = [[e] for e in plain]
        factors.append(_rollup(units) if group.args.get("rollup") else _cube(units))
    else:
        for node in group.expressions:
            if isinstance(node, exp.Rollup):
                factors.append(_rollup([_unit(e) for e in node.expressions]))
            elif isinstance(node, exp.Cube):
                factors.append(_cube([_unit(e) for e in node.expressions]))
            elif isinstance(node, exp.GroupingSets):
                factors.append([_unit(e) for e in node.expressions])
            else:
                factors.append([[node]])
    keys: list[Expr] = []
    sets: list[tuple[Expr, ...]] = []
    for parts in itertools.product(*factors):
        members: list[Expr] = []
        for node in itertools.chain.from_iterable(parts):
            key = key_of(node)
            if key not in keys:
                keys.append(key)
            if key not in members:
                members.append(key)
        sets.append(tuple(members))
    return keys, sets


def _unit(node: exp.Expression) -> list[exp.Expression]:
    """One element of ROLLUP/CUBE/GROUPING SETS: a column, or a parenthesized list of them."""
    if isinstance(node, exp.Tuple):
        return list(node.expressions)
    if isinstance(node, exp.Paren):
        return [node.this]
    return [node]


def _rollup(units: list[list[exp.Expression]]) -> list[list[exp.Expression]]:
    return [list(itertools.chain.from_iterable(units[:n])) for n in range(len(units), -1, -1)]


def _cube(units: list[list[exp.Expression]]) -> list[list[exp.Expression]]:
    chosen = itertools.product((True, False), repeat=len(units))
    return [list(itertools.chain.from_iterable(u for u, keep in zip(units, c, strict=True) if keep)) for c in chosen]


def grouping_id(keys: list[Expr], members: tuple[Expr, ...]) -> int:
    """Spark's grouping id of a set: one bit per key, the first key the highest, set when rolled up."""
    return sum(1 << (len(keys) - 1 - i) for i, key in enumerate(keys) if key not in members)


def typed_null(key: Expr) -> Expr:
    """A NULL of ``key``'s type (a grouping set's rolled-up key, a padded row's column): a union's column keeps the key's type whichever branch comes first."""
    kind = type_of(key)
    return Literal(None, NULL) if kind in (None, NULL) else Call(cast_op(kind), (Literal(None, NULL),), kind)


def branch_constants(keys: list[Expr], members: tuple[Expr, ...], uses: list[Expr]) -> list[tuple[Expr, Expr]]:
    """What one set's query block reads in place of an expression: a key outside the set is a NULL
    of its type, ``grouping(k)`` and ``grouping_id(...)`` the set's constants."""
    replaced: list[tuple[Expr, Expr]] = [(key, typed_null(key)) for key in keys if key not in members]
    for call in {e: None for expr in uses for e in walk(expr) if isinstance(e, Call) and e.op in GROUPING_FUNCTIONS}:
        if call.op == "grouping":
            if call.args[0] not in keys:
                raise UnsupportedSqlError(f"grouping({call.args[0]}): the column is not a GROUP BY key")
            replaced.append((call, Literal(int(call.args[0] not in members), INT)))
        else:
            if call.args and list(call.args) != keys:
                raise UnsupportedSqlError(
                    "grouping_id(...) must list exactly the GROUP BY keys in their order, or none "
                    "(Spark: GROUPING_ID_COLUMN_MISMATCH)"
                )
            replaced.append((call, Literal(grouping_id(keys, members), BIGINT)))
    return replaced
