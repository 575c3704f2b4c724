"""Keep in each atom only the columns the plan above reads, plus its primary key.

Stages carry whole subtree rows from leaves to the root, so every column dropped here is memory
saved in every stage's state. The primary key stays so that projected atoms keep set semantics.
"""

from __future__ import annotations

from planner.ir.expressions import Column
from planner.ir.logical import LogicalPlan
from planner.ir.maintenance import Atom
from planner.ir.reads import columns_read
from planner.optimizer.context import OptimizerContext
from planner.optimizer.executor import Rule


class PruneAtomColumns(Rule):
    """Drop atom columns nothing reads.

    Keeps ``apply``: what "nothing reads" means is every operator of the whole plan, gathered once
    before the walk.

    >>> from catalog.tpch import tpch_catalog
    >>> from planner.optimizer.context import OptimizerContext
    >>> from planner.optimizer.testing import assert_rewrite
    >>> assert_rewrite(PruneAtomColumns(), '''
    ... Project items=[o.o_orderdate AS d]
    ...   ForeignKeyJoin root=o edges=[]
    ...     Atom table=orders alias=o columns=[o_orderkey, o_custkey, o_orderdate]
    ... ''', '''
    ... Project items=[o.o_orderdate AS d]
    ...   ForeignKeyJoin root=o edges=[]
    ...     Atom table=orders alias=o columns=[o_orderkey, o_orderdate]
    ... ''', OptimizerContext(tpch_catalog()))
    """

    def apply(self, plan: LogicalPlan, ctx: OptimizerContext) -> LogicalPlan:
        # an atom's selection runs on the full source row, before projection
        used = columns_read(plan, skip=lambda node, field: isinstance(node, Atom) and field == "predicate")

        def prune(node: LogicalPlan) -> LogicalPlan:
            if not isinstance(node, Atom):
                return node
            key = set(ctx.catalog.table(node.table).primary_key)
            kept = tuple(c for c in node.columns if c in key or Column(node.alias, c) in used)
            # π_used(R) loses nothing the plan reads; the key keeps R a set
            return node if kept == node.columns else Atom(node.table, node.alias, kept, node.predicate)

        return plan.transform_up(prune)
