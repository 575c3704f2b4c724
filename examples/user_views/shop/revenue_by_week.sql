-- Line chart: weekly revenue (weeks start on Monday).
SELECT date_trunc('WEEK', o.created_at) AS week_start,
       SUM(oi.quantity * oi.unit_price) AS revenue
FROM orders o
JOIN order_items oi ON oi.order_id = o.order_id
GROUP BY date_trunc('WEEK', o.created_at)
ORDER BY week_start
