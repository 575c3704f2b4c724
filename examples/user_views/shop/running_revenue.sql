-- Line chart: cumulative revenue by order date.
SELECT order_date,
       SUM(daily) OVER (ORDER BY order_date ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS cumulative_revenue
FROM (
    SELECT o.order_date, SUM(oi.quantity * oi.unit_price) AS daily
    FROM orders o
    JOIN order_items oi ON oi.order_id = o.order_id
    GROUP BY o.order_date
) d
