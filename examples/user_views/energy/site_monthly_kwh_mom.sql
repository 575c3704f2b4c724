-- Monthly consumption per site with the previous month and the change.
WITH monthly AS (
    SELECT m.site_id, date_trunc('MONTH', r.read_at) AS month, SUM(r.kwh) AS kwh
    FROM readings r JOIN meters m ON r.meter_id = m.meter_id
    WHERE lower(m.meter_type) = 'consumption'
    GROUP BY m.site_id, date_trunc('MONTH', r.read_at)
)
SELECT site_id, month, ROUND(kwh, 2) AS kwh,
       ROUND(LAG(kwh) OVER (PARTITION BY site_id ORDER BY month), 2) AS prev_kwh,
       ROUND(kwh - LAG(kwh) OVER (PARTITION BY site_id ORDER BY month), 2) AS change_kwh
FROM monthly
