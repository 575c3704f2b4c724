-- Planning: deliveries per weekday.
SELECT date_format(delivered_at, 'EEEE') AS weekday, dayofweek(delivered_at) AS dow, COUNT(*) AS deliveries
FROM shipments
WHERE delivered_at IS NOT NULL
GROUP BY date_format(delivered_at, 'EEEE'), dayofweek(delivered_at)
