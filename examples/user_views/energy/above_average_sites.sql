-- Sites whose total consumption exceeds the average site's.
WITH site_kwh AS (
    SELECT m.site_id, SUM(r.kwh) AS kwh
    FROM readings r JOIN meters m ON r.meter_id = m.meter_id
    WHERE lower(m.meter_type) = 'consumption'
    GROUP BY m.site_id
)
SELECT site_id, ROUND(kwh, 1) AS kwh
FROM site_kwh
WHERE kwh > (SELECT AVG(kwh) FROM site_kwh)
