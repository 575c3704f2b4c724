-- Bar chart: revenue per month labelled 'yyyy-MM'.
SELECT date_format(o.order_date, 'yyyy-MM') AS month,
       SUM(oi.quantity * oi.unit_price) AS revenue
FROM orders o
JOIN order_items oi ON oi.order_id = o.order_id
GROUP BY date_format(o.order_date, 'yyyy-MM')
ORDER BY month
