-- Riders who took their next trip in a different city.
SELECT rider_id, COUNT(*) AS city_switches
FROM (
    SELECT rider_id, city_id,
           LEAD(city_id) OVER (PARTITION BY rider_id ORDER BY requested_at, trip_id) AS next_city
    FROM trips
) s
WHERE next_city <> city_id
GROUP BY rider_id
