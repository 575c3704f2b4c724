-- Pie chart: revenue per top-level category (a category without a parent is its own top level).
SELECT coalesce(parent.name, c.name) AS top_category,
       SUM(oi.quantity * oi.unit_price) AS revenue
FROM order_items oi
JOIN products p ON p.product_id = oi.product_id
JOIN categories c ON c.category_id = p.category_id
LEFT JOIN categories parent ON parent.category_id = c.parent_id
GROUP BY coalesce(parent.name, c.name)
