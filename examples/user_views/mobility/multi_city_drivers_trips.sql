-- Trips driven outside the driver's home city.
SELECT d.city_id AS home_city, t.city_id AS trip_city, COUNT(*) AS trips
FROM trips t
JOIN drivers d ON d.driver_id = t.driver_id
WHERE t.city_id <> d.city_id
GROUP BY d.city_id, t.city_id
