-- Histogram: parcels per weight band.
SELECT CASE
           WHEN weight_kg IS NULL THEN 'unknown'
           WHEN weight_kg < 1 THEN '<1 kg'
           WHEN weight_kg < 5 THEN '1-5 kg'
           WHEN weight_kg < 20 THEN '5-20 kg'
           ELSE '20+ kg'
       END AS band,
       COUNT(*) AS parcels,
       ROUND(AVG(weight_kg), 2) AS avg_kg
FROM parcels
GROUP BY 1
