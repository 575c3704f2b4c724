-- Median and 95th percentile interval energy per meter type.
SELECT lower(m.meter_type) AS meter_type,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY r.kwh) AS median_kwh,
       percentile_cont(0.95) WITHIN GROUP (ORDER BY r.kwh) AS p95_kwh
FROM readings r JOIN meters m ON m.meter_id = r.meter_id
GROUP BY lower(m.meter_type)
