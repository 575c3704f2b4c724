-- Map: revenue and buyers per region and country.
SELECT r.country, r.name AS region,
       SUM(oi.quantity * oi.unit_price) AS revenue,
       COUNT(DISTINCT c.customer_id) AS buyers
FROM regions r
JOIN customers c ON c.region_id = r.region_id
JOIN orders o ON o.customer_id = c.customer_id
JOIN order_items oi ON oi.order_id = o.order_id
GROUP BY r.country, r.name
