-- Completed trips per month and product, per month, and overall.
SELECT date_trunc('MONTH', dropoff_at) AS month, product, COUNT(*) AS trips, SUM(distance_km) AS km
FROM trips
WHERE status = 'completed'
GROUP BY GROUPING SETS ((date_trunc('MONTH', dropoff_at), product), (date_trunc('MONTH', dropoff_at)), ())
