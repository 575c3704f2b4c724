-- Table: revenue per month, with year and month columns for the finance export.
SELECT year(o.order_date) AS yr,
       month(o.order_date) AS mon,
       SUM(oi.quantity * oi.unit_price - oi.discount) AS net_revenue
FROM orders o
JOIN order_items oi ON oi.order_id = o.order_id
GROUP BY year(o.order_date), month(o.order_date)
ORDER BY yr, mon
