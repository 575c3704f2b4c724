"""A query block over a ``UNION ALL`` derived table, planned as the union of the block over each
branch, the form the planner maintains (a union of two maintained queries).

Laws: selection and projection distribute over a bag union, σπ(A ⊎ B) = σπ(A) ⊎ σπ(B); and a
grouping whose key holds a different constant in every branch (``SELECT 'a' AS kind ... UNION ALL
SELECT 'b' ...`` grouped by ``kind``) has disjoint groups per branch, so γ_{K; F}(A ⊎ B) =
γ_{K; F}(A) ⊎ γ_{K; F}(B), HAVING and the select list included. Any other block over a union
(DISTINCT, ORDER BY, LIMIT, window functions, joins, a grouping without such a key, a distinct
UNION) is left as it is.
"""

from __future__ import annotations

from collections.abc import Mapping

from sqlglot import exp

from planner.ir.expressions import Literal
from planner.ir.logical import LogicalPlan, Project
from planner.sql.expressions import QueryPlanner
from planner.sql.scope import Scope, output_names


def per_branch_blocks(select: exp.Select, planner: QueryPlanner, outer: Scope | None,
                      ctes: Mapping[str, LogicalPlan]) -> list[exp.Select] | None:
    """Copies of ``select``, each reading one branch of its ``UNION ALL`` derived table under the
    same alias and column names, when a law above applies; None otherwise."""
    from_ = select.args.get("from_")
    derived = from_.this if from_ is not None else None
    if not isinstance(derived, exp.Subquery) or not derived.alias or select.args.get("joins") \
            or any(select.args.get(clause) for clause in ("distinct", "order", "limit")) or select.find(exp.Window):
        return None
    branches = _union_all_branches(derived.this)
    if len(branches) < 2:
        return None
    plans = [planner.query(branch, outer, ctes) for branch in branches]
    alias_node = derived.args["alias"]
    names = [c.name.lower() for c in alias_node.args.get("columns") or []] or list(output_names(plans[0]))
    aggregated = select.args.get("group") or select.args.get("having") or any(
        e.find(exp.AggFunc) for e in select.expressions)
    if aggregated and not _has_branch_tag_key(select, names, plans):
        return None
    if any(node is not derived and node.alias_or_name == derived.alias
           for node in select.find_all(exp.Table, exp.Subquery)):
        return None  # the block's own subqueries reuse the alias: renaming it below would be ambiguous
    copies = []
    for number, (branch, plan) in enumerate(zip(branches, plans, strict=True)):
        copy = select.copy()
        # Each copy reads its branch under its own alias: the same derived-table alias in two
        # branches of a union confuses the lowering's column lookup (a known bug, noted in the report).
        alias = derived.alias if number == 0 else f"{derived.alias}_{number}"
        for column in copy.find_all(exp.Column):
            if column.table == derived.alias:
                column.set("table", exp.to_identifier(alias))
        copy.set("from_", exp.From(this=_named(branch, alias, names, list(output_names(plan)))))
        copies.append(copy)
    return copies


def _named(branch: exp.Expression, alias: str, names: list[str], own: list[str]) -> exp.Subquery:
    """``(branch) AS alias`` with the union's column ``names``: the branch's select items renamed
    when that is all it takes (a derived table so named is inlined), else an alias column list."""
    columns: list[exp.Identifier] = []
    if own != names:
        if isinstance(branch, exp.Select) and not any(branch.args.get(c) for c in ("group", "having", "order")) \
                and not any(isinstance(e, exp.Star) or e.find(exp.Star) for e in branch.expressions):
            branch = branch.copy()
            branch.set("expressions", [exp.alias_(e.unalias(), n) for e, n in zip(branch.expressions, names, strict=True)])
        else:
            columns = [exp.to_identifier(n) for n in names]
    return exp.Subquery(this=branch.copy(), alias=exp.TableAlias(this=exp.to_identifier(alias), columns=columns))


def _union_all_branches(node: exp.Expression) -> list[exp.Expression]:
    """The branches of a chain of ``UNION ALL`` without its own ORDER BY, LIMIT or WITH; [node] else."""
    if isinstance(node, exp.Union) and not node.args.get("distinct") \
            and not any(node.args.get(clause) for clause in ("order", "limit", "with_")):
        return [*_union_all_branches(node.this), *_union_all_branches(node.expression)]
    return [node]


def _has_branch_tag_key(select: exp.Select, names: list[str], plans: list[LogicalPlan]) -> bool:
    """A GROUP BY column whose value is a different non-NULL constant in every branch."""
    group = select.args.get("group")
    for key in group.expressions if group else []:
        if not (isinstance(key, exp.Column) and key.name.lower() in names):
            continue
        position = names.index(key.name.lower())
        tags = [_constant_at(plan, position) for plan in plans]
        if all(tag is not None for tag in tags) and len(set(tags)) == len(tags):
            return True
    return False


def _constant_at(plan: LogicalPlan, position: int) -> object | None:
    if isinstance(plan, Project) and isinstance(literal := plan.items[position].expr, Literal):
        return literal.value
    return None
