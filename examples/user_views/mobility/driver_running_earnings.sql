-- Driver statement: each completed trip with the driver's running total of fares.
SELECT driver_id, trip_id, dropoff_at, fare,
       SUM(fare) OVER (PARTITION BY driver_id ORDER BY dropoff_at, trip_id) AS running_earnings
FROM trips
WHERE status = 'completed' AND driver_id IS NOT NULL
