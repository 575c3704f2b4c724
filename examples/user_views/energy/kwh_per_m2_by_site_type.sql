-- Energy intensity (kWh per square metre) by site type.
SELECT s.site_type,
       ROUND(SUM(r.kwh) / NULLIF(SUM(DISTINCT s.floor_area_m2), 0), 3) AS kwh_per_m2,
       COUNT(DISTINCT s.site_id) AS sites
FROM sites s
JOIN meters m ON m.site_id = s.site_id
JOIN readings r ON r.meter_id = m.meter_id
WHERE lower(m.meter_type) = 'consumption' AND s.floor_area_m2 IS NOT NULL
GROUP BY s.site_type
