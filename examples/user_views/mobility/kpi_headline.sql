-- Headline tiles: requests, completed trips, completion rate, gross fares, average fare.
SELECT COUNT(*) AS requests,
       COUNT(CASE WHEN status = 'completed' THEN 1 END) AS completed_trips,
       ROUND(100.0 * COUNT(CASE WHEN status = 'completed' THEN 1 END) / COUNT(*), 1) AS completion_pct,
       SUM(fare) AS gross_fares,
       ROUND(AVG(fare), 2) AS avg_fare
FROM trips
