-- Grid consumption per region and day.
SELECT s.region, to_date(r.read_at) AS day, ROUND(SUM(r.kwh), 3) AS kwh
FROM readings r
JOIN meters m ON m.meter_id = r.meter_id
JOIN sites s ON s.site_id = m.site_id
WHERE lower(m.meter_type) = 'consumption'
GROUP BY s.region, to_date(r.read_at)
