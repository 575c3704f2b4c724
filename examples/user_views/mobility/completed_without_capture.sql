-- Completed trips with no captured payment (revenue leakage).
SELECT t.trip_id, t.rider_id, t.fare, t.dropoff_at
FROM trips t
WHERE t.status = 'completed'
  AND NOT EXISTS (SELECT 1 FROM payments p WHERE p.trip_id = t.trip_id AND p.status = 'captured')
