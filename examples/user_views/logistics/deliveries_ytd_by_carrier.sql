-- Trend: deliveries per carrier per month and the year to date.
WITH m AS (
    SELECT r.carrier_id, date_trunc('MONTH', s.delivered_at) AS month, COUNT(*) AS deliveries
    FROM shipments s
    JOIN routes r ON r.route_id = s.route_id
    WHERE s.status = 'delivered'
    GROUP BY r.carrier_id, date_trunc('MONTH', s.delivered_at)
)
SELECT carrier_id, month, deliveries,
       SUM(deliveries) OVER (PARTITION BY carrier_id ORDER BY month) AS ytd
FROM m
