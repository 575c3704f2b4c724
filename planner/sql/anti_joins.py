"""The anti-join written as a LEFT JOIN: ``L LEFT JOIN R ON c ... WHERE r.k IS NULL`` with ``r.k``
never NULL on a matched row, planned as ``NOT EXISTS``, the form the planner maintains.

Law: if ``r.k`` is not NULL on every row of R that matches (a NOT NULL or primary key column of a
base table, or a column a top-level ``=`` conjunct of ``c`` compares, which a matched row makes
non-NULL), then the rows of ``L ⟕_c R`` with ``r.k IS NULL`` are exactly L's unmatched rows, once
each, padded with NULLs: σ_{r.k IS NULL}(L ⟕_c R) = σ_{∄r ∈ R: c}(L) × {(NULL, ...)}. So the join
goes, its test ``NOT EXISTS (SELECT 1 FROM R WHERE c)`` joins the WHERE (it reads only columns of
relations before R, and every later join keeps those rows, as in ``statements._semi_join_test``),
and R's columns read anywhere else in the query block are the NULLs they are on those rows.
"""

from __future__ import annotations

import attrs

from catalog.schema import Catalog
from catalog.types import BOOLEAN, INT
from planner.ir.expressions import Call, Column, Expr, Literal, Subquery, columns, conjuncts, transform
from planner.ir.logical import Filter, Join, LogicalPlan, NamedExpr, Project, Scan, SubqueryAlias
from planner.sql.errors import UnsupportedSqlError
from planner.sql.grouping_sets import typed_null
from planner.sql.scope import output_names, output_types


@attrs.frozen
class PaddedRows:
    """R's columns (by alias and name) → the typed NULL each is on the rows the rewrite keeps."""

    nulls: dict[tuple[str, str], Expr] = attrs.field(factory=dict)

    def substitute(self, expr: Expr) -> Expr:
        return transform(expr, lambda e: self.nulls.get((e.table, e.name), e) if isinstance(e, Column) else e)

    def refuse_reads(self, plan: LogicalPlan, spine: LogicalPlan) -> None:
        """A column of a rewritten R still read above the joins (GROUP BY, HAVING, ORDER BY, OVER:
        clauses converted after the rewrite) is refused rather than left dangling."""
        for node in plan.walk():
            if node is spine:
                return
            for expr in node.expressions():
                if read := next((c for c in columns(expr) if (c.table, c.name) in self.nulls), None):
                    raise UnsupportedSqlError(
                        f"{read} outside the SELECT list and WHERE of a LEFT JOIN ... WHERE {read.table}.<key> IS NULL "
                        "(an anti join) is not supported")


def anti_joins(plan: LogicalPlan, where: list[Expr], catalog: Catalog) -> tuple[LogicalPlan, list[Expr], PaddedRows]:
    """The left-deep joins ``plan`` with each left join that a WHERE conjunct ``r.k IS NULL`` turns
    into an anti join removed, ``where`` with that conjunct replaced by its ``NOT EXISTS`` test, and
    the NULLs R's columns read elsewhere stand for."""
    spine: list[Join] = []
    node = plan
    while isinstance(node, Join):
        spine.append(node)
        node = node.left
    padded = PaddedRows()
    where = list(where)
    # a RIGHT or FULL OUTER JOIN after a left join pads L's rows too: the law needs every later join to keep them
    kept_after = [not any(later.kind in ("right", "full") for later in spine[:i]) for i in range(len(spine))]
    for join, kept in reversed(list(zip(spine, kept_after, strict=True))):  # the first join first: a later join's ON may read an earlier R
        join = attrs.evolve(join, condition=padded.substitute(join.condition), left=node)
        test = _is_null_of_matched(join, where, catalog) if join.kind == "left" and kept else None
        if test is None:
            node = join
            continue
        where.remove(test)
        alias = _alias(join.right)
        for name, dtype in zip(output_names(join.right), output_types(join.right, catalog), strict=True):
            padded.nulls[(alias, name)] = typed_null(Column(alias, name, dtype))
        one = Project((NamedExpr("_c0", Literal(1, INT)),), Filter(join.condition, join.right))
        where.append(Subquery("exists", one, negated=True, dtype=BOOLEAN))
    return node, [padded.substitute(e) for e in where], padded


def _is_null_of_matched(join: Join, where: list[Expr], catalog: Catalog) -> Expr | None:
    """The WHERE conjunct ``r.k IS NULL`` whose ``r.k`` no row of R matched by ``join`` has NULL."""
    alias = _alias(join.right)
    equated = {side for part in conjuncts(join.condition) if isinstance(part, Call) and part.op == "="
               for side in part.args if isinstance(side, Column) and side.table == alias}
    for part in where:
        match part:
            case Call("is null", (Column(table=table, name=name) as key,)) if table == alias and alias:
                if key in equated or _not_null(join.right, name, catalog):
                    return part
    return None


def _alias(plan: LogicalPlan) -> str:
    match plan:
        case Scan(alias=alias) | SubqueryAlias(alias=alias):
            return alias
    return ""


def _not_null(plan: LogicalPlan, name: str, catalog: Catalog) -> bool:
    """A base table's NOT NULL or primary key column."""
    if not isinstance(plan, Scan):
        return False
    table = catalog.table(plan.table)
    return name in table.primary_key or not table.column(name).nullable
