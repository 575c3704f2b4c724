-- Day (07-19 UTC) versus night consumption ratio per site.
SELECT m.site_id,
       ROUND(SUM(IF(hour(r.read_at) = 19, r.kwh, 0)), 2) AS day_kwh,
       ROUND(SUM(IF(hour(r.read_at) = 7, r.kwh, 0)), 2) AS night_kwh,
       ROUND(SUM(IF(hour(r.read_at) = 19, r.kwh, 0)) / NULLIF(SUM(IF(hour(r.read_at) = 7, r.kwh, 0)), 0), 2) AS ratio
FROM readings r INNER JOIN meters m USING (meter_id)
WHERE lower(m.meter_type) = 'consumption'
GROUP BY m.site_id
