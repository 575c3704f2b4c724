-- Each driver's first and last completed trip and days between them.
SELECT d.driver_id, d.full_name, d.onboarded_on,
       MIN(t.dropoff_at) AS first_trip, MAX(t.dropoff_at) AS last_trip,
       datediff(MAX(t.dropoff_at), MIN(t.dropoff_at)) AS active_days
FROM drivers d
JOIN trips t ON t.driver_id = d.driver_id
WHERE t.status = 'completed'
GROUP BY d.driver_id, d.full_name, d.onboarded_on
