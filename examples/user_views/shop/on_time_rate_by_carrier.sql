-- Ops gauge: share of shipments delivered within 5 days of the order, per carrier.
SELECT s.carrier,
       AVG(CASE WHEN datediff(s.delivered_date, o.order_date) <= 5 THEN 1.0 ELSE 0.0 END) AS on_time_rate
FROM shipments s
JOIN orders o ON o.order_id = s.order_id
WHERE s.delivered_date IS NOT NULL
GROUP BY s.carrier
