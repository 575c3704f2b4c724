-- Ops tile: average days from shipping to delivery per carrier.
SELECT carrier,
       AVG(datediff(delivered_date, shipped_date)) AS avg_transit_days,
       COUNT(*) AS delivered
FROM shipments
WHERE delivered_date IS NOT NULL
GROUP BY carrier
