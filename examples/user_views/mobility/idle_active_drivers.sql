-- Active drivers without any trip in the last 30 days of data.
SELECT d.driver_id, d.full_name, d.city_id
FROM drivers d
WHERE d.status = 'active'
  AND d.driver_id NOT IN (
      SELECT t.driver_id FROM trips t
      WHERE t.driver_id IS NOT NULL
        AND t.requested_at >= (SELECT MAX(requested_at) FROM trips) - INTERVAL 30 DAYS)
