-- Fleet by make: vehicles, average model year, seats, electric count.
SELECT upper(make) AS make,
       COUNT(*) AS vehicles,
       ROUND(AVG(model_year), 1) AS avg_year,
       SUM(seats) AS seats,
       COUNT_IF(is_electric) AS electric
FROM vehicles
GROUP BY upper(make)
