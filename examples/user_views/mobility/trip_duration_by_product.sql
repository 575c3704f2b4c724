-- Average ride minutes and speed per product.
SELECT product,
       ROUND(AVG(timestampdiff(MINUTE, pickup_at, dropoff_at)), 1) AS avg_minutes,
       ROUND(SUM(distance_km) / (SUM(unix_timestamp(dropoff_at) - unix_timestamp(pickup_at)) / 3600), 1) AS avg_kmh
FROM trips
WHERE status = 'completed'
GROUP BY product
