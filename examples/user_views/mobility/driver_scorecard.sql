-- Driver scorecard: trips, cancellations, tips and rating, with vehicle.
WITH trip_stats AS (
    SELECT driver_id,
           COUNT(*) FILTER (WHERE status = 'completed') AS completed,
           COUNT(*) FILTER (WHERE status = 'cancelled') AS cancelled
    FROM trips
    WHERE driver_id IS NOT NULL
    GROUP BY driver_id
), tip_stats AS (
    SELECT t.driver_id, SUM(p.tip) AS tips
    FROM payments p JOIN trips t ON t.trip_id = p.trip_id
    WHERE p.status = 'captured'
    GROUP BY t.driver_id
)
SELECT d.driver_id, d.full_name, v.make, v.model,
       COALESCE(s.completed, 0) AS completed, COALESCE(s.cancelled, 0) AS cancelled,
       COALESCE(tp.tips, 0) AS tips, d.rating
FROM drivers d
LEFT JOIN vehicles v ON v.vehicle_id = d.vehicle_id
LEFT JOIN trip_stats s ON s.driver_id = d.driver_id
LEFT JOIN tip_stats tp ON tp.driver_id = d.driver_id
