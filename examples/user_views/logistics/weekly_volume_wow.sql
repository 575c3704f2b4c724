-- Trend: shipments per week and the change on the previous week in percent.
WITH weekly AS (
    SELECT date_trunc('WEEK', created_at) AS week, COUNT(*) AS shipments
    FROM shipments
    GROUP BY 1
)
SELECT week, shipments,
       LAG(shipments, 1) OVER (ORDER BY week) AS prev_week,
       ROUND((shipments - LAG(shipments, 1) OVER (ORDER BY week)) * 100.0
             / LAG(shipments, 1) OVER (ORDER BY week), 1) AS wow_pct
FROM weekly
