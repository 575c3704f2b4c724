"""ORDER BY ... LIMIT k as a maintained top-k (AJU §5 discusses order-by over maintained results).

The top k of a multiset cannot be kept from the k rows alone: deleting one of them needs the next
row, so the operator keeps the whole result in an ordered multiset and re-reads its first k rows
after each batch (O(log n + k) per batch).
"""

from __future__ import annotations

from planner.ir.logical import Limit, LogicalPlan, Sort
from planner.ir.maintenance import TopK
from planner.optimizer.context import OptimizerContext
from planner.optimizer.executor import Rule


class MaintainTopK(Rule):
    """Fuse ``Limit(k, Sort(keys, q))`` into ``TopK(keys, k, q)``.

    >>> from planner.optimizer.testing import assert_rewrite
    >>> assert_rewrite(MaintainTopK(), '''
    ... Limit count=10
    ...   Sort keys=[revenue DESC]
    ...     Scan table=t alias=t columns=[revenue]
    ... ''', '''
    ... TopK keys=[revenue DESC] count=10
    ...   Scan table=t alias=t columns=[revenue]
    ... ''', None)

    Paper: AJU §5 (order-by on top of a maintained query).
    """

    def rewrite(self, node: LogicalPlan, ctx: OptimizerContext) -> LogicalPlan:
        match node:
            # limit_k(sort_keys(Q)) = the first k rows of Q in key order
            case Limit(count, Sort(keys, child)):
                return TopK(keys, count, child)
        return node
