-- Daily completed trips with a 7-day moving average.
SELECT trip_day, trips,
       ROUND(AVG(trips) OVER (ORDER BY trip_day ROWS BETWEEN 6 PRECEDING AND CURRENT ROW), 2) AS avg_7d
FROM (
    SELECT to_date(dropoff_at) AS trip_day, COUNT(*) AS trips
    FROM trips
    WHERE status = 'completed'
    GROUP BY to_date(dropoff_at)
) d
