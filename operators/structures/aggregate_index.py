"""Aggregate indexes over RPAI trees (Abeysinghe et al., SIGMOD 2022, §2.2.3, §3).

An *aggregate index* maps a value of a correlated aggregate q to the partial aggregates of the rows
having that q; a predicate ``v θ q`` then reads one range sum. ``PrefixAggregateIndex`` is the
VWAP shape: q(r) = Σ argument(r') over the rows r' with ``r'.c op r.c`` — a prefix sum along one
column — so inserting a row shifts the q of a whole range of rows by the same amount, which the
RPAI tree's ``shift_keys`` does in O(log n).

It is shared by the VWAP stage (one threshold v for all rows) and by the general algorithm's
parameterized subqueries (NQ2: a threshold per outer key, each answered by its own range sum).

Index keys must be exact numbers: integral floats become ints and other floats Fractions, because
the RPAI tree stores keys relative to their parents and float subtraction would drift.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from fractions import Fraction

import attrs

from operators.structures.rpai_tree import RPAITree
from operators.zset import Compiled, Row

#: The comparisons whose passing values form a range of sorted keys (``<>`` does not): what an
#: aggregate index or a join-select answers, and the one op → function table the stages and the
#: expression compiler share.
COMPARISONS: dict[str, Callable[[object, object], bool]] = {
    "=": operator.eq, "<>": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
}


#: Beyond every double (the largest is below 2**1024): where NaN and ±Infinity go among exact keys.
_BEYOND_DOUBLES = 2 ** 1100


def exact(value):
    """An index key that survives relative-key arithmetic: ints stay, floats become int or Fraction;
    -Infinity, Infinity and NaN become integers beyond every double in Spark's order (NaN above
    Infinity, one NaN: operators/doubles.py), so comparisons with them are Spark's."""
    if isinstance(value, float):
        if value - value != 0.0:  # NaN or ±Infinity
            return _BEYOND_DOUBLES + 1 if math.isnan(value) else _BEYOND_DOUBLES if value > 0 else -_BEYOND_DOUBLES
        return int(value) if value.is_integer() else Fraction(value)
    return value


def range_sum(index, op: str, v) -> object:
    """Σ of index values whose key k satisfies ``v op k`` (the outer predicate with q = k)."""
    if v is None:
        return 0
    if op == "=":
        return index.get(exact(v))
    if op == "<>":  # every key but v
        return index.total() - index.get(exact(v))
    v = exact(v)
    at_most = index.get_sum(v)
    below = at_most - index.get(v)
    if op == "<":  # keys > v
        return index.total() - at_most
    if op == "<=":  # keys >= v
        return index.total() - below
    if op == ">":  # keys < v
        return below
    return at_most  # ">=": keys <= v


@attrs.define
class PrefixIndexState:
    bound: RPAITree  # column value (negated for > / >=) -> Σ of q's argument over the rows with it
    indexes: dict  # group (``()`` without GROUP BY) -> RPAI trees keyed by q, one per vector component

    @staticmethod
    def new_trees(group: tuple, width: int) -> list:
        """A new group's trees, one per vector component (in memory; the Spark runner's paged state,
        ``stages/nested/pages.py``, gives trees in pages named by the group)."""
        return [RPAITree() for _ in range(width)]


class PrefixAggregateIndex:
    """The rows of one relation indexed by q(r) = Σ_{r' : r'.c op_inner r.c} argument(r') (RPAI Figure 2c).

    ``op_inner`` ``>``/``>=`` are mirrored onto ``<``/``<=`` by negating the column. Each row adds a
    *vector* (the partial aggregates its readers need) at its q, in its group's trees; every group's
    keys are the same prefix sums, so an insert shifts the same key range in each: O(groups · log n).
    """

    def __init__(self, column: Compiled, op_inner: str, argument: Compiled | None, table: str):
        self.column, self.argument, self.table = column, argument, table
        self.mirror = op_inner in (">", ">=")
        self.strict = op_inner in ("<", ">")

    @staticmethod
    def new_state() -> PrefixIndexState:
        return PrefixIndexState(RPAITree(), {})

    def apply(self, state: PrefixIndexState, row: Row, weight: int, vector: Sequence, group: tuple = ()) -> None:
        """Insert (``weight`` 1) or delete (-1) one row carrying ``vector`` in ``group``."""
        amount = 1 if self.argument is None else self.argument(row)
        if amount is None or amount <= 0 or amount - amount != 0:  # not NaN, not Infinity: keys are its sums
            raise ValueError(f"table {self.table}: the RPAI tree strategy needs positive finite aggregated values, "
                             f"got {amount!r} in row {row!r}")
        x = exact(self.column(row))
        x = -x if self.mirror else x
        delta = weight * exact(amount)
        at_x = state.bound.get(x)
        prefix = state.bound.get_sum(x)
        every_index = [index for indexes in state.indexes.values() for index in indexes]
        if self.strict:  # q(t) = Σ over keys < x: the group at x keeps its key, later groups move
            key = prefix - at_x
            for index in every_index:
                (index.shift_keys if at_x else index.shift_keys_inclusive)(key, delta)
        else:  # q(t) = Σ over keys <= x: the group at x and all later ones move (Figure 2c, lines 10-18)
            for index in every_index:
                index.shift_keys(prefix - at_x, delta)
            key = prefix + delta
        state.bound.add(x, delta)
        indexes = state.indexes.get(group)
        if indexes is None:
            indexes = state.indexes[group] = state.new_trees(group, len(vector))
        for index, part in zip(indexes, vector, strict=True):
            if part:
                index.add(key, part)
        if group != () and not len(indexes[0]):
            del state.indexes[group]  # the group's last row left

    def range_vectors(self, state: PrefixIndexState, op: str, v) -> dict[tuple, tuple]:
        """Per group, the summed vectors of the rows with ``v op q``.

        SQL's SUM over no rows is NULL, which satisfies no comparison, but the paper's prefix sum
        reads 0; aggregated values are positive, so q = 0 means exactly "no rows" (possible only for
        a strict ``op_inner``): those rows are left out when ``v op 0`` would wrongly admit them.
        """
        drop_zero = self.strict and self.argument is not None and v is not None and COMPARISONS[op](v, 0)
        return {group: tuple(range_sum(index, op, v) - (index.get(0) if drop_zero else 0) for index in indexes)
                for group, indexes in state.indexes.items()}
