"""An uncorrelated scalar subquery as a one-row view: the stage that keeps Spark's "one row" promise.

A scalar subquery used as an expression must return at most one row: no row is NULL, one row is
its value, and more than one row is an error at run time in Spark
(``[SCALAR_SUBQUERY_TOO_MANY_ROWS]``), not a value. A global aggregate guarantees at most one row;
any other subquery (``SELECT n_nationkey FROM nation WHERE n_name = 'FRANCE'``) does not, so its
result changes pass through this stage, which keeps the subquery's current rows and raises Spark's
error as soon as a batch leaves more than one. The stages reading the value (a threshold, a nested
aggregate's fed value) may then take "the" row for granted.
"""

from __future__ import annotations

from collections import Counter

from operators.stages.base import Change, KeyedStage, StageDescription
from operators.zset import Changelog, Row, apply_changes, consolidate


class ScalarSubqueryTooManyRowsError(RuntimeError):
    """Spark's run-time error for a scalar subquery returning more than one row; the batch is rejected."""

    error_class = "SCALAR_SUBQUERY_TOO_MANY_ROWS"


class OneRowStage(KeyedStage):
    """Passes a scalar subquery's result changes on, keyed by a constant; raises when more than one
    row would remain after a batch (rows of one batch are summed first, so -old/+new is one row)."""

    def __init__(self, name: str, output_columns: tuple[str, ...]):
        self.name, self.output_columns = name, output_columns

    def key_of(self, port: int, row: Row) -> tuple:
        return ()

    def process(self, key: tuple, state: Counter | None, changes: list[Change]) -> tuple[Counter | None, Changelog]:
        rows = state if state is not None else Counter()
        delta = consolidate((c.row, c.weight) for c in changes)
        after = rows.copy()
        apply_changes(after, delta)
        if sum(after.values()) > 1:
            raise ScalarSubqueryTooManyRowsError(
                f"[{ScalarSubqueryTooManyRowsError.error_class}] More than one row returned by a subquery used as "
                f"an expression ({self.name}: {sum(after.values())} rows, e.g. {sorted(after, key=repr)[:2]}). "
                "SQLSTATE: 21000")
        return (after or None), delta

    def describe(self) -> StageDescription:
        return StageDescription(
            operator="OneRow (scalar subquery)", inputs="the subquery's result changes",
            state="the subquery's current row", key="constant (one value)",
            update_cost="O(1) per change",
            why="a scalar subquery that is not a global aggregate may return several rows: Spark raises "
                "SCALAR_SUBQUERY_TOO_MANY_ROWS then, and so does this stage, rejecting the batch",
        )
