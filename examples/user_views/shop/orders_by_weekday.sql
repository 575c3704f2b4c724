-- Bar chart: orders per weekday (1 = Sunday).
SELECT dayofweek(order_date) AS weekday, COUNT(*) AS orders
FROM orders
GROUP BY dayofweek(order_date)
ORDER BY weekday
