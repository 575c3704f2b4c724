"""A SELECT without FROM whose values are scalar subqueries (the headline tiles of a dashboard:
``SELECT (SELECT COUNT(*) FROM sites) AS sites, (SELECT SUM(kwh) FROM readings) AS kwh``), planned
as a block that reads one of those subqueries as its one-row relation.

Law: a global aggregate (an aggregate without GROUP BY, HAVING, LIMIT or set operation) returns
exactly one row over any input, so ``(SELECT a FROM S)`` read as a scalar equals the one column of
``FROM (SELECT a AS v FROM S) AS one``: the block ``SELECT f(q1, q2, ...)`` (no FROM: Spark's one-row
relation) equals ``SELECT f(one.v, q2, ...) FROM (q1's block) one``. The other subqueries stay
scalar subqueries in SELECT (a product with their one-row views, ``rules/scalar_product.py``), which
give NULL for no row and Spark's error for more than one, as a scalar subquery does.
"""

from __future__ import annotations

from sqlglot import exp

from planner.sql.errors import UnsupportedSqlError

_ALIAS = "_one_row"
_VALUE = "_v"


def from_one_row_subquery(select: exp.Select) -> exp.Select:
    """``select`` (which has no FROM) rewritten by the law above; refused when none of its scalar
    subqueries is a global aggregate (no relation is known to have exactly one row)."""
    own = [s for s in select.find_all(exp.Subquery) if s.find_ancestor(exp.Select) is select]
    one_row = next((s for s in own if _is_global_aggregate(s.this)), None)
    if one_row is None:
        raise UnsupportedSqlError(
            "SELECT without FROM is supported only over scalar subqueries one of which is a global aggregate "
            "(SELECT COUNT(*) FROM t): every other query block must read a relation")
    block = one_row.this.copy()
    (value,) = block.expressions
    block.set("expressions", [exp.alias_(value.unalias(), _VALUE)])
    rewritten = select.copy()
    for position, item in enumerate(rewritten.expressions):  # an unaliased item keeps the name it had
        if item == one_row:
            item.replace(exp.Alias(this=item.copy(), alias=exp.to_identifier(f"_c{position}")))
    target = next(s for s in rewritten.find_all(exp.Subquery) if s == one_row)
    target.replace(exp.column(_VALUE, table=_ALIAS))
    rewritten.set("from_", exp.From(this=exp.Subquery(this=block, alias=exp.TableAlias(this=exp.to_identifier(_ALIAS)))))
    return rewritten


def _is_global_aggregate(block: exp.Expression) -> bool:
    """One row whatever its input: a SELECT of one aggregate value, with no GROUP BY, HAVING or LIMIT."""
    if not isinstance(block, exp.Select) or len(block.expressions) != 1 or not block.args.get("from_"):
        return False
    if any(block.args.get(clause) for clause in ("group", "having", "limit", "qualify", "distinct")):
        return False
    value = block.expressions[0].unalias()
    if value.find(exp.Window) or value.find(exp.Subquery):
        return False
    return value.find(exp.AggFunc) is not None and not _reads_plain_column(value)


def _reads_plain_column(value: exp.Expression) -> bool:
    """Whether ``value`` reads a column outside every aggregate (then it is not a global aggregate)."""
    return any(column.find_ancestor(exp.AggFunc) is None for column in value.find_all(exp.Column))

