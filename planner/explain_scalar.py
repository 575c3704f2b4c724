"""EXPLAIN's section on uncorrelated scalar subqueries in a select list (rules/scalar_product.py).

The headline ("Strategy:") speaks of the join below; the product with the subquery's one-row view
sits above it, and a change of the subquery's value costs what no row change does: every row.
"""

from __future__ import annotations

from planner.compiler import CompiledQuery
from planner.ir.scalar_product import ScalarProduct

SCALAR_PRODUCT_COST = ("O(1) per row change; O(rows of the result) when the subquery's value changes: every row "
                       "carries the value, so every row changes with it (inherent to the query)")


def scalar_products_json(compiled: CompiledQuery) -> list[dict]:
    """Per product with uncorrelated scalar subqueries, outermost first: their columns and the cost."""
    return [{"columns": list(node.names), "update_cost": SCALAR_PRODUCT_COST}
            for node in compiled.plan.walk() if isinstance(node, ScalarProduct)]


def scalar_products_text(compiled: CompiledQuery) -> list[str]:
    """One ``Scalar subquery:`` line per product."""
    return [f"Scalar subquery ({', '.join(product['columns'])}), uncorrelated, read by every row: {product['update_cost']}"
            for product in scalar_products_json(compiled)]
