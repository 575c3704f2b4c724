-- Demand by local hour of day in each city (requests converted to the city's time zone).
SELECT c.name AS city,
       hour(from_utc_timestamp(t.requested_at, c.time_zone)) AS local_hour,
       COUNT(*) AS requests
FROM trips t JOIN cities c ON t.city_id = c.city_id
GROUP BY c.name, hour(from_utc_timestamp(t.requested_at, c.time_zone))
