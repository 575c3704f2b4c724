-- Voltage statistics per region.
SELECT s.region,
       ROUND(AVG(r.voltage), 2) AS avg_v,
       ROUND(STDDEV(r.voltage), 3) AS sd_v,
       MIN(r.voltage) AS min_v,
       MAX(r.voltage) AS max_v
FROM readings r, meters m, sites s
WHERE r.meter_id = m.meter_id AND m.site_id = s.site_id AND r.voltage IS NOT NULL
GROUP BY s.region
