-- Average hours between a rider's consecutive requests.
SELECT rider_id,
       COUNT(*) AS gaps,
       ROUND(AVG((unix_timestamp(requested_at) - unix_timestamp(prev_at)) / 3600.0), 2) AS avg_gap_hours
FROM (
    SELECT rider_id, requested_at,
           LAG(requested_at) OVER (PARTITION BY rider_id ORDER BY requested_at, trip_id) AS prev_at
    FROM trips
) x
WHERE prev_at IS NOT NULL
GROUP BY rider_id
