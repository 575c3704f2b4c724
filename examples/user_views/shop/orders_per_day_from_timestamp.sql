-- Bar chart: orders placed per calendar day (from the order's creation timestamp).
SELECT CAST(created_at AS DATE) AS day,
       COUNT(*) AS orders
FROM orders
GROUP BY CAST(created_at AS DATE)
ORDER BY day
