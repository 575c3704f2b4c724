-- Trips and fares per city and day (UTC).
SELECT c.name AS city, CAST(t.requested_at AS DATE) AS trip_day,
       COUNT(*) AS trips, SUM(t.fare) AS fares
FROM trips t
JOIN cities c ON c.city_id = t.city_id
GROUP BY c.name, CAST(t.requested_at AS DATE)
