-- Solar generation against grid consumption per site.
SELECT m.site_id,
       ROUND(SUM(CASE WHEN lower(m.meter_type) = 'solar' THEN r.kwh END), 2) AS solar_kwh,
       ROUND(SUM(CASE WHEN lower(m.meter_type) = 'consumption' THEN r.kwh END), 2) AS grid_kwh,
       ROUND(SUM(CASE WHEN lower(m.meter_type) = 'solar' THEN r.kwh END)
             / SUM(CASE WHEN lower(m.meter_type) = 'consumption' THEN r.kwh END), 3) AS solar_ratio
FROM meters m
JOIN readings r ON r.meter_id = m.meter_id
GROUP BY m.site_id
HAVING SUM(CASE WHEN lower(m.meter_type) = 'solar' THEN r.kwh END) > 0
