-- Table: each category's revenue and its share of total revenue.
SELECT p.category_id,
       SUM(oi.quantity * oi.unit_price) AS revenue,
       SUM(oi.quantity * oi.unit_price) / (SELECT SUM(quantity * unit_price) FROM order_items) AS share
FROM order_items oi
JOIN products p ON p.product_id = oi.product_id
GROUP BY p.category_id
