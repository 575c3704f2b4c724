-- Completed trips priced above their city's average completed fare.
SELECT t.trip_id, t.city_id, t.fare
FROM trips t
WHERE t.status = 'completed'
  AND t.fare > (SELECT AVG(t2.fare) FROM trips t2 WHERE t2.city_id = t.city_id AND t2.status = 'completed')
