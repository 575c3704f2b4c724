-- Heatmap: orders per hour of day.
SELECT hour(created_at) AS hour_of_day, COUNT(*) AS orders
FROM orders
GROUP BY hour(created_at)
ORDER BY hour_of_day
