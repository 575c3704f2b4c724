-- Trend tile: orders per day and the change from the previous day with orders.
SELECT order_date, orders,
       orders - LAG(orders) OVER (ORDER BY order_date) AS change_from_previous
FROM (SELECT order_date, COUNT(*) AS orders FROM orders GROUP BY order_date) d
