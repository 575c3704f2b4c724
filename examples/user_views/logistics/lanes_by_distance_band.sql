-- Network: lanes per distance band with their average planned speed.
SELECT CASE
           WHEN distance_km < 100 THEN 'local'
           WHEN distance_km < 500 THEN 'regional'
           WHEN distance_km < 1500 THEN 'national'
           ELSE 'long haul'
       END AS band,
       COUNT(*) AS lanes,
       ROUND(AVG(distance_km / planned_hours), 1) AS avg_kmh
FROM routes
GROUP BY 1
