-- Each driver's unique riders and trips.
SELECT driver_id, COUNT(DISTINCT rider_id) AS unique_riders, COUNT(*) AS trips
FROM trips
WHERE driver_id IS NOT NULL AND status = 'completed'
GROUP BY driver_id
