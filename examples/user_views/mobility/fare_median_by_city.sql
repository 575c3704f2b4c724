-- Median and 90th percentile fare per city.
SELECT city_id,
       percentile(fare, 0.5) AS median_fare,
       percentile(fare, 0.9) AS p90_fare,
       COUNT(fare) AS trips
FROM trips
WHERE status = 'completed'
GROUP BY city_id
