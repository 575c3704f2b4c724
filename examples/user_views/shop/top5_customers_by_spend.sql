-- Leaderboard: top five customers by lifetime spend, with a display name.
SELECT c.customer_id,
       concat(c.first_name, ' ', c.last_name) AS customer_name,
       SUM(oi.quantity * oi.unit_price) AS lifetime_spend
FROM customers c
JOIN orders o ON o.customer_id = c.customer_id
JOIN order_items oi ON oi.order_id = o.order_id
GROUP BY c.customer_id, c.first_name, c.last_name
ORDER BY lifetime_spend DESC
LIMIT 5
