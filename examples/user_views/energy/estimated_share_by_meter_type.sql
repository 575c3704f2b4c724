-- Share of readings still estimated, per meter type.
SELECT lower(m.meter_type) AS meter_type,
       COUNT(*) AS readings,
       SUM(CASE WHEN lower(r.quality) = 'estimated' THEN 1 ELSE 0 END) AS estimated,
       ROUND(AVG(CASE WHEN lower(r.quality) = 'estimated' THEN 1 ELSE 0 END) * 100, 2) AS estimated_pct
FROM readings r JOIN meters m ON m.meter_id = r.meter_id
GROUP BY lower(m.meter_type)
