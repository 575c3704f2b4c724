-- Completed trips that received a rating, per city.
SELECT city_id, COUNT(*) AS rated_trips
FROM trips
WHERE status = 'completed'
  AND trip_id IN (SELECT trip_id FROM ratings)
GROUP BY city_id
